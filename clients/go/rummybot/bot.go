// Package rummybot is the Go bot SDK for the Rummy Referee: connect, be seated, answer decisions.
//
// A bot is any value with Decide; it returns one of the legal actions (always accepted) or any other action
// it believes legal. Optional hooks are extra methods the SDK looks for (SeatedHook, EventHook, ...), so a bot
// implements only what it needs:
//
//	type firstLegal struct{}
//
//	func (firstLegal) Decide(view *pb.SeatView, legal []*pb.Action, req rummybot.Request) *pb.Action {
//		return legal[0]
//	}
//
//	func main() { rummybot.Main(firstLegal{}) }
//
// Main reads --referee HOST:PORT with --bot-token T (match after match over one stream) or --match ID
// --token T (one seat of one match). The message types are generated from protos/ into package refereev1.
package rummybot

import (
	"fmt"
	"os"
	"time"

	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
)

// SDKVersion is sent in the Join, for the referee's logs.
const SDKVersion = "go/0.1.0"

// Bot chooses an action for each decision. A nil action sends nothing: the referee's deadline rule then plays
// the variant's default move, so return nil only on purpose. The SDK calls Decide and every hook from one
// goroutine, in the order the referee's messages arrive, so a bot needs no locks for its own state.
type Bot interface {
	Decide(view *pb.SeatView, legal []*pb.Action, req Request) *pb.Action
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
