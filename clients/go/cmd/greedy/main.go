// Command greedy is the example Go bot: the greedy Indian rummy policy (indian.go), and the first legal action
// in every other variant. It prints one line per finished match.
//
//	greedy --referee HOST:PORT --bot-token T     # match after match (the tournament runner's way)
//	greedy --referee HOST:PORT --match ID --token T
//
// With --probe-rejection its first DRAW answer in each match is deliberately illegal (a Discard of a card it
// does not hold); OnRejected prints the referee's code and message as the SDK's default does, then answers
// the same request again with the greedy choice, and the match goes on normally.
package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
	"github.com/rummy-referee/rummy/clients/go/rummybot"
)

type greedyBot struct {
	probeRejection bool
	probed         map[string]bool   // matches whose illegal probe has been sent
	probes         map[string]uint64 // match id -> request id answered by a probe not yet rejected
}

func (b *greedyBot) Name() string { return "go-greedy" }

func (b *greedyBot) Decide(_ context.Context, view *pb.SeatView, legal []*pb.Action, req rummybot.Request) *pb.Action {
	if b.probeRejection && req.Phase == pb.Phase_PHASE_DRAW && !b.probed[req.MatchID] {
		b.probed[req.MatchID] = true
		b.probes[req.MatchID] = req.RequestID
		return discardNotInHand(view)
	}
	return choose(view, legal)
}

// OnRejected prints the rejection; only the answer to a probe is followed by another (legal) one.
func (b *greedyBot) OnRejected(code, message string, req rummybot.Request) *pb.Action {
	rummybot.ReportRejection(code, message)
	if id, ok := b.probes[req.MatchID]; ok && id == req.RequestID {
		delete(b.probes, req.MatchID)
		return choose(req.Decision.GetView(), req.Decision.GetLegalActions())
	}
	return nil
}

func (b *greedyBot) OnMatchResult(r *pb.MatchResult) {
	delete(b.probed, r.GetMatchId())
	delete(b.probes, r.GetMatchId())
	ranking := make([]string, len(r.GetRanking()))
	for i, place := range r.GetRanking() {
		ranking[i] = listText(place.GetSeats())
	}
	fmt.Printf("match %s ended: ranking [%s] totals %s (%s)\n",
		r.GetMatchId(), strings.Join(ranking, ", "), listText(r.GetTotals()), r.GetReason())
}

// choose is the greedy policy where there is one, else the first legal action.
func choose(view *pb.SeatView, legal []*pb.Action) *pb.Action {
	if view.GetVariant() == "indian" {
		return greedyIndian(view, legal)
	}
	if len(legal) == 0 {
		return nil
	}
	return legal[0]
}

// discardNotInHand is an illegal answer on purpose: a discard of the first card (AS, 2S, ...) not in hand.
func discardNotInHand(view *pb.SeatView) *pb.Action {
	held := map[card]bool{}
	for _, c := range view.GetHand() {
		held[cardOf(c)] = true
	}
	missing := &pb.Card{Rank: pb.Rank_RANK_ACE, Suit: pb.Suit_SUIT_SPADES}
search:
	for suit := pb.Suit_SUIT_SPADES; suit <= pb.Suit_SUIT_CLUBS; suit++ {
		for rank := pb.Rank_RANK_ACE; rank <= pb.Rank_RANK_KING; rank++ {
			if !held[card{rank, suit}] {
				missing = &pb.Card{Rank: rank, Suit: suit}
				break search
			}
		}
	}
	return rummybot.Discard(missing)
}

// listText writes numbers as a Python list does: [0, 1].
func listText[T uint32 | int64](xs []T) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func main() {
	bot := &greedyBot{probed: map[string]bool{}, probes: map[string]uint64{}}
	flag.BoolVar(&bot.probeRejection, "probe-rejection", false,
		"answer the first DRAW decision of each match with an illegal discard, print the rejection, then play on")
	rummybot.Main(bot)
}
