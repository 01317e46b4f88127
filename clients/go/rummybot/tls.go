package rummybot

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// TLS says how to reach a referee run with --tls-cert (Options.TLS; nil is plaintext). The referee's certificate
// is checked against RootCert, a PEM CA file, or without one against the system's roots, and must name the host
// of the referee's address (a DNS name, or the IP address itself). ClientCert and ClientKey (PEM files, both or
// neither) are this bot's own, for a referee that asks for mutual TLS (--tls-client-ca).
type TLS struct {
	RootCert   string
	ClientCert string
	ClientKey  string
}

// TLSFileError says that a file the TLS options name cannot be used (missing, unreadable, not PEM). Its text is
// one line naming the file.
type TLSFileError struct {
	Path string
	Err  error
}

func (e *TLSFileError) Error() string {
	return fmt.Sprintf("cannot read the TLS file %s: %v", e.Path, e.Err)
}

func (e *TLSFileError) Unwrap() error { return e.Err }

// TLSFromEnv reads the TLS options as the other SDKs do: RUMMY_TLS (any non-empty value: the system's roots),
// RUMMY_TLS_ROOT_CERT, RUMMY_TLS_CLIENT_CERT and RUMMY_TLS_CLIENT_KEY, each overridden by its flag when given
// (flagTLS, and the non-empty flag paths). Nil: plaintext. A client certificate without its key (or the other
// way round) is an error, since a referee asking for mutual TLS would only refuse it later in a vaguer way.
func TLSFromEnv(getenv func(string) string, flagTLS bool, rootCert, clientCert, clientKey string) (*TLS, error) {
	or := func(flagValue, key string) string {
		if flagValue != "" {
			return flagValue
		}
		return getenv(key)
	}
	t := &TLS{RootCert: or(rootCert, "RUMMY_TLS_ROOT_CERT"), ClientCert: or(clientCert, "RUMMY_TLS_CLIENT_CERT"),
		ClientKey: or(clientKey, "RUMMY_TLS_CLIENT_KEY")}
	if (t.ClientCert == "") != (t.ClientKey == "") {
		return nil, errors.New("a client certificate and its key go together " +
			"(--tls-client-cert and --tls-client-key, or RUMMY_TLS_CLIENT_CERT and RUMMY_TLS_CLIENT_KEY)")
	}
	if flagTLS || getenv("RUMMY_TLS") != "" || t.RootCert != "" || t.ClientCert != "" {
		return t, nil
	}
	return nil, nil
}

// TransportCredentials are the gRPC credentials for t: insecure (plaintext) when t is nil, else TLS 1.2 or newer
// as t says. The files are read here, once, so a bad path is told before any connection is tried.
func TransportCredentials(t *TLS) (credentials.TransportCredentials, error) {
	if t == nil {
		return insecure.NewCredentials(), nil
	}
	config := &tls.Config{MinVersion: tls.VersionTLS12} // ServerName: gRPC sets it from the address's host
	if t.RootCert != "" {
		pem, err := os.ReadFile(t.RootCert)
		if err != nil {
			return nil, &TLSFileError{Path: t.RootCert, Err: err}
		}
		config.RootCAs = x509.NewCertPool()
		if !config.RootCAs.AppendCertsFromPEM(pem) {
			return nil, &TLSFileError{Path: t.RootCert, Err: errors.New("no PEM certificate in it")}
		}
	} // else nil RootCAs: the system's roots
	if t.ClientCert != "" || t.ClientKey != "" {
		cert, err := loadKeyPair(t.ClientCert, t.ClientKey)
		if err != nil {
			return nil, err
		}
		config.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(config), nil
}

func loadKeyPair(certPath, keyPath string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return tls.Certificate{}, &TLSFileError{Path: certPath, Err: err}
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return tls.Certificate{}, &TLSFileError{Path: keyPath, Err: err}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, &TLSFileError{Path: certPath + " with " + keyPath, Err: err}
	}
	return cert, nil
}
