#include "rummybot/sdk.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace rummybot {
namespace {

using Stream = grpc::ClientReaderWriter<pb::PlayRequest, pb::PlayResponse>;

std::string env_or(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

std::optional<std::uint64_t> parse_seed(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  try {
    return std::stoull(text);
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
}

std::string status_text(const grpc::Status& status) {
  static constexpr const char* kNames[] = {
      "OK",          "CANCELLED",         "UNKNOWN",          "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
      "OUT_OF_RANGE", "UNIMPLEMENTED",     "INTERNAL",         "UNAVAILABLE",      "DATA_LOSS",         "UNAUTHENTICATED"};
  const auto code = static_cast<std::size_t>(status.error_code());
  return std::string(code < std::size(kNames) ? kNames[code] : "UNKNOWN") + ": " + status.error_message();
}

std::string one_line(const std::string& text) {
  std::string out;
  bool space = false;
  for (const char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      out += c;
      space = false;
    }
  }
  return out;
}

/// `cannot reach the referee at ADDRESS: why`, one line: gRPC's own text ("failed to connect to all addresses")
/// may not name the address as the bot was given it.
std::string unreachable_text(const std::string& address, const grpc::Status& status) {
  return "cannot reach the referee at " + address + ": " + one_line(status.error_message());
}

/// A bot's Play streams: answers decisions in arrival order and calls the bot's hooks, keeping per-match state;
/// across reconnects, what was seen (each match's last event, the matches seated and finished) and answered, so
/// the bot hears each message once.
class Session {
 public:
  Session(Bot& bot, std::string only_match) : bot_(bot), only_match_(std::move(only_match)) {}

  /// A new stream: the messages that follow come from it, and answers go to it.
  void begin(Stream& stream) {
    stream_ = &stream;
    joined_ = false;
  }

  /// Each match seated and not finished, with the last event seen (Join.resume).
  void add_resume(pb::Join* join) const {
    for (const std::string& match : seated_) {
      if (finished_.count(match) != 0) continue;
      auto* point = join->add_resume();
      point->set_match_id(match);
      const auto seq = last_seq_.find(match);
      point->set_last_seq(seq == last_seq_.end() ? 0 : seq->second);
    }
  }

  /// Handles one referee message; false once the one match of seat mode has ended.
  bool handle(const pb::PlayResponse& message) {
    switch (message.body_case()) {
      case pb::PlayResponse::kWelcome:
        welcomed_ = joined_ = true;
        break;
      case pb::PlayResponse::kSeated:
        if (seated_.insert(message.seated().match_id()).second) bot_.on_seated(message.seated());  // told once
        break;
      case pb::PlayResponse::kEvent: {
        const auto& event = message.event();
        // seq: this seat's n-th event of the match, the same across reconnects (Join.resume names it)
        if (event.seq() > 0) {
          auto& seen = last_seq_[event.match_id()];
          if (event.seq() <= seen) break;  // resent after a rejoin, and seen before it
          seen = event.seq();
        }
        bot_.on_event(event);
        break;
      }
      case pb::PlayResponse::kDecision:
        decide(message.decision());
        break;
      case pb::PlayResponse::kRejected:
        rejected(message.rejected());
        break;
      case pb::PlayResponse::kAccepted: {
        const auto& accepted = message.accepted();
        pending_[accepted.match_id()].erase(accepted.request_id());
        sent_[accepted.match_id()].erase(accepted.request_id());
        break;
      }
      case pb::PlayResponse::kHandResult:
        bot_.on_hand_result(message.hand_result());
        break;
      case pb::PlayResponse::kMatchResult: {
        const auto& result = message.match_result();
        if (!finished_.insert(result.match_id()).second) break;  // told again after a rejoin
        pending_.erase(result.match_id());
        sent_.erase(result.match_id());
        last_seq_.erase(result.match_id());
        bot_.on_match_result(result);
        return only_match_.empty() || result.match_id() != only_match_;
      }
      case pb::PlayResponse::kBatch:  // only to a client whose Join set batch, which this SDK does not
      case pb::PlayResponse::BODY_NOT_SET:
        break;
    }
    return true;
  }

  /// Whether the referee ever answered: an UNAVAILABLE stream before that means it could not be reached.
  bool welcomed() const { return welcomed_; }
  /// Whether the current stream was welcomed (its drop waits from the start again).
  bool joined() const { return joined_; }

 private:
  void decide(const pb::DecisionRequest& decision) {
    auto& answered = sent_[decision.match_id()];
    if (const auto again = answered.find(decision.request_id()); again != answered.end()) {
      send(decision.match_id(), decision.request_id(), again->second);  // asked again after a rejoin
      return;
    }
    Request request{decision.match_id(), decision.request_id(), decision.view().seat(), decision.phase(),
                    decision.time_left_ms(), decision};
    // A new decision supersedes whatever this match was still waiting on.
    auto& match = pending_[decision.match_id()];
    match.clear();
    answered.clear();
    const Request& stored = match.emplace(request.request_id, std::move(request)).first->second;
    try {
      send(stored.match_id, stored.request_id, bot_.decide(stored.raw.view(), stored.raw.legal_actions(), stored));
    } catch (const std::exception& error) {
      // No substitute move: the referee's deadline rule decides, and the bug shows.
      std::cerr << bot_.name() << ": decide failed for request " << stored.request_id << ": " << error.what()
                << std::endl;
    }
  }

  void rejected(const pb::ActionRejected& rejection) {
    sent_[rejection.match_id()].erase(rejection.request_id());
    auto& match = pending_[rejection.match_id()];
    auto found = match.find(rejection.request_id());
    Request unknown{rejection.match_id(), rejection.request_id(), 0, pb::PHASE_UNSPECIFIED, 0, {}};
    const Request& request = found != match.end() ? found->second : unknown;
    if (auto retry = bot_.on_rejected(rejection.code(), rejection.message(), request)) {
      send(request.match_id, request.request_id, *retry);
    }
  }

  void send(const std::string& match_id, std::uint64_t request_id, const pb::Action& action) {
    sent_[match_id][request_id] = action;
    pb::PlayRequest message;
    auto* answer = message.mutable_action();
    answer->set_match_id(match_id);
    answer->set_request_id(request_id);
    *answer->mutable_action() = action;
    stream_->Write(message);  // a broken stream shows on the next Read
  }

  Bot& bot_;
  Stream* stream_ = nullptr;
  const std::string only_match_;
  std::map<std::string, std::map<std::uint64_t, Request>> pending_;  // match id -> request id -> decision
  std::map<std::string, std::map<std::uint64_t, pb::Action>> sent_;  // ... -> the answer, sent again if asked again
  std::map<std::string, std::uint64_t> last_seq_;
  std::set<std::string> seated_;
  std::set<std::string> finished_;
  bool welcomed_ = false;
  bool joined_ = false;
};

/// Worth joining again (reconnecting forever, after a welcome): the stream dropped (the network, a referee
/// restarting: UNAVAILABLE, or INTERNAL), or a referee's limit was hit (every bot of a ladder joining at once
/// after its restart). Anything else (a revoked key) is final.
bool retryable(const grpc::Status& status) {
  const auto code = status.error_code();
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::INTERNAL ||
         code == grpc::StatusCode::RESOURCE_EXHAUSTED;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read the TLS file " + path);
  return text.str();
}

/// TLS with the options' CA (gRPC's default roots without one) and client certificate, or plaintext.
std::shared_ptr<grpc::ChannelCredentials> channel_credentials(const Options& options) {
  if (!options.tls && options.tls_root_cert.empty() && options.tls_client_cert.empty()) {
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  if (!options.tls_root_cert.empty()) ssl.pem_root_certs = read_file(options.tls_root_cert);
  if (!options.tls_client_cert.empty()) {
    ssl.pem_cert_chain = read_file(options.tls_client_cert);
    ssl.pem_private_key = read_file(options.tls_client_key);
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace

std::optional<pb::Action> Bot::on_rejected(const std::string& code, const std::string& message,
                                           const Request& /*request*/) {
  std::cerr << "rejected " << code << ": " << message << std::endl;
  return std::nullopt;
}

bool reconnect_forever_from_env(const char* value) {
  std::string text = one_line(value == nullptr ? "" : value);
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  if (text.empty()) return false;
  if (text == "forever") return true;
  throw std::invalid_argument(std::string(kReconnectEnv) + " is 'forever' or unset, not \"" + value + "\"");
}

std::chrono::milliseconds backoff_ceiling(std::chrono::milliseconds first, std::chrono::milliseconds cap,
                                          int attempt) {
  std::chrono::milliseconds wait = first;
  for (int i = 1; i < attempt && wait < cap; ++i) wait *= 2;
  return std::min(wait, cap);
}

std::chrono::milliseconds backoff(std::chrono::milliseconds first, std::chrono::milliseconds cap, int attempt) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  const auto ceiling = backoff_ceiling(first, cap, attempt).count();
  std::uniform_int_distribution<long long> part(ceiling / 2, ceiling);
  return std::chrono::milliseconds(part(random));
}

Options parse_args(int argc, const char* const* argv) {
  Options options;
  std::string seed_text;
  bool mode_given = false;
  const std::map<std::string, std::string*> flags = {
      {"--referee", &options.referee}, {"--bot-token", &options.bot_token}, {"--match", &options.match_id},
      {"--token", &options.seat_token}, {"--name", &options.name},          {"--seed", &seed_text},
      {"--tls-root-cert", &options.tls_root_cert}, {"--tls-client-cert", &options.tls_client_cert},
      {"--tls-client-key", &options.tls_client_key},
  };
  options.referee = env_or("RUMMY_REFEREE", options.referee);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<std::string> value;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      continue;
    }
    if (arg == "--reconnect-forever" && !value) {
      options.reconnect_forever = true;
      continue;
    }
    if (arg == "--tls" && !value) {
      options.tls = true;
      continue;
    }
    const auto flag = flags.find(arg);
    if (flag == flags.end()) {
      options.extra.emplace_back(argv[i]);
      continue;
    }
    if (!value) {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      value = argv[++i];
    }
    *flag->second = *value;
    mode_given = mode_given || arg == "--bot-token" || arg == "--match";
  }
  if (!mode_given) {  // the environment says how to connect only when the command line does not
    options.match_id = env_or("RUMMY_MATCH", "");
    options.bot_token = env_or("RUMMY_BOT_TOKEN", "");
  }
  if (options.seat_token.empty()) options.seat_token = env_or("RUMMY_SEAT_TOKEN", "");
  options.reconnect_forever = options.reconnect_forever || reconnect_forever_from_env(std::getenv(kReconnectEnv));
  options.tls = options.tls || !env_or("RUMMY_TLS", "").empty();
  if (options.tls_root_cert.empty()) options.tls_root_cert = env_or("RUMMY_TLS_ROOT_CERT", "");
  if (options.tls_client_cert.empty()) options.tls_client_cert = env_or("RUMMY_TLS_CLIENT_CERT", "");
  if (options.tls_client_key.empty()) options.tls_client_key = env_or("RUMMY_TLS_CLIENT_KEY", "");
  if (options.tls_client_cert.empty() != options.tls_client_key.empty()) {
    throw std::invalid_argument("a client certificate and its key go together");
  }
  if (!seed_text.empty()) {
    options.seed = parse_seed(seed_text);
    if (!options.seed) throw std::invalid_argument("--seed needs a non-negative integer, not '" + seed_text + "'");
  } else {
    options.seed = parse_seed(env_or("RUMMY_BOT_SEED", ""));  // a non-numeric env seed is ignored
  }
  return options;
}

int run(Bot& bot, const Options& options) {
  if (!options.name.empty()) bot.set_name(options.name);
  if (options.seed) bot.set_seed(*options.seed);

  pb::PlayRequest hello;
  pb::Join* join = hello.mutable_join();
  join->set_bot_name(bot.name());
  join->set_sdk(kSdkVersion);
  const bool one_seat = !options.match_id.empty();  // a match id wins, as in the Python SDK
  if (one_seat && !options.seat_token.empty()) {
    join->mutable_seat()->set_match_id(options.match_id);
    join->mutable_seat()->set_token(options.seat_token);
  } else if (!one_seat && !options.bot_token.empty()) {
    join->set_bot_token(options.bot_token);
  } else {
    std::cerr << bot.name() << ": give RUMMY_BOT_TOKEN (or --bot-token T), or RUMMY_MATCH and RUMMY_SEAT_TOKEN (or "
              << "--match ID --token T)" << std::endl;
    return 2;
  }

  std::shared_ptr<grpc::ChannelCredentials> credentials;
  try {
    credentials = channel_credentials(options);
  } catch (const std::runtime_error& error) {
    std::cerr << bot.name() << ": " << error.what() << std::endl;
    return 1;
  }
  const bool forever = options.reconnect_forever && !one_seat;
  Session session(bot, one_seat ? options.match_id : std::string());
  for (int attempt = 0;;) {
    pb::PlayRequest join_now = hello;
    session.add_resume(join_now.mutable_join());
    // A channel of its own subchannels each join: gRPC's shared pool would hand it the old connection in its
    // backoff (growing to 120 s), so a bot would come back long after its referee did.
    grpc::ChannelArguments arguments;
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto stub = pb::RefereeService::NewStub(grpc::CreateCustomChannel(options.referee, credentials, arguments));
    grpc::ClientContext context;
    std::unique_ptr<Stream> stream = stub->Play(&context);
    session.begin(*stream);
    bool match_over = false;
    if (stream->Write(join_now)) {
      pb::PlayResponse message;
      while (stream->Read(&message)) {
        if (!session.handle(message)) {
          match_over = true;
          break;
        }
      }
    }
    if (match_over) {
      context.TryCancel();  // seat mode: our match is over, so is the stream
      stream->Finish();
      return 0;
    }
    const grpc::Status status = stream->Finish();
    attempt = session.joined() ? 1 : attempt + 1;  // a welcomed stream's drop waits from the start again
    if (forever && session.welcomed() && retryable(status)) {
      const auto wait = backoff(kReconnectInitial, kReconnectCap, attempt);
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.1f", static_cast<double>(wait.count()) / 1000.0);
      std::cerr << bot.name() << ": no stream to the referee at " << options.referee << " ("
                << one_line(status_text(status)) << "); joining again in " << seconds << " s (try " << attempt << ")"
                << std::endl;
      std::this_thread::sleep_for(wait);
      continue;
    }
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE && !session.welcomed()) {
      std::cerr << bot.name() << ": " << unreachable_text(options.referee, status) << std::endl;
      return 1;
    }
    const bool closed_by_referee = status.ok() || status.error_code() == grpc::StatusCode::CANCELLED ||
                                   status.error_code() == grpc::StatusCode::UNAVAILABLE;
    if (closed_by_referee && !one_seat) return 0;
    std::cerr << bot.name() << ": "
              << one_line(status.ok() ? "the referee closed the stream before the match ended" : status_text(status))
              << " (referee " << options.referee << ")" << std::endl;
    return 1;
  }
}

int main(Bot& bot, int argc, const char* const* argv) {
  try {
    const Options options = parse_args(argc, argv);
    if (options.help) {
      std::cout << "usage: " << argv[0] << " [flags]\n" << kUsage;
      return 0;
    }
    if (!options.extra.empty()) {
      std::cerr << bot.name() << ": unknown argument " << options.extra.front() << "\n" << kUsage;
      return 2;
    }
    return run(bot, options);
  } catch (const std::invalid_argument& error) {
    std::cerr << bot.name() << ": " << error.what() << "\n" << kUsage;
    return 2;
  }
}

}  // namespace rummybot
