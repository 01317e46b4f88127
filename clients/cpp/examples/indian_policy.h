// A greedy Indian rummy policy (13 cards), ported from referee/rules/policies/indian.py: keep melds
// and near-melds, take the open card when it builds one, discard the highest-points dead card, declare as soon
// as the referee lists a declaration. It reads only the seat's view: hand, wild_ranks and the open card.
#pragma once

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "rummybot/sdk.h"

namespace greedy {

namespace pb = ::rummy::referee::v1;

/// A card as (rank, suit): compared as the Python Card is, rank first.
using CardKey = std::pair<int, int>;
CardKey card_key(const pb::Card& card);

/// How much each card of `hand` is worth keeping: wilds most, then cards of made pure sequences, then of made
/// sets, then cards with neighbours (same suit one or two apart, same rank in another suit).
std::map<CardKey, double> keep_values(const std::vector<CardKey>& hand, const std::set<int>& wild_ranks);

/// The Indian greedy choice; never drops. Throws std::invalid_argument when `legal` is empty.
pb::Action indian(const pb::SeatView& view, const rummybot::Actions& legal);

/// indian() for the indian variant, the first listed action for any other.
pb::Action choose(const pb::SeatView& view, const rummybot::Actions& legal);

}  // namespace greedy
