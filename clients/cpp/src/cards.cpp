#include "rummybot/cards.h"

#include <cctype>
#include <stdexcept>

namespace rummybot {
namespace {

constexpr std::string_view kRanks = "A23456789TJQK";  // index + 1 is the Rank value
constexpr std::string_view kSuits = "SHDC";           // index + 1 is the Suit value

}  // namespace

pb::Card make_card(pb::Rank rank, pb::Suit suit) {
  pb::Card card;
  card.set_rank(rank);
  card.set_suit(suit);
  return card;
}

std::string card_text(const pb::Card& card) {
  if (card.rank() == pb::RANK_JOKER) return std::string(RANK_JOKER);
  const int rank = card.rank();
  const int suit = card.suit();
  std::string text;
  text += rank >= 1 && rank <= 13 ? kRanks[rank - 1] : '?';
  text += suit >= 1 && suit <= 4 ? kSuits[suit - 1] : '?';
  return text;
}

pb::Card parse_card(std::string_view text) {
  std::string t;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) t += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (t == RANK_JOKER) return make_card(pb::RANK_JOKER, pb::SUIT_NONE);
  const auto bad = [&] {
    return std::invalid_argument("not a card: '" + std::string(text) + "' (write rank then suit, e.g. QS, TH, 2C, or JK)");
  };
  if (t.size() < 2) throw bad();
  const std::string rank_text = t.substr(0, t.size() - 1);
  const auto suit = kSuits.find(t.back());
  const auto rank = rank_text == "10" ? kRanks.find('T') : rank_text.size() == 1 ? kRanks.find(rank_text[0]) : std::string_view::npos;
  if (rank == std::string_view::npos || suit == std::string_view::npos) throw bad();
  return make_card(static_cast<pb::Rank>(rank + 1), static_cast<pb::Suit>(suit + 1));
}

std::vector<pb::Card> parse_cards(std::string_view text) {
  std::vector<pb::Card> cards;
  std::string token;
  const auto flush = [&] {
    if (!token.empty()) cards.push_back(parse_card(token));
    token.clear();
  };
  for (char c : text) {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      flush();
    } else {
      token += c;
    }
  }
  flush();
  return cards;
}

}  // namespace rummybot
