package rummybot

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DefaultReferee is where a bot connects when neither --referee nor RUMMY_REFEREE says otherwise.
const DefaultReferee = "127.0.0.1:50051"

// Flags are the command line every bot takes. The tournament runner passes --referee and --bot-token (and sets
// RUMMY_REFEREE, RUMMY_BOT_TOKEN, RUMMY_BOT_SEED); a single seat is --match ID --token T.
type Flags struct {
	Options
	Seed    int64
	HasSeed bool // --seed or RUMMY_BOT_SEED was given
}

// ParseFlags registers the SDK's flags on fs, with defaults from the environment, and parses args. A bot may
// register flags of its own on fs first.
func ParseFlags(fs *flag.FlagSet, args []string) (Flags, error) {
	var f Flags
	fs.StringVar(&f.Referee, "referee", envOr("RUMMY_REFEREE", DefaultReferee), "the referee's HOST:PORT")
	fs.StringVar(&f.BotToken, "bot-token", os.Getenv("RUMMY_BOT_TOKEN"), "play match after match with this bot token")
	fs.StringVar(&f.MatchID, "match", os.Getenv("RUMMY_MATCH"), "match id (with --token: play one seat)")
	fs.StringVar(&f.SeatToken, "token", os.Getenv("RUMMY_SEAT_TOKEN"), "seat token of --match")
	fs.StringVar(&f.Name, "name", "", "bot name sent to the referee")
	// an unreadable RUMMY_BOT_SEED is ignored, as the Python SDK does; an unreadable --seed is an error
	f.Seed, f.HasSeed = parseSeed(os.Getenv("RUMMY_BOT_SEED"))
	fs.Func("seed", "seed for the bot's own random choices (default $RUMMY_BOT_SEED)", func(s string) error {
		if f.Seed, f.HasSeed = parseSeed(s); !f.HasSeed {
			return fmt.Errorf("not an integer: %q", s)
		}
		return nil
	})
	err := fs.Parse(args)
	return f, err
}

func parseSeed(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// Main runs bot from the command line (see ParseFlags) until the referee is done with it, then exits: 0 when
// the stream ended normally, after the seat's match, on Ctrl-C, or (bot-token mode) when the referee went away.
func Main(bot Bot) {
	f, err := ParseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if f.Name == "" {
		f.Name = "go-bot"
		if named, ok := bot.(Named); ok {
			f.Name = named.Name()
		}
	}
	if seeded, ok := bot.(Seeded); ok && f.HasSeed {
		seeded.Seed(f.Seed)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = Run(ctx, bot, f.Options)
	code := status.Code(err)
	switch {
	case err == nil, ctx.Err() != nil:
	case f.MatchID == "" && (code == codes.Unavailable || code == codes.Canceled):
		fmt.Fprintf(os.Stderr, "%s: the referee closed the connection: %v\n", f.Name, err)
	default:
		fmt.Fprintf(os.Stderr, "%s: %v\n", f.Name, err)
		stop()
		os.Exit(1)
	}
}
