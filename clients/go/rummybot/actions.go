package rummybot

import (
	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
)

// Action builders, one per kind of the proto's Action oneof, so that a bot writes rummybot.Discard(c) rather than
// &pb.Action{Kind: &pb.Action_Discard{Discard: &pb.Discard{Card: c}}}. Cards come from the view (view.GetHand())
// or from ParseCard / MustParseCards.
//
//	rummybot.DrawStock()
//	rummybot.Meld(rummybot.Group(rummybot.MustParseCards("7H 8H 9H")...))
//	rummybot.TakeDiscards(1, rummybot.MustParseCards("QS QD")...) // the top card, melded with two from hand
//	rummybot.Declare(discard, groups...)

// DrawStock takes the top card of the stock.
func DrawStock() *pb.Action {
	return &pb.Action{Kind: &pb.Action_DrawStock{DrawStock: &pb.DrawStock{}}}
}

// TakeDiscards takes the top count cards of the discard pile (0: the whole pile). Where the variant demands that
// the bottom-most card taken be melded at once, meld names the other cards of that meld, from hand (Fortune: the
// top card with two from hand; 500 Rum: the deepest card taken). With no meld cards nothing is melded.
func TakeDiscards(count uint32, meld ...*pb.Card) *pb.Action {
	take := &pb.TakeDiscards{Count: count}
	if len(meld) > 0 {
		take.Meld = Group(meld...)
	}
	return &pb.Action{Kind: &pb.Action_TakeDiscards{TakeDiscards: take}}
}

// TakeDiscardsWith is TakeDiscards melding the bottom-most card taken with group, which may say what its wild
// cards stand for (WithWilds).
func TakeDiscardsWith(count uint32, group *pb.Group) *pb.Action {
	return &pb.Action{Kind: &pb.Action_TakeDiscards{TakeDiscards: &pb.TakeDiscards{Count: count, Meld: group}}}
}

// TakeDiscardsLayingOff is TakeDiscards laying the bottom-most card taken off on the table's meld meldID.
func TakeDiscardsLayingOff(count, meldID uint32) *pb.Action {
	return &pb.Action{Kind: &pb.Action_TakeDiscards{TakeDiscards: &pb.TakeDiscards{Count: count, LayOffOn: &meldID}}}
}

// Group is one meld's cards, for Meld, Declare and TakeDiscardsWith.
func Group(cards ...*pb.Card) *pb.Group {
	return &pb.Group{Cards: cards}
}

// WithWilds says what the wild cards of group stand for, where the variant asks (a wild that could be more
// than one card); it returns group.
func WithWilds(group *pb.Group, standsFor ...*pb.WildAssignment) *pb.Group {
	group.StandsFor = append(group.StandsFor, standsFor...)
	return group
}

// WildAs says that the wild card wild stands for as (in a set, as may have Suit SUIT_NONE: an unnamed suit; a suit
// left unset, SUIT_UNSPECIFIED, is refused BAD_CARD).
func WildAs(wild, as *pb.Card) *pb.WildAssignment {
	return &pb.WildAssignment{Wild: wild, AsCard: as}
}

// Meld puts one or more groups from hand on the table as one action (a Skarney contract is several at once).
func Meld(groups ...*pb.Group) *pb.Action {
	return &pb.Action{Kind: &pb.Action_Meld{Meld: &pb.MeldAction{Groups: groups}}}
}

// LayOff adds cards from hand to the table's meld meldID.
func LayOff(meldID uint32, cards ...*pb.Card) *pb.Action {
	return &pb.Action{Kind: &pb.Action_LayOff{LayOff: &pb.LayOff{MeldId: meldID, Cards: cards}}}
}

// LayOffWilds is LayOff saying what the wild cards laid off stand for.
func LayOffWilds(meldID uint32, cards []*pb.Card, standsFor ...*pb.WildAssignment) *pb.Action {
	return &pb.Action{Kind: &pb.Action_LayOff{LayOff: &pb.LayOff{MeldId: meldID, Cards: cards, StandsFor: standsFor}}}
}

// ExchangeWild puts natural from hand into the table's meld meldID in place of the wild card it stands for,
// and takes wild into hand.
func ExchangeWild(meldID uint32, natural, wild *pb.Card) *pb.Action {
	return &pb.Action{Kind: &pb.Action_ExchangeWild{ExchangeWild: &pb.ExchangeWild{MeldId: meldID, Natural: natural,
		Wild: wild}}}
}

// Discard puts card from hand on the discard pile (Iceberg: passes it face down).
func Discard(card *pb.Card) *pb.Action {
	return &pb.Action{Kind: &pb.Action_Discard{Discard: &pb.Discard{Card: card}}}
}

// Declare shows the whole hand as groups and puts discard away face down (Indian rummy, IND-7).
func Declare(discard *pb.Card, groups ...*pb.Group) *pb.Action {
	return &pb.Action{Kind: &pb.Action_Declare{Declare: &pb.Declare{Groups: groups, Discard: discard}}}
}

// Drop leaves the hand for its drop penalty (Indian rummy).
func Drop() *pb.Action {
	return &pb.Action{Kind: &pb.Action_Drop{Drop: &pb.Drop{}}}
}

// EndTurn ends a turn without a discard, where the variant allows it (500 Rum with an empty stock, FH-11).
func EndTurn() *pb.Action {
	return &pb.Action{Kind: &pb.Action_EndTurn{EndTurn: &pb.EndTurn{}}}
}

// Offer offers card to the other players before discarding it (Skarney, SKA-7).
func Offer(card *pb.Card) *pb.Action {
	return &pb.Action{Kind: &pb.Action_Offer{Offer: &pb.Offer{Card: card}}}
}

// AcceptOffer takes the card on offer (Skarney).
func AcceptOffer() *pb.Action {
	return &pb.Action{Kind: &pb.Action_AcceptOffer{AcceptOffer: &pb.AcceptOffer{}}}
}

// DeclineOffer lets the card on offer pass (Skarney).
func DeclineOffer() *pb.Action {
	return &pb.Action{Kind: &pb.Action_DeclineOffer{DeclineOffer: &pb.DeclineOffer{}}}
}

// MustParseCards is ParseCards for cards written in the program itself: it panics on a bad card.
func MustParseCards(text string) []*pb.Card {
	cards, err := ParseCards(text)
	if err != nil {
		panic(err)
	}
	return cards
}
