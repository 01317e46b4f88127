// Card text notation, as in logs, records and the CLI: rank then suit, ranks A23456789TJQK, suits SHDC
// ("QS", "TH", "2C"); "JK" is a printed joker. The wire itself uses the Rank and Suit enums.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rummy/referee/v1/referee.pb.h"

namespace rummybot {

namespace pb = ::rummy::referee::v1;

/// The text of a printed joker (rank RANK_JOKER, suit SUIT_NONE).
inline constexpr std::string_view RANK_JOKER = "JK";

/// A card built from its enums.
pb::Card make_card(pb::Rank rank, pb::Suit suit);

/// "QS", "TH", "JK"; an out-of-range rank or suit reads as "?".
std::string card_text(const pb::Card& card);

/// Reads one card ("QS", "th", "10H", "JK"); throws std::invalid_argument on anything else.
pb::Card parse_card(std::string_view text);

/// Reads cards separated by spaces or commas: "AH 2H 3H".
std::vector<pb::Card> parse_cards(std::string_view text);

/// Cards as text, separated by spaces.
template <typename Cards>
std::string cards_text(const Cards& cards) {
  std::string out;
  for (const pb::Card& card : cards) {
    if (!out.empty()) out += ' ';
    out += card_text(card);
  }
  return out;
}

/// Same rank and suit (generated messages have no operator==).
inline bool same_card(const pb::Card& a, const pb::Card& b) {
  return a.rank() == b.rank() && a.suit() == b.suit();
}

}  // namespace rummybot
