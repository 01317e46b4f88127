package rummybot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
)

// Options say where to connect and as what. Either BotToken (be seated in match after match until the referee
// closes the stream) or MatchID with SeatToken (play that one seat, return after its result).
type Options struct {
	Referee   string // HOST:PORT, or unix:/abs/path (unix:///abs/path) for a Unix domain socket
	BotToken  string
	MatchID   string
	SeatToken string
	Name      string // sent in the Join, for the referee's logs and records
	// TLS to the referee (--tls, --tls-root-cert ... from Main); nil: plaintext.
	TLS *TLS
	// ReconnectForever (bot-token mode): once welcomed, join again without end when the stream drops (a
	// ladder's restart), waiting BackoffInitial (0: ReconnectInitial) doubling to BackoffCap (0: ReconnectCap).
	ReconnectForever bool
	BackoffInitial   time.Duration
	BackoffCap       time.Duration
	Log              func(line string) // one line per reconnect; nil: stderr
}

// String shows the options with their tokens hidden, so that logging them never leaks a credential.
func (o Options) String() string {
	return fmt.Sprintf("{Referee:%s BotToken:%s MatchID:%s SeatToken:%s Name:%s}",
		o.Referee, redact(o.BotToken), o.MatchID, redact(o.SeatToken), o.Name)
}

func redact(token string) string {
	if token == "" {
		return ""
	}
	return "***"
}

// UnreachableError says that no referee answered at Address: the stream failed before its first message.
// Its text is one line naming the address (never a token).
type UnreachableError struct {
	Address string
	Err     error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the referee at %s: %s", e.Address, status.Convert(e.Err).Message())
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Run connects to the referee and plays until it closes the stream (bot-token mode) or the one match ends
// (seat mode), answering decisions one at a time in arrival order. It returns the results of the matches played.
// When nothing answers at opts.Referee, the error is an *UnreachableError (also a TLS referee spoken to in
// plaintext, or one whose certificate opts.TLS does not trust); a TLS file that cannot be used is a *TLSFileError.
//
// With opts.ReconnectForever (bot-token mode; RUMMY_RECONNECT=forever or --reconnect-forever from Main), a stream
// that drops after a referee welcomed the bot is joined again without end, waiting ReconnectInitial doubling to
// ReconnectCap, each wait a random part (half to all) of that; the Join names each match's last event seen, so
// the bot sees every event once and each decision once. A referee that never answered still fails at once, and a
// final answer (a revoked key) still ends it. Each reconnect is one line to opts.Log (stderr when nil).
func Run(ctx context.Context, bot Bot, opts Options) ([]*pb.MatchResult, error) {
	join := &pb.Join{BotName: opts.Name, Sdk: SDKVersion, Batch: true} // batches: one write per move
	switch {
	case opts.MatchID != "" && opts.SeatToken != "":
		join.Credential = &pb.Join_Seat{Seat: &pb.SeatCredential{MatchId: opts.MatchID, Token: opts.SeatToken}}
	case opts.MatchID == "" && opts.BotToken != "":
		join.Credential = &pb.Join_BotToken{BotToken: opts.BotToken}
	default:
		return nil, errors.New("give a bot token, or a match id and a seat token")
	}
	creds, err := TransportCredentials(opts.TLS)
	if err != nil {
		return nil, err
	}
	forever := opts.ReconnectForever && opts.MatchID == ""
	s := &session{bot: bot, hooks: hooks(bot), pending: map[string]Request{}, lastSeq: map[string]uint64{},
		seated: map[string]bool{}, finished: map[string]bool{}, sent: map[answerKey]*pb.Action{}}
	first, limit := orDefault(opts.BackoffInitial, ReconnectInitial), orDefault(opts.BackoffCap, ReconnectCap)
	say := opts.Log
	if say == nil {
		say = func(line string) { fmt.Fprintln(os.Stderr, line) }
	}
	for attempt := 1; ; attempt++ {
		join.Resume = s.resumePoints()
		done, err := s.play(ctx, opts, creds, join)
		if done || err == nil {
			return s.results, err
		}
		if s.joined {
			attempt = 1 // this stream was welcomed: its drop waits from the start again
		}
		if !forever || !s.welcomed || ctx.Err() != nil || !retryable(err) {
			if !s.welcomed {
				return nil, unreachable(ctx, opts.Referee, err)
			}
			return s.results, err
		}
		wait := backoff(first, limit, attempt)
		say(fmt.Sprintf("%s: no stream to the referee at %s (%s: %s); joining again in %.1f s (try %d)", opts.Name,
			opts.Referee, status.Code(err), oneLine(status.Convert(err).Message()), wait.Seconds(), attempt))
		select {
		case <-ctx.Done():
			return s.results, nil
		case <-time.After(wait):
		}
	}
}

// ReconnectInitial and ReconnectCap are the waits between joins when reconnecting forever (Options.BackoffInitial
// and Options.BackoffCap override them): 0.25 s doubling to 30 s.
var (
	ReconnectInitial = 250 * time.Millisecond
	ReconnectCap     = 30 * time.Second
)

// ReconnectEnv is the variable Main reads: "forever" reconnects without end, unset or empty does not.
const ReconnectEnv = "RUMMY_RECONNECT"

// ReconnectForeverFromEnv reads RUMMY_RECONNECT's value; anything but "forever" or nothing is an error, so that
// a typo is told rather than taken for "no".
func ReconnectForeverFromEnv(value string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "":
		return false, nil
	case "forever":
		return true, nil
	}
	return false, fmt.Errorf("%s is 'forever' or unset, not %q", ReconnectEnv, value)
}

