package rummybot

import (
	"testing"

	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
)

func TestCardTextRoundTrip(t *testing.T) {
	cards := []*pb.Card{{Rank: pb.Rank_RANK_JOKER, Suit: pb.Suit_SUIT_NONE}}
	for suit := pb.Suit_SUIT_SPADES; suit <= pb.Suit_SUIT_CLUBS; suit++ {
		for rank := pb.Rank_RANK_ACE; rank <= pb.Rank_RANK_KING; rank++ {
			cards = append(cards, &pb.Card{Rank: rank, Suit: suit})
		}
	}
	for _, c := range cards {
		got, err := ParseCard(CardText(c))
		if err != nil || got.GetRank() != c.GetRank() || got.GetSuit() != c.GetSuit() {
			t.Errorf("%s read back as %v (%v)", CardText(c), got, err)
		}
	}
}

func TestParseCards(t *testing.T) {
	cards, err := ParseCards("QS, th 10H 2C JK")
	if err != nil {
		t.Fatal(err)
	}
	if got := CardsText(cards); got != "QS TH TH 2C JK" {
		t.Errorf("got %q", got)
	}
	for _, bad := range []string{"", "1S", "QX", "KSS", "JOKER"} {
		if _, err := ParseCard(bad); err == nil {
			t.Errorf("%q read as a card", bad)
		}
	}
}
