package rummybot

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
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
// When nothing answers at opts.Referee, the error is an *UnreachableError.
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
	conn, err := grpc.NewClient(opts.Referee, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("referee address %q: %w", opts.Referee, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream on every return
	stream, err := pb.NewRefereeServiceClient(conn).Play(ctx)
	if err != nil {
		return nil, unreachable(ctx, opts.Referee, err)
	}
	// A failed Send is io.EOF; the next Recv says why the stream ended.
	_ = stream.Send(&pb.PlayRequest{Body: &pb.PlayRequest_Join{Join: join}})
	s := session{ctx: ctx, bot: bot, hooks: hooks(bot), stream: stream, pending: map[string]Request{}}
	for received := false; ; received = true {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return s.results, nil
		}
		if err != nil && !received {
			return nil, unreachable(ctx, opts.Referee, err)
		}
		if err != nil {
			return s.results, err
		}
		for _, one := range unbatch(msg) {
			result, err := s.handle(one)
			if err != nil && !errors.Is(err, io.EOF) { // on io.EOF the next Recv says why the stream ended
				return s.results, err
			}
			if result != nil && result.GetMatchId() == opts.MatchID {
				return s.results, stream.CloseSend()
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

// session is the state of one Play stream: the open decision of each match, keyed by match id, so that a
// rejection can be handed to the bot with the request it answers.
type session struct {
	ctx     context.Context // the stream's: done when the bot is stopped
	bot     Bot
	hooks   any // where the optional hooks are looked for (the bot, or the SimpleBot it wraps)
	stream  pb.RefereeService_PlayClient
	pending map[string]Request
	results []*pb.MatchResult
}

// handle reacts to one referee message; it returns the match result when the message is one.
func (s *session) handle(msg *pb.PlayResponse) (*pb.MatchResult, error) {
	switch body := msg.GetBody().(type) {
	case *pb.PlayResponse_Decision:
		req := newRequest(body.Decision)
		s.pending[req.MatchID] = req
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
		if req, ok := s.pending[body.Accepted.GetMatchId()]; ok && req.RequestID == body.Accepted.GetRequestId() {
			delete(s.pending, req.MatchID)
		}
	case *pb.PlayResponse_Seated:
		if hook, ok := s.hooks.(SeatedHook); ok {
			hook.OnSeated(body.Seated)
		}
	case *pb.PlayResponse_Event:
		if hook, ok := s.hooks.(EventHook); ok {
			hook.OnEvent(body.Event)
		}
	case *pb.PlayResponse_HandResult:
		if hook, ok := s.hooks.(HandResultHook); ok {
			hook.OnHandResult(body.HandResult)
		}
	case *pb.PlayResponse_MatchResult:
		result := body.MatchResult
		delete(s.pending, result.GetMatchId())
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
	return s.stream.Send(&pb.PlayRequest{Body: &pb.PlayRequest_Action{Action: &pb.ActionMessage{
		MatchId: req.MatchID, RequestId: req.RequestID, Action: action,
	}}})
}