func orDefault(d, fallback time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return fallback
}

// backoff is the attempt-th wait: first doubling to limit, then a random part (half to all) of it.
func backoff(first, limit time.Duration, attempt int) time.Duration {
	wait := first
	for i := 1; i < attempt && wait < limit; i++ {
		wait *= 2
	}
	wait = min(wait, limit)
	return wait/2 + time.Duration(rand.Int64N(int64(wait/2)+1))
}

// retryable: the stream dropped (the network, a referee restarting: Unavailable, or Internal), or a referee's
// limit was hit (every bot of a ladder joining at once after its restart). Anything else is final.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Internal, codes.ResourceExhausted:
		return true
	}
	return false
}

func oneLine(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > 160 {
		text = text[:160]
	}
	return text
}

// play runs one Play stream on a connection of its own (gRPC's connection backoff, up to 120 s, would otherwise
// outlast the referee's restart); done says the bot is finished (the stream ended, or the seat's match did).
func (s *session) play(ctx context.Context, opts Options, creds credentials.TransportCredentials, join *pb.Join) (bool,
	error) {
	s.joined = false
	conn, err := grpc.NewClient(opts.Referee, grpc.WithTransportCredentials(creds))
	if err != nil {
		return true, fmt.Errorf("referee address %q: %w", opts.Referee, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream on every return
	stream, err := pb.NewRefereeServiceClient(conn).Play(ctx)
	if err != nil {
		return false, err
	}
	s.ctx, s.stream = ctx, stream
	// A failed Send is io.EOF; the next Recv says why the stream ended.
	_ = stream.Send(&pb.PlayRequest{Body: &pb.PlayRequest_Join{Join: join}})
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return ctx.Err() != nil, err
		}
		for _, one := range unbatch(msg) {
			result, err := s.handle(one)
			if err != nil && !errors.Is(err, io.EOF) { // on io.EOF the next Recv says why the stream ended
				return true, err
			}
			if result != nil && result.GetMatchId() == opts.MatchID {
				return true, stream.CloseSend()
			}
		}
	}
}

// unreachable marks err, a failure before the referee's first message, as an *UnreachableError when it says
// the connection could not be made (not when the bot itself was stopped, nor when the referee refused the join).
func unreachable(ctx context.Context, address string, err error) error {
	if ctx.Err() == nil && status.Code(err) == codes.Unavailable {
		return &UnreachableError{Address: address, Err: err}
	}
	return err
}

// unbatch takes a Batch (sent because the Join asked for batches) apart into its messages, in order.
func unbatch(msg *pb.PlayResponse) []*pb.PlayResponse {
	if b, ok := msg.GetBody().(*pb.PlayResponse_Batch); ok {
		return b.Batch.GetMessages()
	}
	return []*pb.PlayResponse{msg}
}

// session is the state of a bot's Play streams: the open decision of each match, keyed by match id, so that a
// rejection can be handed to the bot with the request it answers; and, across reconnects, what was seen (the
// last event seq per match, the matches seated and finished) and answered, so nothing reaches the bot twice.
type session struct {
	ctx      context.Context // the current stream's: done when the bot is stopped
	bot      Bot
	hooks    any // where the optional hooks are looked for (the bot, or the SimpleBot it wraps)
	stream   pb.RefereeService_PlayClient
	pending  map[string]Request
	results  []*pb.MatchResult
	welcomed bool // a referee answered at least once: a later Unavailable means it went away
	joined   bool // the current stream was welcomed
	lastSeq  map[string]uint64
	seated   map[string]bool
	finished map[string]bool
	sent     map[answerKey]*pb.Action // answers not yet accepted: sent again when asked again after a rejoin
}

