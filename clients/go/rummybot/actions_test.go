package rummybot

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
)

// Every kind of the proto's Action oneof has a builder, and each builds that kind with the fields it was given
// (compared as the stdio bridge's JSON mapping writes them).
func TestEveryActionKindHasABuilder(t *testing.T) {
	h := MustParseCards("QS QD 2C 7H")
	built := map[string]struct {
		action *pb.Action
		json   string
	}{
		"draw_stock":    {DrawStock(), `{"drawStock":{}}`},
		"take_discards": {TakeDiscards(1, h[0], h[1]), `{"takeDiscards":{"count":1,"meld":{"cards":[{"rank":"RANK_QUEEN","suit":"SUIT_SPADES"},{"rank":"RANK_QUEEN","suit":"SUIT_DIAMONDS"}]}}}`},
		"meld":          {Meld(WithWilds(Group(h[0], h[1], h[2]), WildAs(h[2], &pb.Card{Rank: pb.Rank_RANK_QUEEN, Suit: pb.Suit_SUIT_NONE}))), `{"meld":{"groups":[{"cards":[{"rank":"RANK_QUEEN","suit":"SUIT_SPADES"},{"rank":"RANK_QUEEN","suit":"SUIT_DIAMONDS"},{"rank":"RANK_TWO","suit":"SUIT_CLUBS"}],"standsFor":[{"wild":{"rank":"RANK_TWO","suit":"SUIT_CLUBS"},"asCard":{"rank":"RANK_QUEEN","suit":"SUIT_NONE"}}]}]}}`},
		"lay_off":       {LayOff(3, h[3]), `{"layOff":{"meldId":3,"cards":[{"rank":"RANK_SEVEN","suit":"SUIT_HEARTS"}]}}`},
		"exchange_wild": {ExchangeWild(2, h[3], h[2]), `{"exchangeWild":{"meldId":2,"natural":{"rank":"RANK_SEVEN","suit":"SUIT_HEARTS"},"wild":{"rank":"RANK_TWO","suit":"SUIT_CLUBS"}}}`},
		"discard":       {Discard(h[3]), `{"discard":{"card":{"rank":"RANK_SEVEN","suit":"SUIT_HEARTS"}}}`},
		"declare":       {Declare(h[3], Group(h[0], h[1])), `{"declare":{"groups":[{"cards":[{"rank":"RANK_QUEEN","suit":"SUIT_SPADES"},{"rank":"RANK_QUEEN","suit":"SUIT_DIAMONDS"}]}],"discard":{"rank":"RANK_SEVEN","suit":"SUIT_HEARTS"}}}`},
		"drop":          {Drop(), `{"drop":{}}`},
		"end_turn":      {EndTurn(), `{"endTurn":{}}`},
		"offer":         {Offer(h[3]), `{"offer":{"card":{"rank":"RANK_SEVEN","suit":"SUIT_HEARTS"}}}`},
		"accept_offer":  {AcceptOffer(), `{"acceptOffer":{}}`},
		"decline_offer": {DeclineOffer(), `{"declineOffer":{}}`},
	}
	kinds := (&pb.Action{}).ProtoReflect().Descriptor().Oneofs().ByName("kind").Fields()
	if kinds.Len() != len(built) {
		t.Fatalf("the proto's Action has %d kinds, the builders cover %d: add the new one", kinds.Len(), len(built))
	}
	for i := 0; i < kinds.Len(); i++ {
		name := string(kinds.Get(i).Name())
		b, ok := built[name]
		if !ok {
			t.Errorf("no builder for Action.%s", name)
			continue
		}
		if got := b.action.ProtoReflect().WhichOneof(kinds.Get(i).ContainingOneof()); got == nil || string(got.Name()) != name {
			t.Errorf("the builder for %s builds %v", name, got)
		}
		var want, have pb.Action
		if err := protojson.Unmarshal([]byte(b.json), &want); err != nil {
			t.Fatal(err)
		}
		raw, _ := protojson.Marshal(b.action)
		if err := protojson.Unmarshal(raw, &have); err != nil || !proto.Equal(&want, &have) {
			t.Errorf("%s: built %s, want %s", name, raw, b.json)
		}
	}
}

