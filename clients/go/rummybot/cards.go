package rummybot

import (
	"fmt"
	"strings"

	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
)

// RankJoker is the text of a printed joker; every other card is written rank then suit.
const RankJoker = "JK"

// Rank letters in the text notation, indexed by the wire's Rank value (RANK_UNSPECIFIED = 0 has none; RANK_JOKER = 14
// is written JK).
const rankLetters = "?A23456789TJQK"

// Suit letters, indexed by the wire's Suit value (SUIT_UNSPECIFIED = 0 and SUIT_NONE = 5, a joker's, have none).
const suitLetters = "?SHDC"

// CardText writes a card in the text notation used by logs, records and the CLI: "QS", "TH", "2C", "JK".
func CardText(c *pb.Card) string {
	rank, suit := c.GetRank(), c.GetSuit()
	if rank == pb.Rank_RANK_JOKER {
		return RankJoker
	}
	if rank < pb.Rank_RANK_ACE || rank > pb.Rank_RANK_KING || suit < pb.Suit_SUIT_SPADES || suit > pb.Suit_SUIT_CLUBS {
		return fmt.Sprintf("?%d/%d", rank, suit)
	}
	return string(rankLetters[rank]) + string(suitLetters[suit])
}

// CardsText writes cards separated by spaces: "AH 2H 3H".
func CardsText(cards []*pb.Card) string {
	texts := make([]string, len(cards))
	for i, c := range cards {
		texts[i] = CardText(c)
	}
	return strings.Join(texts, " ")
}

// ParseCard reads one card in the text notation; case does not matter and "10H" is read as "TH".
func ParseCard(text string) (*pb.Card, error) {
	t := strings.ToUpper(strings.TrimSpace(text))
	if t == RankJoker {
		return &pb.Card{Rank: pb.Rank_RANK_JOKER, Suit: pb.Suit_SUIT_NONE}, nil
	}
	t = strings.Replace(t, "10", "T", 1)
	if len(t) != 2 {
		return nil, fmt.Errorf("not a card: %q (write rank then suit, e.g. QS, TH, 2C, or JK)", text)
	}
	rank := strings.IndexByte(rankLetters[1:], t[0]) + 1
	suit := strings.IndexByte(suitLetters[1:], t[1]) + 1
	if rank == 0 || suit == 0 {
		return nil, fmt.Errorf("not a card: %q (write rank then suit, e.g. QS, TH, 2C, or JK)", text)
	}
	return &pb.Card{Rank: pb.Rank(rank), Suit: pb.Suit(suit)}, nil
}

// ParseCards reads cards separated by spaces or commas: "AH 2H 3H".
func ParseCards(text string) ([]*pb.Card, error) {
	fields := strings.Fields(strings.ReplaceAll(text, ",", " "))
	cards := make([]*pb.Card, 0, len(fields))
	for _, f := range fields {
		c, err := ParseCard(f)
		if err != nil {
			return nil, err
		}
		cards = append(cards, c)
	}
	return cards, nil
}
