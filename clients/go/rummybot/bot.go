// Package rummybot is the Go bot SDK for the Rummy Referee: connect, be seated, answer decisions.
//
// A bot is any value with Decide; it returns one of the legal actions (always accepted) or any other action
// it believes legal, built with DrawStock, Discard, Meld, ... Optional hooks are extra methods the SDK looks for
// (SeatedHook, EventHook, ...), so a bot implements only what it needs:
//
//	type firstLegal struct{}
//
//	func (firstLegal) Decide(ctx context.Context, view *pb.SeatView, legal []*pb.Action, req rummybot.Request) *pb.Action {
//		return legal[0]
//	}
//
//	func main() { rummybot.Main(firstLegal{}) }
//
// ctx ends when the decision's time is up (req.TimeLeft) or the bot is stopped: a bot that searches stops there.
// A bot written before Decide took a ctx runs as rummybot.Main(rummybot.Simple(bot)).
//
// Main reads --referee HOST:PORT with --bot-token T (match after match over one stream) or --match ID
// --token T (one seat of one match). The message types are generated from protos/ into package refereev1.
package rummybot

import (
	"context"
	"fmt"
	"os"
	"time"

	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
)

// Version is the project's version (the repository's VERSION file, which every SDK carries; tests/test_layout.py
// checks they agree). The module is published by the tag clients/go/vVERSION, so `go get
// github.com/rummy-referee/rummy/clients/go@vVERSION` fetches this code.
const Version = "0.1.0"

// SDKVersion is sent in the Join, for the referee's logs.
const SDKVersion = "go/" + Version

// Bot chooses an action for each decision. A nil action sends nothing: the referee's deadline rule then plays
// the variant's default move, so return nil only on purpose. The SDK calls Decide and every hook from one
// goroutine, in the order the referee's messages arrive, so a bot needs no locks for its own state. ctx is done
// when the decision's time runs out (req.TimeLeft, as the referee counts it when it asks) or the bot is stopped;
// an answer after that is too late.
type Bot interface {
	Decide(ctx context.Context, view *pb.SeatView, legal []*pb.Action, req Request) *pb.Action
}

// SimpleBot is the Bot of the first Go SDK: its Decide takes no context. Simple makes one a Bot.
type SimpleBot interface {
	Decide(view *pb.SeatView, legal []*pb.Action, req Request) *pb.Action
}

// Simple runs a SimpleBot (a bot written before Decide took a ctx, or one that never needs its deadline) as a Bot; its hooks (OnSeated,
// OnRejected, Name, Seed, ...) are still found and called.
func Simple(bot SimpleBot) Bot { return simple{bot} }

type simple struct{ inner SimpleBot }

func (s simple) Decide(_ context.Context, view *pb.SeatView, legal []*pb.Action, req Request) *pb.Action {
	return s.inner.Decide(view, legal, req)
}

// hooks is the value whose optional methods (SeatedHook, Named, ...) the SDK looks for: the bot Simple wraps.
func hooks(bot Bot) any {
	if s, ok := bot.(simple); ok {
		return s.inner
	}
	return bot
}

// Request is one decision: which match, the phase, the time left, and the whole message as the referee sent it.
type Request struct {
	MatchID   string
	RequestID uint64
	Seat      uint32
	Phase     pb.Phase
	TimeLeft  time.Duration
	Decision  *pb.DecisionRequest // View and LegalActions, for a hook that answers again
}

func newRequest(d *pb.DecisionRequest) Request {
	return Request{
		MatchID:   d.GetMatchId(),
		RequestID: d.GetRequestId(),
		Seat:      d.GetView().GetSeat(),
		Phase:     d.GetPhase(),
		TimeLeft:  time.Duration(d.GetTimeLeftMs()) * time.Millisecond,
		Decision:  d,
	}
}

// SeatedHook is told when the bot has a seat in a new match.
type SeatedHook interface {
	OnSeated(seated *pb.Seated)
}

// EventHook is told of each event this seat may see, as it happens.
type EventHook interface {
	OnEvent(event *pb.MatchEvent)
}

// HandResultHook is told when a hand of a match ends.
type HandResultHook interface {
	OnHandResult(result *pb.HandResult)
}

// RejectedHook is told when the referee refused the bot's answer to req; it may return another action for the
// same request (sent at once) or nil to send nothing more. Without it the SDK calls ReportRejection.
type RejectedHook interface {
	OnRejected(code, message string, req Request) *pb.Action
}

// MatchResultHook is told when a match ends.
type MatchResultHook interface {
	OnMatchResult(result *pb.MatchResult)
}

// Named gives the name sent in the Join when --name is not set.
type Named interface {
	Name() string
}

// Seeded receives --seed (or RUMMY_BOT_SEED) so a bot's own random choices can be reproduced.
type Seeded interface {
	Seed(seed int64)
}

// ReportRejection prints "rejected CODE: message" to stderr. It is the default reaction to a rejection: the
// SDK never substitutes a move of its own.
func ReportRejection(code, message string) {
	fmt.Fprintf(os.Stderr, "rejected %s: %s\n", code, message)
}
