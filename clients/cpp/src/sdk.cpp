#include "rummybot/sdk.h"

#include <grpcpp/grpcpp.h>

#include <cctype>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>

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

/// One Play stream: answers decisions in arrival order and calls the bot's hooks, keeping per-match state.
class Session {
 public:
  Session(Bot& bot, Stream& stream, std::string only_match)
      : bot_(bot), stream_(stream), only_match_(std::move(only_match)) {}

  /// Handles one referee message; false once the one match of seat mode has ended.
  bool handle(const pb::PlayResponse& message) {
    switch (message.body_case()) {
      case pb::PlayResponse::kWelcome:
        welcomed_ = true;
        break;
      case pb::PlayResponse::kSeated:
        bot_.on_seated(message.seated());
        break;
      case pb::PlayResponse::kEvent:
        bot_.on_event(message.event());
        break;
      case pb::PlayResponse::kDecision:
        decide(message.decision());
        break;
      case pb::PlayResponse::kRejected:
        rejected(message.rejected());
        break;
      case pb::PlayResponse::kAccepted: {
        const auto& accepted = message.accepted();
        pending_[accepted.match_id()].erase(accepted.request_id());
        break;
      }
      case pb::PlayResponse::kHandResult:
        bot_.on_hand_result(message.hand_result());
        break;
      case pb::PlayResponse::kMatchResult: {
        const auto& result = message.match_result();
        pending_.erase(result.match_id());
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

 private:
  void decide(const pb::DecisionRequest& decision) {
    Request request{decision.match_id(), decision.request_id(), decision.view().seat(), decision.phase(),
                    decision.time_left_ms(), decision};
    // A new decision supersedes whatever this match was still waiting on.
    auto& match = pending_[decision.match_id()];
    match.clear();
    const Request& stored = match.emplace(request.request_id, std::move(request)).first->second;
    try {
      send(stored, bot_.decide(stored.raw.view(), stored.raw.legal_actions(), stored));
    } catch (const std::exception& error) {
      // No substitute move: the referee's deadline rule decides, and the bug shows.
      std::cerr << bot_.name() << ": decide failed for request " << stored.request_id << ": " << error.what()
                << std::endl;
    }
  }

  void rejected(const pb::ActionRejected& rejection) {
    auto& match = pending_[rejection.match_id()];
    auto found = match.find(rejection.request_id());
    Request unknown{rejection.match_id(), rejection.request_id(), 0, pb::PHASE_UNSPECIFIED, 0, {}};
    const Request& request = found != match.end() ? found->second : unknown;
    if (auto retry = bot_.on_rejected(rejection.code(), rejection.message(), request)) send(request, *retry);
  }

  void send(const Request& request, const pb::Action& action) {
    pb::PlayRequest message;
    auto* answer = message.mutable_action();
    answer->set_match_id(request.match_id);
    answer->set_request_id(request.request_id);
    *answer->mutable_action() = action;
    stream_.Write(message);  // a broken stream shows on the next Read
  }

  Bot& bot_;
  Stream& stream_;
  const std::string only_match_;
  std::map<std::string, std::map<std::uint64_t, Request>> pending_;  // match id -> request id -> decision
  bool welcomed_ = false;
};

}  // namespace

std::optional<pb::Action> Bot::on_rejected(const std::string& code, const std::string& message,
                                           const Request& /*request*/) {
  std::cerr << "rejected " << code << ": " << message << std::endl;
  return std::nullopt;
}

Options parse_args(int argc, const char* const* argv) {
  Options options;
  std::string seed_text;
  bool mode_given = false;
  const std::map<std::string, std::string*> flags = {
      {"--referee", &options.referee}, {"--bot-token", &options.bot_token}, {"--match", &options.match_id},
      {"--token", &options.seat_token}, {"--name", &options.name},          {"--seed", &seed_text},
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

  auto stub = pb::RefereeService::NewStub(grpc::CreateChannel(options.referee, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = stub->Play(&context);
  Session session(bot, *stream, one_seat ? options.match_id : std::string());
  bool match_over = false;
  if (stream->Write(hello)) {
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
