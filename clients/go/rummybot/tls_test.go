package rummybot

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	pb "github.com/rummy-referee/rummy/clients/go/gen/rummy/referee/v1"
)

func envOf(values map[string]string) func(string) string {
	return func(key string) string { return values[key] }
}

// Plaintext unless asked; RUMMY_TLS (any value) trusts the system's roots; a CA or a client certificate implies
// TLS; a flag wins over its variable; a certificate without its key is refused.
func TestTLSFromEnv(t *testing.T) {
	cases := []struct {
		name                  string
		env                   map[string]string
		flagTLS               bool
		root, clientC, client string
		want                  *TLS
	}{
		{name: "plaintext by default", want: nil},
		{name: "RUMMY_TLS=1", env: map[string]string{"RUMMY_TLS": "1"}, want: &TLS{}},
		{name: "--tls", flagTLS: true, want: &TLS{}},
		{name: "a CA from the environment", env: map[string]string{"RUMMY_TLS_ROOT_CERT": "/etc/ca.pem"},
			want: &TLS{RootCert: "/etc/ca.pem"}},
		{name: "the flag wins", env: map[string]string{"RUMMY_TLS_ROOT_CERT": "/etc/ca.pem"}, root: "mine.pem",
			want: &TLS{RootCert: "mine.pem"}},
		{name: "mutual TLS from the environment", env: map[string]string{"RUMMY_TLS_CLIENT_CERT": "bot.crt",
			"RUMMY_TLS_CLIENT_KEY": "bot.key"}, want: &TLS{ClientCert: "bot.crt", ClientKey: "bot.key"}},
		{name: "mutual TLS, cert by flag and key by variable", env: map[string]string{"RUMMY_TLS_CLIENT_KEY": "bot.key"},
			clientC: "bot.crt", want: &TLS{ClientCert: "bot.crt", ClientKey: "bot.key"}},
	}
	for _, c := range cases {
		got, err := TLSFromEnv(envOf(c.env), c.flagTLS, c.root, c.clientC, c.client)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v %v, want %+v", c.name, got, err, c.want)
		}
	}
	for _, env := range []map[string]string{{"RUMMY_TLS_CLIENT_CERT": "bot.crt"}, {"RUMMY_TLS_CLIENT_KEY": "bot.key"}} {
		if got, err := TLSFromEnv(envOf(env), false, "", "", ""); err == nil || !strings.Contains(err.Error(), "go together") {
			t.Errorf("%v: accepted as %+v", env, got)
		}
	}
}

// ParseFlags reads the TLS flags and variables into Flags.TLS; half a client key pair is a command-line error.
func TestParseFlagsReadsTheTLSOptions(t *testing.T) {
	for _, key := range []string{"RUMMY_TLS", "RUMMY_TLS_ROOT_CERT", "RUMMY_TLS_CLIENT_CERT", "RUMMY_TLS_CLIENT_KEY"} {
		t.Setenv(key, "")
	}
	f, err := ParseFlags(flag.NewFlagSet("bot", flag.ContinueOnError), nil)
	if err != nil || f.TLS != nil {
		t.Fatalf("plaintext by default: %+v %v", f.TLS, err)
	}
	f, err = ParseFlags(flag.NewFlagSet("bot", flag.ContinueOnError), []string{"--tls"})
	if err != nil || !reflect.DeepEqual(f.TLS, &TLS{}) {
		t.Fatalf("--tls: %+v %v", f.TLS, err)
	}
	t.Setenv("RUMMY_TLS_ROOT_CERT", "/etc/ca.pem")
	f, err = ParseFlags(flag.NewFlagSet("bot", flag.ContinueOnError),
		[]string{"--tls-client-cert", "bot.crt", "--tls-client-key", "bot.key"})
	want := &TLS{RootCert: "/etc/ca.pem", ClientCert: "bot.crt", ClientKey: "bot.key"}
	if err != nil || !reflect.DeepEqual(f.TLS, want) {
		t.Fatalf("got %+v %v, want %+v", f.TLS, err, want)
	}
	fs := flag.NewFlagSet("bot", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := ParseFlags(fs, []string{"--tls-client-cert", "bot.crt"}); err == nil {
		t.Fatal("a client certificate without its key accepted")
	}
}

// pki writes a throwaway CA, a server certificate naming 127.0.0.1 and localhost, and a client certificate, as
// PEM files in a temporary folder: NAME.crt and NAME.key for ca, server and client.
func pki(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{}
	save := func(name string, der []byte, key *ecdsa.PrivateKey) {
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		for suffix, block := range map[string]*pem.Block{
			".crt": {Type: "CERTIFICATE", Bytes: der}, ".key": {Type: "PRIVATE KEY", Bytes: keyDER}} {
			path := filepath.Join(dir, name+suffix)
			if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
				t.Fatal(err)
			}
			files[name+suffix] = path
		}
	}
	newKey := func() *ecdsa.PrivateKey {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	template := func(serial int64, name string) *x509.Certificate {
		return &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-5 * time.Minute), NotAfter: time.Now().Add(24 * time.Hour)}
	}
	caKey := newKey()
	ca := template(1, "rummy test CA")
	ca.IsCA, ca.BasicConstraintsValid, ca.KeyUsage = true, true, x509.KeyUsageCertSign
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	save("ca", caDER, caKey)
	for i, name := range []string{"server", "client"} {
		key := newKey()
		leaf := template(int64(i+2), name)
		leaf.KeyUsage = x509.KeyUsageDigitalSignature
		if name == "server" {
			leaf.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
			leaf.DNSNames, leaf.IPAddresses = []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}
		} else {
			leaf.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		}
		der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		save(name, der, key)
	}
	return files
}

