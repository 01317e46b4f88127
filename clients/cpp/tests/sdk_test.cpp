// Plain checks run by build.sh (ctest): card notation, the command line, and the greedy policy's key choices.
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

#include "../examples/indian_policy.h"
#include "rummybot/sdk.h"

namespace {

namespace pb = ::rummy::referee::v1;
int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "FAIL: " << what << std::endl;
    ++failures;
  }
}

void card_notation() {
  for (const char* text : {"AS", "2C", "9D", "TH", "JS", "QS", "KC", "JK"}) {
    check(rummybot::card_text(rummybot::parse_card(text)) == text, std::string("round trip of ") + text);
  }
  check(rummybot::same_card(rummybot::parse_card("10h"), rummybot::make_card(pb::RANK_TEN, pb::SUIT_HEARTS)),
        "10h reads as TH");
  check(rummybot::parse_card("JK").suit() == pb::SUIT_NONE, "a joker has no suit");
  check(rummybot::cards_text(rummybot::parse_cards("AH, 2H 3H")) == "AH 2H 3H", "parse_cards and cards_text");
  for (const char* bad : {"", "X", "1S", "QX", "JKS", "AAH"}) {
    bool threw = false;
    try {
      rummybot::parse_card(bad);
    } catch (const std::invalid_argument&) {
      threw = true;
    }
    check(threw, std::string("refuses '") + bad + "'");
  }
}

void command_line() {
  const char* argv[] = {"bot", "--referee", "h:1", "--match=M", "--token", "T", "--seed", "7", "--probe-rejection"};
  const rummybot::Options options = rummybot::parse_args(9, argv);
  check(options.referee == "h:1" && options.match_id == "M" && options.seat_token == "T", "flags are read");
  check(options.seed == 7u, "--seed is read");
  check(options.extra.size() == 1 && options.extra[0] == "--probe-rejection", "unknown flags are left over");
}

void reconnect_forever() {
  using std::chrono::milliseconds;
  const long long expected[] = {250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000};
  for (int attempt = 1; attempt <= 10; ++attempt) {
    check(rummybot::backoff_ceiling(rummybot::kReconnectInitial, rummybot::kReconnectCap, attempt).count() ==
              expected[attempt - 1],
          "the wait doubles from 0.25 s to its cap of 30 s, try " + std::to_string(attempt));
  }
  check(rummybot::backoff_ceiling(milliseconds(250), milliseconds(30000), 5000) == milliseconds(30000), "no overflow");
  for (const int attempt : {1, 3, 8, 40}) {
    const auto ceiling = rummybot::backoff_ceiling(milliseconds(250), milliseconds(30000), attempt);
    bool varied = false;
    const auto first = rummybot::backoff(milliseconds(250), milliseconds(30000), attempt);
    for (int i = 0; i < 50; ++i) {
      const auto wait = rummybot::backoff(milliseconds(250), milliseconds(30000), attempt);
      check(wait >= ceiling / 2 && wait <= ceiling, "a wait is half to all of its ceiling");
      varied = varied || wait != first;
    }
    check(varied, "the waits are jittered");
  }

  const char* argv[] = {"bot", "--bot-token", "T"};
  ::unsetenv("RUMMY_RECONNECT");
  check(!rummybot::parse_args(3, argv).reconnect_forever, "off by default");
  const char* flag[] = {"bot", "--bot-token", "T", "--reconnect-forever"};
  check(rummybot::parse_args(4, flag).reconnect_forever, "--reconnect-forever");
  ::setenv("RUMMY_RECONNECT", "forever", 1);
  check(rummybot::parse_args(3, argv).reconnect_forever, "RUMMY_RECONNECT=forever is read");
  ::setenv("RUMMY_RECONNECT", " Forever ", 1);
  check(rummybot::parse_args(3, argv).reconnect_forever, "RUMMY_RECONNECT ignores case and spaces");
  ::setenv("RUMMY_RECONNECT", "always", 1);  // a typo is told (exit 2 from main), naming the variable
  std::string told;
  try {
    rummybot::parse_args(3, argv);
  } catch (const std::invalid_argument& error) {
    told = error.what();
  }
  check(told.rfind("RUMMY_RECONNECT is 'forever' or unset, not \"always\"", 0) == 0, "a typo is told: " + told);
  ::unsetenv("RUMMY_RECONNECT");
}

void tls_options() {
  ::unsetenv("RUMMY_TLS");
  ::unsetenv("RUMMY_TLS_ROOT_CERT");
  const char* plain[] = {"bot", "--bot-token", "T"};
  const rummybot::Options none = rummybot::parse_args(3, plain);
  check(!none.tls && none.tls_root_cert.empty(), "plaintext by default");
  const char* ca[] = {"bot", "--bot-token", "T", "--tls-root-cert", "/ca.pem"};
  check(rummybot::parse_args(5, ca).tls_root_cert == "/ca.pem", "--tls-root-cert");
  ::setenv("RUMMY_TLS", "1", 1);
  check(rummybot::parse_args(3, plain).tls, "RUMMY_TLS=1");
  ::unsetenv("RUMMY_TLS");
  const char* half[] = {"bot", "--bot-token", "T", "--tls-client-cert", "bot.pem"};
  bool threw = false;
  try {
    rummybot::parse_args(5, half);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  check(threw, "a client certificate without its key is refused");
}

pb::SeatView view_of(const std::string& hand, const std::string& discards) {
  pb::SeatView view;
  view.set_variant("indian");
  view.add_wild_ranks(pb::RANK_JOKER);
  view.add_wild_ranks(pb::RANK_SEVEN);
  for (const pb::Card& c : rummybot::parse_cards(hand)) *view.add_hand() = c;
  for (const pb::Card& c : rummybot::parse_cards(discards)) *view.add_discard_pile() = c;
  return view;
}

void greedy_policy() {
  const std::string hand = "AH 2H 3H 5S 6S 9C 9D KD 4C JK 7D QC 2S";
  rummybot::Actions draw_or_take;
  draw_or_take.Add()->mutable_draw_stock();
  draw_or_take.Add()->mutable_take_discards()->set_count(1);
  draw_or_take.Add()->mutable_drop();
  check(greedy::indian(view_of(hand, "4S"), draw_or_take).has_take_discards(), "takes a card that makes a run");
  check(greedy::indian(view_of(hand, "7C"), draw_or_take).has_take_discards(), "takes a wild");
  check(greedy::indian(view_of(hand, "5D"), draw_or_take).has_draw_stock(), "draws rather than take a dead card");

  rummybot::Actions discards;
  for (const pb::Card& c : rummybot::parse_cards(hand)) *discards.Add()->mutable_discard()->mutable_card() = c;
  const pb::Action thrown = greedy::indian(view_of(hand, ""), discards);
  check(rummybot::card_text(thrown.discard().card()) == "QC", "throws the high dead card, got " +
                                                                  rummybot::card_text(thrown.discard().card()));
  discards.Add()->mutable_declare();
  check(greedy::indian(view_of(hand, ""), discards).has_declare(), "declares when it may");
}

}  // namespace

int main() {
  card_notation();
  command_line();
  reconnect_forever();
  tls_options();
  greedy_policy();
  if (failures > 0) return EXIT_FAILURE;
  std::cout << "sdk_test: all checks passed" << std::endl;
  return EXIT_SUCCESS;
}