type answerKey struct {
	match   string
	request uint64
}

// resumePoints names, per match seated and not over, the last event seen (Join.resume): the referee resends
// what came after and the open request.
func (s *session) resumePoints() []*pb.ResumePoint {
	var points []*pb.ResumePoint
	for m := range s.seated {
		if !s.finished[m] {
			points = append(points, &pb.ResumePoint{MatchId: m, LastSeq: s.lastSeq[m]})
		}
	}
	sort.Slice(points, func(i, j int) bool { return points[i].GetMatchId() < points[j].GetMatchId() })
	return points
}

// handle reacts to one referee message; it returns the match result when the message is one.
func (s *session) handle(msg *pb.PlayResponse) (*pb.MatchResult, error) {
	switch body := msg.GetBody().(type) {
	case *pb.PlayResponse_Decision:
		req := newRequest(body.Decision)
		s.pending[req.MatchID] = req
		if action, ok := s.sent[answerKey{req.MatchID, req.RequestID}]; ok { // asked again after a rejoin
			return nil, s.answer(req, action)
		}
		ctx, cancel := context.WithCancel(s.ctx)
		if req.TimeLeft > 0 { // 0: the referee gave no clock
			ctx, cancel = context.WithTimeout(s.ctx, req.TimeLeft)
		}
		action := s.bot.Decide(ctx, req.Decision.GetView(), req.Decision.GetLegalActions(), req)
		cancel()
		return nil, s.answer(req, action)
	case *pb.PlayResponse_Rejected:
		r := body.Rejected
		req, ok := s.pending[r.GetMatchId()]
		if !ok || req.RequestID != r.GetRequestId() {
			return nil, nil // a stale request: the referee has moved on
		}
		if hook, ok := s.hooks.(RejectedHook); ok {
			return nil, s.answer(req, hook.OnRejected(r.GetCode(), r.GetMessage(), req))
		}
		ReportRejection(r.GetCode(), r.GetMessage())
	case *pb.PlayResponse_Accepted:
		delete(s.sent, answerKey{body.Accepted.GetMatchId(), body.Accepted.GetRequestId()})
		if req, ok := s.pending[body.Accepted.GetMatchId()]; ok && req.RequestID == body.Accepted.GetRequestId() {
			delete(s.pending, req.MatchID)
		}
	case *pb.PlayResponse_Welcome:
		s.welcomed, s.joined = true, true
	case *pb.PlayResponse_Seated:
		if s.seated[body.Seated.GetMatchId()] {
			return nil, nil // a rejoin seats it again: the bot hears of it once
		}
		s.seated[body.Seated.GetMatchId()] = true
		if hook, ok := s.hooks.(SeatedHook); ok {
			hook.OnSeated(body.Seated)
		}
	case *pb.PlayResponse_Event:
		e := body.Event
		if e.GetSeq() != 0 {
			if e.GetSeq() <= s.lastSeq[e.GetMatchId()] {
				return nil, nil // resent after a rejoin, and seen before it
			}
			s.lastSeq[e.GetMatchId()] = e.GetSeq()
		}
		if hook, ok := s.hooks.(EventHook); ok {
			hook.OnEvent(body.Event)
		}
	case *pb.PlayResponse_HandResult:
		if hook, ok := s.hooks.(HandResultHook); ok {
			hook.OnHandResult(body.HandResult)
		}
	case *pb.PlayResponse_MatchResult:
		result := body.MatchResult
		if s.finished[result.GetMatchId()] {
			return nil, nil
		}
		s.finished[result.GetMatchId()] = true
		delete(s.pending, result.GetMatchId())
		for k := range s.sent {
			if k.match == result.GetMatchId() {
				delete(s.sent, k)
			}
		}
		s.results = append(s.results, result)
		if hook, ok := s.hooks.(MatchResultHook); ok {
			hook.OnMatchResult(result)
		}
		return result, nil
	}
	return nil, nil
}

// answer sends action for req; nil sends nothing.
func (s *session) answer(req Request, action *pb.Action) error {
	if action == nil {
		return nil
	}
	s.sent[answerKey{req.MatchID, req.RequestID}] = action
	return s.stream.Send(&pb.PlayRequest{Body: &pb.PlayRequest_Action{Action: &pb.ActionMessage{
		MatchId: req.MatchID, RequestId: req.RequestID, Action: action,
	}}})
}
