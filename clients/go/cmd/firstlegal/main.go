// Command firstlegal is the smallest bot: always the first legal action.
package main

import (
	"context"
	"fmt"

	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
	"github.com/rummy-referee/rummy/clients/go/rummybot"
)

type firstLegal struct{}

func (firstLegal) Name() string { return "go-first-legal" }

func (firstLegal) Decide(ctx context.Context, view *pb.SeatView, legal []*pb.Action, req rummybot.Request) *pb.Action {
	return legal[0] // any listed action is legal
}

func (firstLegal) OnMatchResult(result *pb.MatchResult) {
	fmt.Printf("match %s ended: %s\n", result.GetMatchId(), result.GetReason())
}

func main() { rummybot.Main(firstLegal{}) }
