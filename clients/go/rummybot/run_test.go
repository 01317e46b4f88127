package rummybot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
)

// scriptedReferee sends its script after the Join, then records what the bot sends until it closes the stream.
type scriptedReferee struct {
	pb.UnimplementedRefereeServiceServer
	script   []*pb.PlayResponse
	received chan []*pb.PlayRequest
	// waitAfterBatch: a batch holding a decision is answered before the script goes on, as for a decision
	waitAfterBatch bool
}

func (r *scriptedReferee) Play(stream pb.RefereeService_PlayServer) error {
	var got []*pb.PlayRequest
	join, err := stream.Recv()
	if err != nil {
		return err
	}
	got = append(got, join)
	for _, msg := range r.script {
		if err := stream.Send(msg); err != nil {
			return err
		}
		_, asks := msg.GetBody().(*pb.PlayResponse_Decision)
		if b, ok := msg.GetBody().(*pb.PlayResponse_Batch); ok && r.waitAfterBatch {
			last := b.Batch.GetMessages()[len(b.Batch.GetMessages())-1]
			_, asks = last.GetBody().(*pb.PlayResponse_Decision)
		}
		if asks { // wait for the answer, as the referee does
			answer, err := stream.Recv()
			if err != nil {
				return err
			}
			got = append(got, answer)
		}
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			r.received <- got
			return nil
		}
		got = append(got, msg)
	}
}

type firstLegal struct{ seated []string }

func (b *firstLegal) Decide(_ context.Context, view *pb.SeatView, legal []*pb.Action, req Request) *pb.Action {
	return legal[0]
}
func (b *firstLegal) OnSeated(s *pb.Seated) { b.seated = append(b.seated, s.GetMatchId()) }

// In seat mode the SDK joins with the seat credential, echoes request ids, sends nothing after a rejection
// unless the bot asks to, and returns after the match's result.
func TestSeatModeAnswersAndLeavesRejectionsToTheBot(t *testing.T) {
	ref := &scriptedReferee{received: make(chan []*pb.PlayRequest, 1), script: []*pb.PlayResponse{
		{Body: &pb.PlayResponse_Welcome{Welcome: &pb.Welcome{BotName: "tester"}}},
		{Body: &pb.PlayResponse_Seated{Seated: &pb.Seated{MatchId: "m1", Variant: "indian", Seats: 2}}},
		{Body: &pb.PlayResponse_Decision{Decision: &pb.DecisionRequest{MatchId: "m1", RequestId: 7,
			Phase: pb.Phase_PHASE_DRAW, View: &pb.SeatView{Variant: "indian"}, LegalActions: []*pb.Action{DrawStock()}}}},
		{Body: &pb.PlayResponse_Rejected{Rejected: &pb.ActionRejected{MatchId: "m1", RequestId: 7,
			Code: "TEST_CODE", Message: "a scripted rejection"}}},
		{Body: &pb.PlayResponse_MatchResult{MatchResult: &pb.MatchResult{MatchId: "m1",
			Status: pb.MatchStatus_MATCH_STATUS_FINISHED}}},
	}}
	got := playSeat(t, ref, "m1")
	if len(got) != 2 {
		t.Fatalf("want the join and one answer, got %v", got)
	}
	join := got[0].GetJoin()
	if join.GetSeat().GetMatchId() != "m1" || join.GetSeat().GetToken() != "secret" || join.GetSdk() != SDKVersion {
		t.Errorf("join: %v", join)
	}
	answer := got[1].GetAction()
	if answer.GetMatchId() != "m1" || answer.GetRequestId() != 7 || answer.GetAction().GetDrawStock() == nil {
		t.Errorf("answer: %v", answer)
	}
}

// The SDK asks for batches and takes one apart in order: the seating, the request (answered) and the result
// sent as one message are handled as if sent one by one.
func TestABatchIsTakenApartInOrder(t *testing.T) {
	inner := []*pb.PlayResponse{
		{Body: &pb.PlayResponse_Seated{Seated: &pb.Seated{MatchId: "m2", Variant: "indian", Seats: 2}}},
		{Body: &pb.PlayResponse_Decision{Decision: &pb.DecisionRequest{MatchId: "m2", RequestId: 3,
			Phase: pb.Phase_PHASE_DRAW, View: &pb.SeatView{Variant: "indian"}, LegalActions: []*pb.Action{DrawStock()}}}},
	}
	ref := &scriptedReferee{received: make(chan []*pb.PlayRequest, 1), script: []*pb.PlayResponse{
		{Body: &pb.PlayResponse_Welcome{Welcome: &pb.Welcome{BotName: "tester"}}},
		{Body: &pb.PlayResponse_Batch{Batch: &pb.Batch{Messages: inner}}},
		{Body: &pb.PlayResponse_Batch{Batch: &pb.Batch{Messages: []*pb.PlayResponse{
			{Body: &pb.PlayResponse_Accepted{Accepted: &pb.ActionAccepted{MatchId: "m2", RequestId: 3}}},
			{Body: &pb.PlayResponse_MatchResult{MatchResult: &pb.MatchResult{MatchId: "m2",
				Status: pb.MatchStatus_MATCH_STATUS_FINISHED}}},
		}}}},
	}}
	ref.waitAfterBatch = true
	got := playSeat(t, ref, "m2")
	if len(got) != 2 || !got[0].GetJoin().GetBatch() || got[1].GetAction().GetRequestId() != 3 {
		t.Fatalf("want a join asking for batches and one answer to request 3, got %v", got)
	}
}

