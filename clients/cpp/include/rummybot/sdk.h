// The C++ bot SDK: connect to a referee, be seated, answer decisions.
//
// A bot derives from rummybot::Bot and overrides decide(view, legal, request); returning one of `legal` is
// always accepted. rummybot::main(bot, argc, argv) reads the standard command line and plays: with
// --bot-token match after match until the referee closes the stream, or with --match and --token one seat,
// returning once that match has ended.
//
//   class FirstLegal : public rummybot::Bot {
//     pb::Action decide(const pb::SeatView&, const rummybot::Actions& legal, const rummybot::Request&) override {
//       return legal[0];
//     }
//   };
//   int main(int argc, char** argv) { FirstLegal bot; return rummybot::main(bot, argc, argv); }
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rummy/referee/v1/referee.grpc.pb.h"
#include "rummy/referee/v1/referee.pb.h"
#include "rummybot/cards.h"

namespace rummybot {

namespace pb = ::rummy::referee::v1;

/// Sent in Join.sdk, for the referee's logs.
inline constexpr const char* kSdkVersion = "cpp/0.1.0";

/// The legal actions of a decision, as the referee listed them.
using Actions = google::protobuf::RepeatedPtrField<pb::Action>;

/// One decision: which match and seat, the phase, the time left; `raw` is the whole DecisionRequest.
struct Request {
  std::string match_id;
  std::uint64_t request_id = 0;
  std::uint32_t seat = 0;
  pb::Phase phase = pb::PHASE_UNSPECIFIED;
  std::uint32_t time_left_ms = 0;
  pb::DecisionRequest raw;
};

/// A bot: decide() is required, the hooks are optional. All calls come from one thread, in arrival order.
class Bot {
 public:
  virtual ~Bot() = default;

  /// The action to answer `request` with.
  virtual pb::Action decide(const pb::SeatView& view, const Actions& legal, const Request& request) = 0;

  explicit Bot(std::string name = "bot") : name_(std::move(name)) {}

  /// Sent in Join.bot_name; --name overrides it.
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  /// --seed (or RUMMY_BOT_SEED), for bots with random choices of their own.
  virtual void set_seed(std::uint64_t /*seed*/) {}

  /// A new match starts for this bot.
  virtual void on_seated(const pb::Seated& /*seated*/) {}
  /// Something happened that this seat may see.
  virtual void on_event(const pb::MatchEvent& /*event*/) {}
  /// A hand of a match ended.
  virtual void on_hand_result(const pb::HandResult& /*result*/) {}
  /// The referee rejected the answer to `request`. Return another action to answer again before the deadline,
  /// or nothing to wait (then the referee's deadline rule applies). The default prints
  /// "rejected CODE: message" to stderr and answers nothing: a bot should see its mistakes, not have them
  /// papered over by a substitute move.
  virtual std::optional<pb::Action> on_rejected(const std::string& code, const std::string& message,
                                                const Request& request);
  /// A match ended.
  virtual void on_match_result(const pb::MatchResult& /*result*/) {}

