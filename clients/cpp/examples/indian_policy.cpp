#include "indian_policy.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace greedy {
namespace {

constexpr double kInRun = 100;  // a card of a pure sequence already made
constexpr double kInSet = 60;   // a card of a set already made
constexpr double kWild = 1000;  // a joker is never thrown

bool is_high(int rank) {
  return rank == pb::RANK_ACE || rank == pb::RANK_JACK || rank == pb::RANK_QUEEN || rank == pb::RANK_KING;
}

/// A rank's place in the referee's card order: a printed joker (RANK_JOKER, 14 on the wire) first, as 0.
int order_of(int rank) { return rank == pb::RANK_JOKER ? 0 : rank; }

int points(const CardKey& card, const std::set<int>& wilds) {
  if (wilds.count(card.first) > 0 || card.first == pb::RANK_JOKER) return 0;
  return is_high(card.first) ? 10 : card.first;
}

/// Run positions: an ace is low (1) and high (14).
std::vector<int> positions(const CardKey& card) {
  if (card.first == pb::RANK_ACE) return {1, 14};
  return {order_of(card.first)};
}

/// The card least worth keeping: lowest value, then most points, then lowest card.
CardKey worst(const std::vector<CardKey>& hand, const std::set<int>& wilds) {
  const auto values = keep_values(hand, wilds);
  const auto order = [&](const CardKey& c) {
    return std::make_tuple(values.at(c), -points(c, wilds), order_of(c.first), c.second);
  };
  return *std::min_element(hand.begin(), hand.end(),
                           [&](const CardKey& a, const CardKey& b) { return order(a) < order(b); });
}

template <typename Predicate>
const pb::Action* first(const rummybot::Actions& legal, Predicate predicate) {
  const auto found = std::find_if(legal.begin(), legal.end(), predicate);
  return found == legal.end() ? nullptr : &*found;
}

}  // namespace

CardKey card_key(const pb::Card& card) { return {card.rank(), card.suit()}; }

std::map<CardKey, double> keep_values(const std::vector<CardKey>& hand, const std::set<int>& wilds) {
  std::map<CardKey, int> have;  // naturals, with their copies (two packs)
  std::map<CardKey, double> value;
  for (const CardKey& c : hand) {
    if (wilds.count(c.first) > 0) {
      value[c] = kWild;
    } else {
      ++have[c];
    }
  }
  std::map<int, std::set<int>> by_suit;  // suit -> run positions held
  for (const auto& [c, copies] : have) {
    for (int p : positions(c)) by_suit[c.second].insert(p);
  }
  std::set<CardKey> in_run;
  for (const auto& [suit, held] : by_suit) {
    const auto has = [&held = held](int p) { return held.count(p) > 0; };
    for (int p : held) {
      // a card is in a made sequence when it has two neighbours in a row (either side) in its suit
      if ((has(p - 1) && has(p + 1)) || (has(p + 1) && has(p + 2)) || (has(p - 2) && has(p - 1))) {
        in_run.insert({p == 1 || p == 14 ? static_cast<int>(pb::RANK_ACE) : p, suit});
      }
    }
  }
  std::map<int, std::set<int>> by_rank;  // rank -> suits held, among cards not in a sequence
  for (const auto& [c, copies] : have) {
    if (in_run.count(c) == 0) by_rank[c.first].insert(c.second);
  }
  for (const auto& [c, copies] : have) {
    if (in_run.count(c) > 0) {
      value[c] = kInRun;
      continue;
    }
    const std::size_t suits = by_rank[c.first].size();
    if (suits >= 3) {
      value[c] = kInSet;
      continue;
    }
    const std::set<int>& held = by_suit[c.second];
    double near = 0;
    for (int p : positions(c)) {
      near += 3.0 * (held.count(p - 1) + held.count(p + 1)) + 2.0 * (held.count(p - 2) + held.count(p + 2));
    }
    near += 2.5 * (static_cast<double>(suits) - 1);
    near += 0.5 * (copies - 1);                   // a duplicate can go in two groups
    value[c] = near - points(c, wilds) / 20.0;  // high dead cards go first
  }
  return value;
}

pb::Action indian(const pb::SeatView& view, const rummybot::Actions& legal) {
  if (legal.empty()) throw std::invalid_argument("the referee listed no legal action");
  const std::set<int> wilds(view.wild_ranks().begin(), view.wild_ranks().end());
  std::vector<CardKey> hand;
  for (const pb::Card& c : view.hand()) hand.push_back(card_key(c));

  if (const auto* declare = first(legal, [](const pb::Action& a) { return a.has_declare(); })) return *declare;

  const auto* take = first(legal, [](const pb::Action& a) { return a.has_take_discards(); });
  const auto* draw = first(legal, [](const pb::Action& a) { return a.has_draw_stock(); });
  if (take != nullptr || draw != nullptr) {
    if (take != nullptr && !view.discard_pile().empty()) {
      const CardKey top = card_key(*view.discard_pile().rbegin());
      if (wilds.count(top.first) > 0) return *take;
      std::vector<CardKey> after = hand;
      after.push_back(top);
      if (worst(after, wilds) != top && keep_values(after, wilds).at(top) >= 2.5) return *take;
    }
    return draw != nullptr ? *draw : *take;
  }

  if (first(legal, [](const pb::Action& a) { return a.has_discard(); }) != nullptr && !hand.empty()) {
    const CardKey throw_away = worst(hand, wilds);
    if (const auto* discard = first(legal, [&](const pb::Action& a) {
          return a.has_discard() && card_key(a.discard().card()) == throw_away;
        })) {
      return *discard;
    }
    return *first(legal, [](const pb::Action& a) { return a.has_discard(); });
  }
  return legal[0];
}

pb::Action choose(const pb::SeatView& view, const rummybot::Actions& legal) {
  if (view.variant() == "indian") return indian(view, legal);
  if (legal.empty()) throw std::invalid_argument("the referee listed no legal action");
  return legal[0];
}

}  // namespace greedy