// serveScripted serves ref on a free port of 127.0.0.1 until the test ends; it returns the address.
func serveScripted(t *testing.T, ref *scriptedReferee) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer()
	pb.RegisterRefereeServiceServer(server, ref)
	go server.Serve(lis)
	t.Cleanup(server.Stop)
	return lis.Addr().String()
}

// playSeat runs the SDK in seat mode against ref until its one match ends, checks that it was seated once and
// returned that match's result, and gives what ref received.
func playSeat(t *testing.T, ref *scriptedReferee, matchID string) []*pb.PlayRequest {
	t.Helper()
	address := serveScripted(t, ref)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bot := &firstLegal{}
	results, err := Run(ctx, bot, Options{Referee: address, MatchID: matchID, SeatToken: "secret", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].GetMatchId() != matchID || len(bot.seated) != 1 {
		t.Fatalf("results %v, seated %v", results, bot.seated)
	}
	return <-ref.received
}

// A unix: address reaches a referee on a Unix domain socket, written either way gRPC names one.
func TestAUnixSocketAddressIsDialed(t *testing.T) {
	dir, err := os.MkdirTemp("", "rummy-go-") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ref.sock")
	lis, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ref := &scriptedReferee{received: make(chan []*pb.PlayRequest, 2), script: []*pb.PlayResponse{
		{Body: &pb.PlayResponse_Welcome{Welcome: &pb.Welcome{BotName: "tester"}}},
		{Body: &pb.PlayResponse_MatchResult{MatchResult: &pb.MatchResult{MatchId: "m3",
			Status: pb.MatchStatus_MATCH_STATUS_FINISHED}}},
	}}
	server := grpc.NewServer()
	pb.RegisterRefereeServiceServer(server, ref)
	go server.Serve(lis)
	defer server.Stop()
	for _, address := range []string{"unix:" + path, "unix://" + path} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		results, err := Run(ctx, &firstLegal{}, Options{Referee: address, MatchID: "m3", SeatToken: "s", Name: "t"})
		cancel()
		if err != nil || len(results) != 1 || results[0].GetMatchId() != "m3" {
			t.Fatalf("%s: results %v, error %v", address, results, err)
		}
		if join := (<-ref.received)[0].GetJoin(); join.GetSeat().GetToken() != "s" {
			t.Fatalf("%s: join %v", address, join)
		}
	}
}

// With nothing listening, Run fails at once with an *UnreachableError whose one line names the address, and
// never the token.
func TestNoRefereeIsAnUnreachableErrorNamingTheAddress(t *testing.T) {
	dir := t.TempDir()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := lis.Addr().String()
	lis.Close()
	for _, address := range []string{"unix:" + filepath.Join(dir, "none.sock"), closed} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := Run(ctx, &firstLegal{}, Options{Referee: address, BotToken: "tok-7f3a", Name: "t"})
		cancel()
		var unreachable *UnreachableError
		if !errors.As(err, &unreachable) || unreachable.Address != address {
			t.Fatalf("%s: want an UnreachableError, got %T %v", address, err, err)
		}
		text := err.Error()
		if !strings.HasPrefix(text, "cannot reach the referee at "+address+": ") || strings.Contains(text, "\n") ||
			strings.Contains(text, "tok-7f3a") {
			t.Fatalf("%s: %q", address, text)
		}
	}
}

func TestOptionsPrintWithoutTheirTokens(t *testing.T) {
	o := Options{Referee: "unix:/run/r.sock", BotToken: "bot-secret", MatchID: "m", SeatToken: "seat-secret"}
	for _, text := range []string{fmt.Sprint(o), fmt.Sprintf("%+v", o), fmt.Sprintf("%v", &o)} {
		if strings.Contains(text, "secret") || !strings.Contains(text, "unix:/run/r.sock") {
			t.Fatalf("%q", text)
		}
	}
}
