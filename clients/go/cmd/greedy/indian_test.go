package main

import (
	"testing"

	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
	"github.com/rummy-referee/rummy/clients/go/rummybot"
)

const hand13 = "2S 3S 4S 7H 8H 9D 9C KC QD 5C 6D JH AS"

func mustCards(t *testing.T, text string) []*pb.Card {
	t.Helper()
	cards, err := rummybot.ParseCards(text)
	if err != nil {
		t.Fatal(err)
	}
	return cards
}

func indianView(t *testing.T, hand, pile string, wild pb.Rank) *pb.SeatView {
	return &pb.SeatView{Variant: "indian", Hand: mustCards(t, hand), DiscardPile: mustCards(t, pile),
		WildRanks: []pb.Rank{wild, pb.Rank_RANK_JOKER}}
}

var drawPhase = []*pb.Action{rummybot.DrawStock(), rummybot.TakeDiscards(1), rummybot.Drop()}

// The expected choices are those of the Python policy on the same views.
func TestGreedyDraw(t *testing.T) {
	cases := []struct {
		top  string
		wild pb.Rank
		take bool
	}{
		{"7C", pb.Rank_RANK_SEVEN, true}, // a wild joker
		{"JK", pb.Rank_RANK_FIVE, true},  // a printed joker
		{"9H", pb.Rank_RANK_FIVE, true},  // makes a set of nines and 7H 8H 9H
		{"KD", pb.Rank_RANK_FIVE, true},  // pairs with KC, next to QD
		{"4D", pb.Rank_RANK_FIVE, false}, // nothing near it worth keeping
	}
	for _, c := range cases {
		got := greedyIndian(indianView(t, hand13, c.top, c.wild), drawPhase)
		if took := got.GetTakeDiscards() != nil; took != c.take || (!took && got.GetDrawStock() == nil) {
			t.Errorf("open card %s: chose %v", c.top, got)
		}
	}
}

func TestGreedyDiscardsTheCardLeastWorthKeeping(t *testing.T) {
	view := indianView(t, hand13+" 9S", "", pb.Rank_RANK_FIVE)
	var legal []*pb.Action
	for _, c := range view.GetHand() {
		legal = append(legal, rummybot.Discard(c))
	}
	if got := rummybot.CardText(greedyIndian(view, legal).GetDiscard().GetCard()); got != "JH" {
		t.Errorf("discarded %s, want JH", got)
	}
}

func TestGreedyDeclaresWhenListed(t *testing.T) {
	declare := rummybot.Declare(nil)
	legal := []*pb.Action{rummybot.Discard(mustCards(t, "2S")[0]), declare}
	if got := greedyIndian(indianView(t, hand13+" 9S", "", pb.Rank_RANK_FIVE), legal); got != declare {
		t.Errorf("chose %v", got)
	}
}

func TestProbeDiscardsACardNotInHand(t *testing.T) {
	view := indianView(t, "AS 2S 3S", "", pb.Rank_RANK_FIVE)
	if got := rummybot.CardText(discardNotInHand(view).GetDiscard().GetCard()); got != "4S" {
		t.Errorf("probe discards %s", got)
	}
}
