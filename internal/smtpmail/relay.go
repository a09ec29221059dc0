package smtpmail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
	"time"
)

// Relay is an SMTP submission relay.
type Relay struct {
	Addr     string // host:port
	Host     string // the name its TLS certificate must show
	User     string // "": no AUTH
	Password string
	// TLS, when set, is the TLS configuration of STARTTLS (tests trust
	// their own certificate with it); nil verifies Host against the
	// system's roots.
	TLS *tls.Config
	// Timeout bounds one whole send: dial, dialogue and data (default
	// one minute). A relay that does not answer within it is a
	// temporary failure.
	Timeout time.Duration
}

// ParseURL reads smtp://[user[:password]@]host[:port] (port 587, the
// submission port, when omitted). User and password are URL-decoded; a
// URL with a password but no user, a path, a query or another scheme is
// refused with a message naming the problem (never the password).
func ParseURL(raw string) (*Relay, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("is not a URL of the form smtp://user:password@relay:587")
	}
	switch {
	case u.Scheme != "smtp":
		return nil, fmt.Errorf("must start with smtp:// (SMTP submission with STARTTLS), not %q", u.Scheme+"://")
	case u.Hostname() == "":
		return nil, errors.New("names no relay host: smtp://user:password@relay:587")
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("must be smtp://user:password@relay:port with no path, query or fragment")
	}
	r := &Relay{Host: u.Hostname(), Addr: u.Host}
	if u.Port() == "" {
		r.Addr = net.JoinHostPort(u.Hostname(), "587")
	}
	if u.User != nil {
		r.User = u.User.Username()
		r.Password, _ = u.User.Password()
		if r.User == "" {
			return nil, errors.New("has a password but no user name")
		}
	}
	return r, nil
}

// Error is a send that did not succeed: the relay's reply (code and
// text) or what kept the message from it. Temporary errors (a 4xx reply,
// no connection, a timeout) may succeed later; the others will not.
type Error struct {
	Code      int // the SMTP reply code; 0 when the relay did not answer
	Reply     string
	Temporary bool
}

func (e *Error) Error() string {
	if e.Code == 0 {
		return e.Reply
	}
	return fmt.Sprintf("%d %s", e.Code, e.Reply)
}

// ErrClearCredentials is the permanent failure of a relay that does not
// offer STARTTLS while credentials are configured: they are never sent
// in clear.
var ErrClearCredentials = &Error{Reply: "the relay does not offer STARTTLS; the credentials are not sent in clear (AUTH refused by farebox)"}

// Send submits m to the relay: EHLO, STARTTLS when offered (required
// when there are credentials), AUTH PLAIN with the credentials, MAIL,
// RCPT, DATA. It returns the relay's reply to the data ("250 2.0.0 Ok:
// queued as …") or an *Error.
func (r *Relay) Send(ctx context.Context, m Message) (string, error) {
	data, err := m.Bytes()
	if err != nil {
		return "", &Error{Reply: "the message could not be built: " + err.Error()}
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", r.Addr)
	if err != nil {
		return "", &Error{Reply: "no connection to the relay: " + err.Error(), Temporary: true}
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	c, err := smtp.NewClient(conn, r.Host)
	if err != nil {
		return "", classify(err)
	}
	defer c.Close()
	reply, err := r.dialogue(c, m, data)
	if err != nil {
		return "", classify(err)
	}
	_ = c.Quit()
	return reply, nil
}

// dialogue runs the SMTP commands of one message on c.
func (r *Relay) dialogue(c *smtp.Client, m Message, data []byte) (string, error) {
	if err := c.Hello(helloName(m.From.Address)); err != nil {
		return "", err
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		cfg := r.TLS
		if cfg == nil {
			cfg = &tls.Config{ServerName: r.Host, MinVersion: tls.VersionTLS12}
		}
		if err := c.StartTLS(cfg); err != nil {
			return "", err
		}
	}
	if r.User != "" {
		if _, isTLS := c.TLSConnectionState(); !isTLS {
			return "", ErrClearCredentials
		}
		if ok, mechs := c.Extension("AUTH"); !ok || !hasWord(mechs, "PLAIN") {
			return "", &Error{Reply: fmt.Sprintf("the relay offers no AUTH PLAIN (AUTH %q)", mechs)}
		}
		if err := c.Auth(smtp.PlainAuth("", r.User, r.Password, r.Host)); err != nil {
			return "", err
		}
	}
	if ok, _ := c.Extension("SMTPUTF8"); !ok && (!ascii(m.From.Address) || !ascii(m.To.Address)) {
		return "", &Error{Reply: "the relay does not offer SMTPUTF8 (RFC 6531), which an address with non-ASCII characters needs"}
	}
	if err := c.Mail(m.From.Address); err != nil {
		return "", err
	}
	if err := c.Rcpt(m.To.Address); err != nil {
		return "", err
	}
	// DATA by hand rather than Client.Data: its Close drops the relay's
	// reply text, which the delivery log keeps.
	id, err := c.Text.Cmd("DATA")
	if err != nil {
		return "", err
	}
	c.Text.StartResponse(id)
	_, _, err = c.Text.ReadResponse(354)
	c.Text.EndResponse(id)
	if err != nil {
		return "", err
	}
	w := c.Text.DotWriter()
	if _, err := w.Write(data); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	code, msg, err := c.Text.ReadResponse(250)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d %s", code, msg), nil
}

// classify turns what the dialogue returned into an *Error: a reply code
// of 4xx is temporary, 5xx permanent; a broken or timed-out connection is
// temporary; anything else (a TLS handshake the relay's certificate
// failed) is permanent until the configuration changes.
func classify(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var tp *textproto.Error
	if errors.As(err, &tp) {
		return &Error{Code: tp.Code, Reply: tp.Msg, Temporary: tp.Code >= 400 && tp.Code < 500}
	}
	var ne net.Error
	var tlsErr *tls.CertificateVerificationError
	switch {
	case errors.As(err, &tlsErr):
		return &Error{Reply: "the relay's TLS certificate was refused: " + err.Error()}
	case errors.As(err, &ne), errors.Is(err, net.ErrClosed), errors.Is(err, context.DeadlineExceeded),
		strings.Contains(err.Error(), "EOF"), strings.Contains(err.Error(), "connection reset"):
		return &Error{Reply: "the connection to the relay broke: " + err.Error(), Temporary: true}
	}
	return &Error{Reply: err.Error()}
}

// helloName is the name farebox greets with: the sender's domain.
func helloName(from string) string {
	if i := strings.LastIndexByte(from, '@'); i >= 0 && i < len(from)-1 {
		return from[i+1:]
	}
	return "localhost"
}

func hasWord(list, w string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, w) {
			return true
		}
	}
	return false
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