func TestTakeDiscardsVariants(t *testing.T) {
	if a := TakeDiscards(0); a.GetTakeDiscards().GetMeld() != nil || a.GetTakeDiscards().GetCount() != 0 {
		t.Errorf("the whole pile, nothing melded: %v", a)
	}
	if a := TakeDiscardsLayingOff(3, 5); a.GetTakeDiscards().LayOffOn == nil || a.GetTakeDiscards().GetLayOffOn() != 5 {
		t.Errorf("laying off on meld 5: %v", a)
	}
	g := Group(MustParseCards("9H TH")...)
	if a := TakeDiscardsWith(2, g); a.GetTakeDiscards().GetMeld() != g {
		t.Errorf("melding with a group: %v", a)
	}
	w := LayOffWilds(4, MustParseCards("JK"), WildAs(MustParseCards("JK")[0], MustParseCards("8S")[0]))
	if len(w.GetLayOff().GetStandsFor()) != 1 || w.GetLayOff().GetMeldId() != 4 {
		t.Errorf("lay off a wild: %v", w)
	}
}

// A bot of the first Go SDK (Decide with no context) runs through Simple, its hooks still called.
type oldStyle struct{ seated, named int }

func (b *oldStyle) Decide(view *pb.SeatView, legal []*pb.Action, req Request) *pb.Action {
	return legal[0]
}
func (b *oldStyle) OnSeated(*pb.Seated) { b.seated++ }
func (b *oldStyle) Name() string        { b.named++; return "old" }

func TestSimpleRunsAnOldBotWithItsHooks(t *testing.T) {
	old := &oldStyle{}
	bot := Simple(old)
	if got := bot.Decide(context.Background(), nil, []*pb.Action{Drop()}, Request{}); got.GetDrop() == nil {
		t.Fatalf("decided %v", got)
	}
	if _, ok := hooks(bot).(SeatedHook); !ok {
		t.Fatal("the wrapped bot's OnSeated is not found")
	}
	if named, ok := hooks(bot).(Named); !ok || named.Name() != "old" {
		t.Fatal("the wrapped bot's Name is not found")
	}
}

// Decide's ctx ends when the decision's time does, so a bot that searches can stop in time.
type deadlineBot struct{ left time.Duration }

func (b *deadlineBot) Decide(ctx context.Context, view *pb.SeatView, legal []*pb.Action, req Request) *pb.Action {
	if deadline, ok := ctx.Deadline(); ok {
		b.left = time.Until(deadline)
	}
	return legal[0]
}

func TestDecideIsGivenTheDecisionsDeadline(t *testing.T) {
	ref := &scriptedReferee{received: make(chan []*pb.PlayRequest, 1), script: []*pb.PlayResponse{
		{Body: &pb.PlayResponse_Welcome{Welcome: &pb.Welcome{BotName: "tester"}}},
		{Body: &pb.PlayResponse_Decision{Decision: &pb.DecisionRequest{MatchId: "m", RequestId: 1, TimeLeftMs: 1500,
			Phase: pb.Phase_PHASE_DRAW, View: &pb.SeatView{Variant: "indian"}, LegalActions: []*pb.Action{DrawStock()}}}},
		{Body: &pb.PlayResponse_MatchResult{MatchResult: &pb.MatchResult{MatchId: "m"}}},
	}}
	address := serveScripted(t, ref)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bot := &deadlineBot{}
	if _, err := Run(ctx, bot, Options{Referee: address, MatchID: "m", SeatToken: "s"}); err != nil {
		t.Fatal(err)
	}
	if bot.left <= time.Second || bot.left > 1500*time.Millisecond {
		t.Fatalf("Decide's ctx has %v left, want about 1.5 s", bot.left)
	}
	if got := <-ref.received; len(got) != 2 || got[1].GetAction().GetAction().GetDrawStock() == nil {
		t.Fatalf("the referee received %v", got)
	}
}
