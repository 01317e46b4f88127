package rummybot

import (
	"flag"
	"io"
	"testing"
)

func TestParseFlagsFallsBackToTheEnvironment(t *testing.T) {
	t.Setenv("RUMMY_REFEREE", "10.0.0.1:1")
	t.Setenv("RUMMY_BOT_TOKEN", "tok")
	t.Setenv("RUMMY_BOT_SEED", "42")
	f, err := ParseFlags(flag.NewFlagSet("bot", flag.ContinueOnError), []string{"--name", "n"})
	if err != nil || f.Referee != "10.0.0.1:1" || f.BotToken != "tok" || f.Name != "n" || !f.HasSeed || f.Seed != 42 {
		t.Fatalf("%+v %v", f, err)
	}
	f, err = ParseFlags(flag.NewFlagSet("bot", flag.ContinueOnError),
		[]string{"--referee", "h:2", "--match", "m", "--token", "s", "--seed", "7"})
	if err != nil || f.Referee != "h:2" || f.MatchID != "m" || f.SeatToken != "s" || f.Seed != 7 {
		t.Fatalf("%+v %v", f, err)
	}
}

func TestParseFlagsDefaults(t *testing.T) {
	t.Setenv("RUMMY_REFEREE", "")
	t.Setenv("RUMMY_BOT_SEED", "not-a-number") // ignored, as the Python SDK does
	f, err := ParseFlags(flag.NewFlagSet("bot", flag.ContinueOnError), nil)
	if err != nil || f.Referee != DefaultReferee || f.HasSeed {
		t.Fatalf("%+v %v", f, err)
	}
	fs := flag.NewFlagSet("bot", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := ParseFlags(fs, []string{"--seed", "x"}); err == nil {
		t.Fatal("--seed x accepted")
	}
}

func TestParseFlagsReadsRUMMY_RECONNECT(t *testing.T) {
	t.Setenv("RUMMY_RECONNECT", "forever")
	f, err := ParseFlags(flag.NewFlagSet("bot", flag.ContinueOnError), nil)
	if err != nil || !f.ReconnectForever {
		t.Fatalf("%+v %v", f, err)
	}
	t.Setenv("RUMMY_RECONNECT", "")
	f, err = ParseFlags(flag.NewFlagSet("bot", flag.ContinueOnError), []string{"--reconnect-forever"})
	if err != nil || !f.ReconnectForever {
		t.Fatalf("%+v %v", f, err)
	}
	if f, _ = ParseFlags(flag.NewFlagSet("bot", flag.ContinueOnError), nil); f.ReconnectForever {
		t.Fatal("on by default")
	}
	t.Setenv("RUMMY_RECONNECT", "yes")
	if _, err := ParseFlags(flag.NewFlagSet("bot", flag.ContinueOnError), nil); err == nil {
		t.Fatal("RUMMY_RECONNECT=yes accepted")
	}
}
