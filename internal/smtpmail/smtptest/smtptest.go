// Package smtptest is a real SMTP submission server on loopback for
// tests (github.com/emersion/go-smtp): STARTTLS with a certificate made
// for 127.0.0.1, AUTH PLAIN against a user and password, and replies a
// test chooses (a 4xx or 5xx to the data). It records every message and
// whether credentials ever arrived without TLS.
package smtptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options configure a Server.
type Options struct {
	NoTLS bool   // offer no STARTTLS
	UTF8  bool   // offer SMTPUTF8 (addresses with non-ASCII characters)
	User  string // "": AUTH not required
	Pass  string
	// Refuse, when set, answers the data of a message (nil: accepted).
	// A test returns &smtp.SMTPError{Code: 451, …} for a deferral.
	Refuse func(n int) *smtp.SMTPError
}

// Message is one message the server accepted or refused.
type Message struct {
	From, To string
	Data     []byte
	TLS      bool   // STARTTLS was in force when the data came
	User     string // the authenticated user ("": none)
	Refused  bool
}

// Server is a running test relay.
type Server struct {
	s      *smtp.Server
	o      Options
	Client *tls.Config // trusts the server's certificate (smtpmail.Relay.TLS)
	mu     sync.Mutex
	msgs   []Message
	clear  int // AUTH attempts without TLS
}

// Start runs a server on 127.0.0.1 until the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	srv := &Server{o: o}
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &session{srv: srv, c: c}, nil }))
	s.Domain = "relay.test"
	s.EnableSMTPUTF8 = o.UTF8
	s.AllowInsecureAuth = o.NoTLS // so that AUTH is offered in clear: farebox must still not use it
	if !o.NoTLS {
		cert, pool := selfSigned(t)
		s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		srv.Client = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = l.Addr().String()
	srv.s = s
	go func() { _ = s.Serve(l) }()
	t.Cleanup(func() { _ = s.Close() })
	return srv
}

// URL is the server's smtp:// URL with the configured credentials.
func (s *Server) URL() string {
	u := url.URL{Scheme: "smtp", Host: s.s.Addr}
	if s.o.User != "" {
		u.User = url.UserPassword(s.o.User, s.o.Pass)
	}
	return u.String()
}

// Messages are the messages received so far, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// ClearAuth is how often a client tried AUTH without TLS.
func (s *Server) ClearAuth() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clear
}

type session struct {
	srv      *Server
	c        *smtp.Conn
	user     string
	from, to string
}

func (x *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (x *session) Auth(mech string) (sasl.Server, error) {
	if _, ok := x.c.TLSConnectionState(); !ok {
		x.srv.mu.Lock()
		x.srv.clear++
		x.srv.mu.Unlock()
	}
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != x.srv.o.User || pass != x.srv.o.Pass || x.srv.o.User == "" {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "bad credentials"}
		}
		x.user = user
		return nil
	}), nil
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	if x.srv.o.User != "" && x.user == "" {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "authentication required"}
	}
	x.from = from
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error { x.to = to; return nil }

func (x *session) Data(r io.Reader) error {
	var b bytes.Buffer
	if _, err := io.Copy(&b, r); err != nil {
		return err
	}
	_, isTLS := x.c.TLSConnectionState()
	x.srv.mu.Lock()
	defer x.srv.mu.Unlock()
	m := Message{From: x.from, To: x.to, Data: b.Bytes(), TLS: isTLS, User: x.user}
	var refuse *smtp.SMTPError
	if x.srv.o.Refuse != nil {
		refuse = x.srv.o.Refuse(len(x.srv.msgs) + 1)
	}
	m.Refused = refuse != nil
	x.srv.msgs = append(x.srv.msgs, m)
	if refuse != nil {
		return refuse
	}
	return nil
}

func (x *session) Reset()        { x.from, x.to = "", "" }
func (x *session) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and the pool that trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "relay.test"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true,
		BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: c}, pool
}
