package rummybot

import (
	"context"
	"errors"
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

// Flags are the command line every bot takes, each falling back to the environment. The tournament runner passes
// --referee (also RUMMY_REFEREE) and the token only in the environment (RUMMY_BOT_TOKEN, or RUMMY_MATCH and
// RUMMY_SEAT_TOKEN for one seat), with RUMMY_BOT_SEED: a flag is readable by every process on the host.
type Flags struct {
	Options
	Seed    int64
	HasSeed bool // --seed or RUMMY_BOT_SEED was given
}

// ParseFlags registers the SDK's flags on fs, with defaults from the environment, and parses args. A bot may
// register flags of its own on fs first.
func ParseFlags(fs *flag.FlagSet, args []string) (Flags, error) {
	var f Flags
	fs.StringVar(&f.Referee, "referee", envOr("RUMMY_REFEREE", DefaultReferee),
		"the referee's HOST:PORT, or unix:/PATH for a Unix socket")
	fs.StringVar(&f.BotToken, "bot-token", os.Getenv("RUMMY_BOT_TOKEN"), "play match after match with this bot token")
	fs.StringVar(&f.MatchID, "match", os.Getenv("RUMMY_MATCH"), "match id (with --token: play one seat)")
	fs.StringVar(&f.SeatToken, "token", os.Getenv("RUMMY_SEAT_TOKEN"), "seat token of --match")
	fs.StringVar(&f.Name, "name", "", "bot name sent to the referee")
	forever, envErr := ReconnectForeverFromEnv(os.Getenv(ReconnectEnv))
	fs.BoolVar(&f.ReconnectForever, "reconnect-forever", forever, "with a bot token: once welcomed, join again "+
		"without end when the referee goes away (a ladder's restart), 0.25 s doubling to 30 s (or RUMMY_RECONNECT=forever)")
	var useTLS bool
	var rootCert, clientCert, clientKey string
	fs.BoolVar(&useTLS, "tls", false, "connect with TLS, trusting the system's roots (or RUMMY_TLS=1)")
	fs.StringVar(&rootCert, "tls-root-cert", "", "connect with TLS, trusting this PEM CA (or RUMMY_TLS_ROOT_CERT)")
	fs.StringVar(&clientCert, "tls-client-cert", "", "mutual TLS: this bot's PEM certificate (or RUMMY_TLS_CLIENT_CERT)")
	fs.StringVar(&clientKey, "tls-client-key", "", "mutual TLS: this bot's PEM private key (or RUMMY_TLS_CLIENT_KEY)")
	// an unreadable RUMMY_BOT_SEED is ignored, as the Python SDK does; an unreadable --seed is an error
	f.Seed, f.HasSeed = parseSeed(os.Getenv("RUMMY_BOT_SEED"))
	fs.Func("seed", "seed for the bot's own random choices (default $RUMMY_BOT_SEED)", func(s string) error {
		if f.Seed, f.HasSeed = parseSeed(s); !f.HasSeed {
			return fmt.Errorf("not an integer: %q", s)
		}
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if envErr != nil {
		return f, envErr
	}
	tlsOptions, err := TLSFromEnv(os.Getenv, useTLS, rootCert, clientCert, clientKey)
	f.TLS = tlsOptions
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
// the stream ended normally, after the seat's match, on Ctrl-C, or (bot-token mode) when the referee went away
// after welcoming the bot (with RUMMY_RECONNECT=forever or --reconnect-forever: it joins again instead, without
// end); 1 with one line naming the address when no referee answered there (a TLS referee spoken to in plaintext,
// or one whose certificate is not trusted, included), one line naming a TLS file that cannot be read, and on any
// other failure; 2 on a bad command line (an RUMMY_RECONNECT other than "forever", or a client certificate
// without its key, included).
func Main(bot Bot) {
	f, err := ParseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if f.BotToken == "" && (f.MatchID == "" || f.SeatToken == "") {
		fmt.Fprintln(os.Stderr, "give RUMMY_BOT_TOKEN (or --bot-token T), or RUMMY_MATCH and RUMMY_SEAT_TOKEN (or --match ID --token T)")
		os.Exit(2)
	}
	if f.Name == "" {
		f.Name = "go-bot"
		if named, ok := hooks(bot).(Named); ok {
			f.Name = named.Name()
		}
	}
	if seeded, ok := hooks(bot).(Seeded); ok && f.HasSeed {
		seeded.Seed(f.Seed)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = Run(ctx, bot, f.Options)
	code := status.Code(err)
	var unreachable *UnreachableError
	var tlsFile *TLSFileError
	switch {
	case err == nil, ctx.Err() != nil:
	case errors.As(err, &unreachable), errors.As(err, &tlsFile):
		fmt.Fprintf(os.Stderr, "%s: %v\n", f.Name, err)
		stop()
		os.Exit(1)
	case f.MatchID == "" && (code == codes.Unavailable || code == codes.Canceled):
		fmt.Fprintf(os.Stderr, "%s: the referee closed the connection: %v\n", f.Name, err)
	default:
		fmt.Fprintf(os.Stderr, "%s: %v (referee %s)\n", f.Name, err, f.Referee)
		stop()
		os.Exit(1)
	}
}