// The credentials follow the options: insecure without TLS, TLS with it; a file that cannot be used is a
// *TLSFileError naming it, before any connection.
func TestTransportCredentialsFollowTheOptions(t *testing.T) {
	files := pki(t)
	for _, c := range []struct {
		tls  *TLS
		want string
	}{
		{nil, "insecure"}, {&TLS{}, "tls"}, {&TLS{RootCert: files["ca.crt"]}, "tls"},
		{&TLS{RootCert: files["ca.crt"], ClientCert: files["client.crt"], ClientKey: files["client.key"]}, "tls"},
	} {
		creds, err := TransportCredentials(c.tls)
		if err != nil || creds.Info().SecurityProtocol != c.want {
			t.Errorf("%+v: got %v %v, want %s", c.tls, creds, err, c.want)
		}
	}
	missing := filepath.Join(t.TempDir(), "none.pem")
	for _, c := range []struct {
		tls  *TLS
		path string
	}{
		{&TLS{RootCert: missing}, missing},
		{&TLS{RootCert: files["ca.key"]}, files["ca.key"]}, // a key, not a certificate
		{&TLS{ClientCert: files["client.crt"], ClientKey: missing}, missing},
		{&TLS{ClientCert: files["client.crt"], ClientKey: files["server.key"]}, files["client.crt"]}, // not its key
	} {
		_, err := TransportCredentials(c.tls)
		var bad *TLSFileError
		if !errors.As(err, &bad) || !strings.HasPrefix(err.Error(), "cannot read the TLS file "+c.path) ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: got %T %v", c.tls, err, err)
		}
	}
}

// serveTLS serves ref over TLS with the pki's server certificate on a free port of 127.0.0.1; with mutual, the
// referee asks for a client certificate that the CA signed.
func serveTLS(t *testing.T, files map[string]string, ref *scriptedReferee, mutual bool) string {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(files["server.crt"], files["server.key"])
	if err != nil {
		t.Fatal(err)
	}
	config := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if mutual {
		pemCA, err := os.ReadFile(files["ca.crt"])
		if err != nil {
			t.Fatal(err)
		}
		config.ClientCAs = x509.NewCertPool()
		config.ClientCAs.AppendCertsFromPEM(pemCA)
		config.ClientAuth = tls.RequireAndVerifyClientCert
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer(grpc.Creds(credentials.NewTLS(config)))
	pb.RegisterRefereeServiceServer(server, ref)
	go server.Serve(lis)
	t.Cleanup(server.Stop)
	return lis.Addr().String()
}

func oneMatch(matchID string) *scriptedReferee {
	return &scriptedReferee{received: make(chan []*pb.PlayRequest, 1), script: []*pb.PlayResponse{
		{Body: &pb.PlayResponse_Welcome{Welcome: &pb.Welcome{BotName: "t"}}},
		{Body: &pb.PlayResponse_MatchResult{MatchResult: &pb.MatchResult{MatchId: matchID,
			Status: pb.MatchStatus_MATCH_STATUS_FINISHED}}},
	}}
}

func runSeat(address string, tlsOptions *TLS) ([]*pb.MatchResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return Run(ctx, &firstLegal{}, Options{Referee: address, MatchID: "m1", SeatToken: "seat-7f3a", Name: "t",
		TLS: tlsOptions})
}

// Given the CA that signed the referee's certificate, the bot plays its seat over TLS; in plaintext, or trusting
// only the system's roots, it fails at once with one line naming the address (never the token).
func TestRunOverTLS(t *testing.T) {
	files := pki(t)
	address := serveTLS(t, files, oneMatch("m1"), false)
	results, err := runSeat(address, &TLS{RootCert: files["ca.crt"]})
	if err != nil || len(results) != 1 || results[0].GetMatchId() != "m1" {
		t.Fatalf("over TLS: %v %v", results, err)
	}
	for _, tlsOptions := range []*TLS{nil, {}} {
		_, err := runSeat(address, tlsOptions)
		var unreachable *UnreachableError
		if !errors.As(err, &unreachable) || !strings.HasPrefix(err.Error(), "cannot reach the referee at "+address+": ") ||
			strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "seat-7f3a") {
			t.Errorf("TLS %+v: want an UnreachableError, got %T %v", tlsOptions, err, err)
		}
	}
}

// A referee asking for mutual TLS seats a bot that shows a certificate its CA signed, and no other.
func TestRunOverMutualTLS(t *testing.T) {
	files := pki(t)
	address := serveTLS(t, files, oneMatch("m1"), true)
	results, err := runSeat(address, &TLS{RootCert: files["ca.crt"], ClientCert: files["client.crt"],
		ClientKey: files["client.key"]})
	if err != nil || len(results) != 1 {
		t.Fatalf("with the client certificate: %v %v", results, err)
	}
	if results, err := runSeat(address, &TLS{RootCert: files["ca.crt"]}); err == nil {
		t.Fatalf("seated without a client certificate: %v", results)
	}
}