 private:
  std::string name_;
};

/// How to connect; parse_args() fills it from the command line and the RUMMY_* environment variables.
struct Options {
  std::string referee = "127.0.0.1:50051";  // --referee HOST:PORT or unix:/PATH, or RUMMY_REFEREE
  std::string bot_token;                    // --bot-token, or RUMMY_BOT_TOKEN: match after match
  std::string match_id;                     // --match, or RUMMY_MATCH: one seat (with seat_token)
  std::string seat_token;                   // --token, or RUMMY_SEAT_TOKEN
  std::string name;                         // --name: overrides Bot::name()
  std::optional<std::uint64_t> seed;        // --seed, or RUMMY_BOT_SEED
  // --reconnect-forever, or RUMMY_RECONNECT=forever: with a bot token, once a referee welcomed the bot, join again
  // without end when the stream drops (a ladder's restart), waiting 0.25 s doubling to 30 s, jittered
  bool reconnect_forever = false;
  // TLS: --tls (or RUMMY_TLS=1) trusts gRPC's default roots; --tls-root-cert PEM (or RUMMY_TLS_ROOT_CERT) this CA;
  // --tls-client-cert and --tls-client-key (RUMMY_TLS_CLIENT_CERT, RUMMY_TLS_CLIENT_KEY): mutual TLS
  bool tls = false;
  std::string tls_root_cert;
  std::string tls_client_cert;
  std::string tls_client_key;
  std::vector<std::string> extra;           // arguments the SDK does not know, left for the bot's own flags
  bool help = false;                        // -h or --help: print kUsage and exit
};

/// The variable read for --reconnect-forever.
inline constexpr const char* kReconnectEnv = "RUMMY_RECONNECT";

/// RUMMY_RECONNECT's value (nullptr: unset): "forever" is true, unset or empty false; anything else throws
/// std::invalid_argument naming the variable, so that a typo is told rather than taken for "no".
bool reconnect_forever_from_env(const char* value);

/// The waits between joins when reconnecting forever: 0.25 s doubling to 30 s.
inline constexpr std::chrono::milliseconds kReconnectInitial{250};
inline constexpr std::chrono::milliseconds kReconnectCap{30000};

/// The attempt-th wait (from 1) before jitter: `first` doubling to `cap`.
std::chrono::milliseconds backoff_ceiling(std::chrono::milliseconds first, std::chrono::milliseconds cap, int attempt);

/// The attempt-th wait: backoff_ceiling(), then a random part (half to all) of it, so that the bots of a ladder
/// that restarted do not all knock at once.
std::chrono::milliseconds backoff(std::chrono::milliseconds first, std::chrono::milliseconds cap, int attempt);

/// The standard flags, for --help.
inline constexpr std::string_view kUsage =
    "  --referee ADDRESS     the referee, HOST:PORT or unix:/PATH (RUMMY_REFEREE; default 127.0.0.1:50051)\n"
    "  --bot-token T         play match after match (RUMMY_BOT_TOKEN)\n"
    "  --match ID --token T  play one seat of one match (RUMMY_MATCH, RUMMY_SEAT_TOKEN)\n"
    "  --name N              the bot's name in Join\n"
    "  --seed S              seed for the bot's own random choices (RUMMY_BOT_SEED)\n"
    "  --reconnect-forever   with a bot token: once welcomed, join again without end when the referee goes away\n"
    "                        (a ladder's restart), 0.25 s doubling to 30 s (RUMMY_RECONNECT=forever)\n"
    "  --tls                 connect with TLS, trusting the system's roots (RUMMY_TLS=1)\n"
    "  --tls-root-cert PEM   connect with TLS, trusting this CA (RUMMY_TLS_ROOT_CERT)\n"
    "  --tls-client-cert PEM --tls-client-key PEM\n"
    "                        mutual TLS: this bot's certificate and key (RUMMY_TLS_CLIENT_CERT, RUMMY_TLS_CLIENT_KEY)\n"
    "The tournament runner passes tokens only in the environment: a flag is readable by every process.\n";

/// Reads the standard command line; throws std::invalid_argument for a flag missing its value, a bad seed, a
/// RUMMY_RECONNECT other than "forever", or a client certificate without its key.
Options parse_args(int argc, const char* const* argv);

/// Plays until the referee closes the stream (bot-token mode) or the one match ends (seat mode). Returns the
/// process exit code: 0 when play ended normally (or, with a bot token, when the referee went away after
/// welcoming the bot), 1 on an error, printed to stderr as one line naming the referee's address (with nothing
/// listening there: `NAME: cannot reach the referee at ADDRESS: ...`), 2 with no credential to join with.
/// With options.reconnect_forever (bot-token mode) a stream that drops after a referee welcomed the bot is joined
/// again without end, one line on stderr per try (naming the address, never the token); the Join names each
/// match's last event seen, so the bot sees each event and each decision once. A final answer (a revoked key)
/// still ends it.
int run(Bot& bot, const Options& options);

/// parse_args() then run(), with errors printed to stderr: `return rummybot::main(bot, argc, argv);`.
/// Unknown arguments are refused; a bot with flags of its own calls parse_args() and run() itself.
int main(Bot& bot, int argc, const char* const* argv);

}  // namespace rummybot
