package rummybot

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
)

// streamReferee plays each Play stream with the next of its scripts.
type streamReferee struct {
	pb.UnimplementedRefereeServiceServer
	mu      sync.Mutex
	scripts []func(stream pb.RefereeService_PlayServer, join *pb.Join) error
	joins   []*pb.Join
}

func (r *streamReferee) Play(stream pb.RefereeService_PlayServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.joins = append(r.joins, first.GetJoin())
	script := r.scripts[0]
	if len(r.scripts) > 1 {
		r.scripts = r.scripts[1:]
	}
	r.mu.Unlock()
	return script(stream, first.GetJoin())
}

func serveOn(t *testing.T, address string, ref *streamReferee) (*grpc.Server, string) {
	t.Helper()
	var lis net.Listener
	var err error
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) { // the same port again
		if lis, err = net.Listen("tcp", address); err == nil || time.Now().After(end) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer()
	pb.RegisterRefereeServiceServer(server, ref)
	go server.Serve(lis)
	return server, lis.Addr().String()
}

type counting struct {
	decided int
	seated  int
	events  []uint64
}

func (b *counting) Decide(_ context.Context, _ *pb.SeatView, legal []*pb.Action, _ Request) *pb.Action {
	b.decided++
	return legal[0]
}
func (b *counting) OnSeated(*pb.Seated)      { b.seated++ }
func (b *counting) OnEvent(e *pb.MatchEvent) { b.events = append(b.events, e.GetSeq()) }

func send(stream pb.RefereeService_PlayServer, msgs ...*pb.PlayResponse) error {
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			return err
		}
	}
	return nil
}

var (
	welcome  = &pb.PlayResponse{Body: &pb.PlayResponse_Welcome{Welcome: &pb.Welcome{BotName: "b"}}}
	seated   = &pb.PlayResponse{Body: &pb.PlayResponse_Seated{Seated: &pb.Seated{MatchId: "m1"}}}
	decision = &pb.PlayResponse{Body: &pb.PlayResponse_Decision{Decision: &pb.DecisionRequest{MatchId: "m1",
		RequestId: 7, LegalActions: []*pb.Action{{}}}}}
)

func event(seq uint64) *pb.PlayResponse {
	return &pb.PlayResponse{Body: &pb.PlayResponse_Event{Event: &pb.MatchEvent{MatchId: "m1", Seq: seq}}}
}

// A bot told to reconnect forever outlives a referee that is gone for longer than any count of tries: when one
// answers on the same address again, the bot joins naming the last event it saw, sees each event once, is asked
// the open decision again and answers it with what it answered before, without deciding twice.
func TestReconnectForeverOutlivesARefereeRestart(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := lis.Addr().String()
	lis.Close()
	answered := make(chan *pb.PlayRequest, 4)
	before := &streamReferee{scripts: []func(pb.RefereeService_PlayServer, *pb.Join) error{
		func(stream pb.RefereeService_PlayServer, _ *pb.Join) error {
			if err := send(stream, welcome, seated, event(1), decision); err != nil {
				return err
			}
			a, err := stream.Recv()
			if err != nil {
				return err
			}
			answered <- a
			return status.Error(codes.Unavailable, "going away")
		}}}
	after := &streamReferee{scripts: []func(pb.RefereeService_PlayServer, *pb.Join) error{
		func(stream pb.RefereeService_PlayServer, _ *pb.Join) error {
			if err := send(stream, welcome, seated, event(1), event(2), decision); err != nil {
				return err
			}
			a, err := stream.Recv()
			if err != nil {
				return err
			}
			answered <- a
			return send(stream, &pb.PlayResponse{Body: &pb.PlayResponse_MatchResult{MatchResult: &pb.MatchResult{
				MatchId: "m1", Status: pb.MatchStatus_MATCH_STATUS_FINISHED}}}) // then the stream ends: done
		}}}
	server, _ := serveOn(t, address, before)
	var mu sync.Mutex
	var lines []string
	bot := &counting{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type outcome struct {
		results []*pb.MatchResult
		err     error
	}
	done := make(chan outcome, 1)
	go func() {
		results, err := Run(ctx, bot, Options{Referee: address, BotToken: "key-s3cret", Name: "b",
			ReconnectForever: true, BackoffInitial: 5 * time.Millisecond, BackoffCap: 40 * time.Millisecond,
			Log: func(line string) { mu.Lock(); lines = append(lines, line); mu.Unlock() }})
		done <- outcome{results, err}
	}()
	<-answered
	server.Stop()
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(lines)
		mu.Unlock()
		if n > 12 { // more tries than the Python SDK's bounded count (8): still there
			break
		}
		if time.Now().After(end) {
			t.Fatalf("only %d reconnect lines", n)
		}
	}
	select {
	case o := <-done:
		t.Fatalf("gave up while the referee was down: %v", o.err)
	default:
	}
	server, _ = serveOn(t, address, after)
	defer server.Stop()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("not back after the restart")
	}
	if o.err != nil || len(o.results) != 1 {
		t.Fatalf("results %v, error %v", o.results, o.err)
	}
	again := <-answered
	if again.GetAction().GetRequestId() != 7 || bot.decided != 1 || bot.seated != 1 {
		t.Fatalf("answer %v, decided %d times, seated %d times", again, bot.decided, bot.seated)
	}
	if len(bot.events) != 2 || bot.events[0] != 1 || bot.events[1] != 2 {
		t.Fatalf("events %v: each once, in order", bot.events)
	}
	resume := after.joins[0].GetResume()
	if len(resume) != 1 || resume[0].GetMatchId() != "m1" || resume[0].GetLastSeq() != 1 {
		t.Fatalf("resume %v", resume)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, line := range lines {
		if strings.Contains(line, "s3cret") || strings.Contains(line, "\n") || !strings.Contains(line, address) ||
			!strings.Contains(line, "joining again in") {
			t.Fatalf("%q", line)
		}
	}
}

