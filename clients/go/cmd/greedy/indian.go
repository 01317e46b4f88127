package main

import (
	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
)

// A port of the Python greedy Indian rummy policy (referee/rules/policies/indian.py): keep melds and
// near-melds, take the open card when it builds one, discard the card least worth keeping, declare as soon as
// the referee lists a valid declaration. Sequences weigh more than sets, since a declaration needs two.

const (
	inRun = 100  // a card of a pure sequence already made
	inSet = 60   // a card of a set already made
	wild  = 1000 // a joker is never thrown
)

// card is a comparable copy of a wire card, usable as a map key; duplicates (two packs) are equal.
type card struct {
	rank pb.Rank
	suit pb.Suit
}

func cardOf(c *pb.Card) card { return card{c.GetRank(), c.GetSuit()} }

// order is a rank's place in the Python Card's order: a printed joker (RANK_JOKER, 14 on the wire) first, as 0.
func order(r pb.Rank) int {
	if r == pb.Rank_RANK_JOKER {
		return 0
	}
	return int(r)
}

// less orders cards by rank then suit, as the Python Card does, so ties break the same way.
func (c card) less(o card) bool {
	if c.rank != o.rank {
		return order(c.rank) < order(o.rank)
	}
	return c.suit < o.suit
}

// wildSet is the deal's wild ranks: the wild joker's rank and printed jokers.
type wildSet map[pb.Rank]bool

func wildsOf(view *pb.SeatView) wildSet {
	w := wildSet{}
	for _, r := range view.GetWildRanks() {
		w[r] = true
	}
	return w
}

// points is the IND-3 count of a card left in hand: J, Q, K and A 10, number cards their value, wilds 0.
func points(c card, wilds wildSet) int {
	switch {
	case wilds[c.rank] || c.rank == pb.Rank_RANK_JOKER:
		return 0
	case c.rank == pb.Rank_RANK_ACE || c.rank >= pb.Rank_RANK_JACK:
		return 10
	default:
		return int(c.rank)
	}
}

// positions are where a card can stand in a run: an ace is low (1) or high (14).
func positions(c card) []int {
	if c.rank == pb.Rank_RANK_ACE {
		return []int{1, 14}
	}
	return []int{order(c.rank)}
}

// keepValues says how much each card of hand is worth keeping: wilds most, then cards of made pure sequences,
// then of made sets, then cards with neighbours (same suit one or two apart, same rank in another suit).
func keepValues(hand []card, wilds wildSet) map[card]float64 {
	value := map[card]float64{}
	have := map[card]int{} // natural cards, with their copies
	for _, c := range hand {
		if wilds[c.rank] {
			value[c] = wild
		} else {
			have[c]++
		}
	}
	bySuit := map[pb.Suit]map[int]bool{}
	for c := range have {
		if bySuit[c.suit] == nil {
			bySuit[c.suit] = map[int]bool{}
		}
		for _, p := range positions(c) {
			bySuit[c.suit][p] = true
		}
	}
	// a card is in a made sequence when it has two neighbours in a row (either side) in its suit
	madeRun := map[card]bool{}
	for suit, pos := range bySuit {
		for p := range pos {
			if pos[p-1] && pos[p+1] || pos[p+1] && pos[p+2] || pos[p-2] && pos[p-1] {
				rank := pb.Rank(p)
				if p == 14 {
					rank = pb.Rank_RANK_ACE
				}
				madeRun[card{rank, suit}] = true
			}
		}
	}
	suitsByRank := map[pb.Rank]map[pb.Suit]bool{} // over the cards outside made sequences
	for c := range have {
		if madeRun[c] {
			continue
		}
		if suitsByRank[c.rank] == nil {
			suitsByRank[c.rank] = map[pb.Suit]bool{}
		}
		suitsByRank[c.rank][c.suit] = true
	}
	for c, copies := range have {
		if madeRun[c] {
			value[c] = inRun
			continue
		}
		suits := len(suitsByRank[c.rank])
		if suits >= 3 {
			value[c] = inSet
			continue
		}
		pos := bySuit[c.suit]
		near := 0.0
		for _, p := range positions(c) {
			near += 3*(b2f(pos[p-1])+b2f(pos[p+1])) + 2*(b2f(pos[p-2])+b2f(pos[p+2]))
		}
		near += 2.5 * float64(suits-1)
		near += 0.5 * float64(copies-1)                // a duplicate (two packs) can go in two groups
		value[c] = near - float64(points(c, wilds))/20 // high dead cards go first
	}
	return value
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// worst is the card of hand least worth keeping: lowest value, then most points, then lowest card.
func worst(hand []card, wilds wildSet) (card, map[card]float64) {
	values := keepValues(hand, wilds)
	best := hand[0]
	for _, c := range hand[1:] {
		vc, vb := values[c], values[best]
		pc, pBest := points(c, wilds), points(best, wilds)
		if vc < vb || vc == vb && (pc > pBest || pc == pBest && c.less(best)) {
			best = c
		}
	}
	return best, values
}

// greedyIndian declares when listed; in DRAW takes the open card if it joins a meld or near-meld it would keep,
// else the closed deck; in PLAY discards the card least worth keeping. It never drops.
func greedyIndian(view *pb.SeatView, legal []*pb.Action) *pb.Action {
	var take, draw *pb.Action
	var discards []*pb.Action
	for _, a := range legal {
		switch a.GetKind().(type) {
		case *pb.Action_Declare:
			return a
		case *pb.Action_TakeDiscards:
			if take == nil {
				take = a
			}
		case *pb.Action_DrawStock:
			if draw == nil {
				draw = a
			}
		case *pb.Action_Discard:
			discards = append(discards, a)
		}
	}
	wilds := wildsOf(view)
	hand := make([]card, 0, len(view.GetHand())+1)
	for _, c := range view.GetHand() {
		hand = append(hand, cardOf(c))
	}
	if take != nil || draw != nil {
		if pile := view.GetDiscardPile(); take != nil && len(pile) > 0 {
			top := cardOf(pile[len(pile)-1])
			if wilds[top.rank] {
				return take
			}
			thrown, values := worst(append(hand, top), wilds)
			if thrown != top && values[top] >= 2.5 {
				return take
			}
		}
		if draw != nil {
			return draw
		}
		return take
	}
	if len(discards) > 0 && len(hand) > 0 {
		thrown, _ := worst(hand, wilds)
		for _, a := range discards {
			if cardOf(a.GetDiscard().GetCard()) == thrown {
				return a
			}
		}
		return discards[0]
	}
	if len(legal) == 0 {
		return nil
	}
	return legal[0]
}
