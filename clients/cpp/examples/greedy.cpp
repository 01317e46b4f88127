// The example bot: greedy Indian rummy (examples/indian_policy.cpp), the first listed action elsewhere.
//
//   build/greedy --referee HOST:PORT --bot-token T        match after match
//   build/greedy --referee HOST:PORT --match ID --token T  one seat
//
// --probe-rejection shows the rejection path: the bot's first DRAW-phase answer in each match is a Discard of a
// card it does not hold; the SDK's default on_rejected prints "rejected CODE: message", and then this bot
// answers that same request again with its greedy choice (it re-answers only its own probe).
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "indian_policy.h"
#include "rummybot/sdk.h"

namespace {

namespace pb = ::rummy::referee::v1;

template <typename Values>
std::string list_text(const Values& values) {
  std::ostringstream out;
  out << '[';
  for (int i = 0; i < values.size(); ++i) out << (i > 0 ? ", " : "") << values[i];
  out << ']';
  return out.str();
}

/// A Discard of the first card of a standard pack that is not in `hand` (a 13-card hand cannot hold all 52).
pb::Action discard_not_held(const pb::SeatView& view) {
  for (int suit = pb::SUIT_SPADES; suit <= pb::SUIT_CLUBS; ++suit) {
    for (int rank = pb::RANK_ACE; rank <= pb::RANK_KING; ++rank) {
      const pb::Card card = rummybot::make_card(static_cast<pb::Rank>(rank), static_cast<pb::Suit>(suit));
      bool held = false;
      for (const pb::Card& c : view.hand()) held = held || rummybot::same_card(c, card);
      if (!held) {
        pb::Action action;
        *action.mutable_discard()->mutable_card() = card;
        return action;
      }
    }
  }
  return pb::Action();  // an empty action is just as illegal
}

class GreedyBot : public rummybot::Bot {
 public:
  explicit GreedyBot(bool probe_rejection) : Bot("cpp-greedy"), probe_rejection_(probe_rejection) {}

  pb::Action decide(const pb::SeatView& view, const rummybot::Actions& legal,
                    const rummybot::Request& request) override {
    if (probe_rejection_ && request.phase == pb::PHASE_DRAW && probes_.count(request.match_id) == 0) {
      probes_[request.match_id] = request.request_id;
      pb::Action probe = discard_not_held(view);
      std::cerr << "probe: answering request " << request.request_id << " of match " << request.match_id
                << " with an illegal Discard of " << rummybot::card_text(probe.discard().card()) << std::endl;
      return probe;
    }
    return greedy::choose(view, legal);
  }

  std::optional<pb::Action> on_rejected(const std::string& code, const std::string& message,
                                        const rummybot::Request& request) override {
    Bot::on_rejected(code, message, request);  // prints "rejected CODE: message"
    const auto probe = probes_.find(request.match_id);
    if (probe == probes_.end() || probe->second != request.request_id || !request.raw.has_view()) {
      return std::nullopt;
    }
    probe->second = 0;  // answer the probe once
    return greedy::choose(request.raw.view(), request.raw.legal_actions());
  }

  void on_seated(const pb::Seated& seated) override { seats_[seated.match_id()] = seated.seat(); }

  void on_match_result(const pb::MatchResult& result) override {
    std::ostringstream ranking;
    ranking << '[';
    for (int i = 0; i < result.ranking_size(); ++i) {
      ranking << (i > 0 ? ", " : "") << list_text(result.ranking(i).seats());
    }
    ranking << ']';
    std::cerr << "match " << result.match_id() << " ended: ranking " << ranking.str() << " totals "
              << list_text(result.totals()) << " (" << result.reason() << ")";
    if (const auto seat = seats_.find(result.match_id()); seat != seats_.end()) {
      std::cerr << ", our seat " << seat->second;
    }
    std::cerr << std::endl;
    seats_.erase(result.match_id());
    probes_.erase(result.match_id());
  }

 private:
  const bool probe_rejection_;
  std::map<std::string, std::uint64_t> probes_;  // match id -> the probed request (0 once answered)
  std::map<std::string, std::uint32_t> seats_;   // match id -> our seat
};

}  // namespace

int main(int argc, char** argv) {
  try {
    rummybot::Options options = rummybot::parse_args(argc, argv);
    bool probe_rejection = false;
    for (const std::string& arg : options.extra) {
      if (arg != "--probe-rejection") {
        std::cerr << "greedy: unknown argument " << arg << "\n" << rummybot::kUsage;
        return 2;
      }
      probe_rejection = true;
    }
    if (options.help) {
      std::cout << "usage: " << argv[0] << " [flags] [--probe-rejection]\n" << rummybot::kUsage
                << "  --probe-rejection     answer the first DRAW decision of each match illegally, then play on\n";
      return 0;
    }
    GreedyBot bot(probe_rejection);
    return rummybot::run(bot, options);
  } catch (const std::invalid_argument& error) {
    std::cerr << "greedy: " << error.what() << "\n" << rummybot::kUsage;
    return 2;
  }
}