// Without ReconnectForever the bot ends when its referee goes away, as before; with it, a final answer (a
// revoked key) still ends it, and a referee that never answered still fails at once.
func TestReconnectForeverStopsOnAFinalAnswerAndOnNoReferee(t *testing.T) {
	goneThenRevoked := func() *streamReferee {
		return &streamReferee{scripts: []func(pb.RefereeService_PlayServer, *pb.Join) error{
			func(stream pb.RefereeService_PlayServer, _ *pb.Join) error {
				_ = send(stream, welcome)
				return status.Error(codes.Unavailable, "going away")
			},
			func(pb.RefereeService_PlayServer, *pb.Join) error {
				return status.Error(codes.Unauthenticated, "BOT_TOKEN_UNKNOWN: revoked")
			}}}
	}
	quiet := func(string) {}
	for _, forever := range []bool{false, true} {
		ref := goneThenRevoked()
		server, address := serveOn(t, "127.0.0.1:0", ref)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := Run(ctx, &counting{}, Options{Referee: address, BotToken: "k", ReconnectForever: forever,
			BackoffInitial: time.Millisecond, Log: quiet})
		cancel()
		server.Stop()
		want, joins := codes.Unavailable, 1
		if forever {
			want, joins = codes.Unauthenticated, 2
		}
		if status.Code(err) != want || len(ref.joins) != joins {
			t.Fatalf("forever=%v: %v after %d joins", forever, err, len(ref.joins))
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := lis.Addr().String()
	lis.Close()
	started := time.Now()
	_, err = Run(context.Background(), &counting{}, Options{Referee: closed, BotToken: "k", ReconnectForever: true,
		Log: quiet})
	var unreachable *UnreachableError
	if !errors.As(err, &unreachable) || time.Since(started) > 10*time.Second {
		t.Fatalf("a wrong address: %T %v after %v", err, err, time.Since(started))
	}
}

func TestBackoffDoublesToItsCapWithJitter(t *testing.T) {
	for attempt := 1; attempt < 40; attempt++ {
		full := 250 * time.Millisecond << min(attempt-1, 10)
		full = min(full, 30*time.Second)
		for i := 0; i < 20; i++ {
			if w := backoff(250*time.Millisecond, 30*time.Second, attempt); w < full/2 || w > full {
				t.Fatalf("attempt %d: %v not in [%v, %v]", attempt, w, full/2, full)
			}
		}
	}
}

func TestReconnectForeverFromEnv(t *testing.T) {
	for value, want := range map[string]bool{"": false, "forever": true, " Forever ": true} {
		if got, err := ReconnectForeverFromEnv(value); err != nil || got != want {
			t.Fatalf("%q: %v %v", value, got, err)
		}
	}
	if _, err := ReconnectForeverFromEnv("always"); err == nil || !strings.Contains(err.Error(), "RUMMY_RECONNECT") {
		t.Fatalf("a typo is told: %v", err)
	}
}
