// Package sender posts webhook deliveries (docs/webhooks.md). Every
// connection is checked where it is made: the dialer's Control function
// refuses an address the endpoint's policy forbids, after DNS resolution,
// so a host name that resolves to a public address at creation and to a
// private one later (DNS rebinding) is refused at connect time. Redirects
// are not followed, an attempt is bounded by a timeout, and only an
// excerpt of the answer is read.
package sender

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/webhook"
)

// Sender posts deliveries, one HTTP client per policy.
type Sender struct {
	// Timeout bounds one attempt (webhook.Timeout when zero).
	Timeout time.Duration
	// UserAgent is sent with every delivery.
	UserAgent string
	mu        sync.Mutex
	clients   map[webhook.Policy]*http.Client
	resolver  *net.Resolver
}

// New returns a sender whose attempts time out after timeout (0: webhook.Timeout).
func New(timeout time.Duration) *Sender {
	if timeout <= 0 {
		timeout = webhook.Timeout
	}
	return &Sender{Timeout: timeout, UserAgent: "farebox-webhooks/1", clients: map[webhook.Policy]*http.Client{},
		resolver: net.DefaultResolver}
}

// errRefused marks a connection refused by the policy.
var errRefused = errors.New("address refused")

func (s *Sender) client(p webhook.Policy) *http.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[p]; ok {
		return c
	}
	d := &net.Dialer{Timeout: s.Timeout, KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", errRefused, address)
			}
			if msg := p.AddrProblem(ap.Addr()); msg != "" {
				return fmt.Errorf("%w: %s %s", errRefused, ap.Addr(), msg)
			}
			return nil
		}}
	tr := &http.Transport{
		Proxy:             nil, // never through a proxy: the check is on the address dialled
		DialContext:       d.DialContext,
		ForceAttemptHTTP2: true,
		// An instance has up to 8 workers × 32 attempts in flight
		// (webhooks.DefaultWorkers, its claim; internal/app/webhooks), often to one
		// receiver: keeping that many idle connections per host lets the
		// next claim reuse them instead of dialling (and, for https,
		// handshaking) anew for every attempt over 64.
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   s.Timeout,
		ResponseHeaderTimeout: s.Timeout,
		DisableCompression:    true,
	}
	c := &http.Client{Transport: tr, Timeout: s.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	s.clients[p] = c
	return c
}

// Resolve checks that raw's host resolves and that every address it
// resolves to is allowed by p; it returns the problem, "" when none. It
// is the check at creation; the dialer repeats it at every connection.
func (s *Sender) Resolve(ctx context.Context, host string, p webhook.Policy) string {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if msg := p.AddrProblem(a); msg != "" {
			return "url " + msg
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := s.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Sprintf("url host %q does not resolve", host)
	}
	for _, a := range addrs {
		if msg := p.AddrProblem(a); msg != "" {
			return "url " + msg + " (" + a.Unmap().String() + ")"
		}
	}
	return ""
}

// Delivery is one POST to make.
type Delivery struct {
	URL        string
	Body       []byte
	Signature  string
	EventID    string
	DeliveryID string
	Policy     webhook.Policy
}

// Post sends d and reports what happened; it never returns an error of
// its own: a refused address, a timeout or a closed connection is a
// failed Result.
func (s *Sender) Post(ctx context.Context, d Delivery) webhook.Result {
	began := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return webhook.Result{Err: "invalid url: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", s.UserAgent)
	req.Header.Set(webhook.SignatureHeader, d.Signature)
	req.Header.Set(webhook.EventIDHeader, d.EventID)
	req.Header.Set(webhook.DeliveryHeader, d.DeliveryID)
	resp, err := s.client(d.Policy).Do(req)
	if err != nil {
		return webhook.Result{Latency: time.Since(began), Err: describe(err)}
	}
	defer resp.Body.Close()
	buf, rerr := io.ReadAll(io.LimitReader(resp.Body, webhook.ExcerptBytes))
	// Drain a little more so the connection can be reused; a receiver
	// that sends more than that is cut off.
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	r := webhook.Result{StatusCode: resp.StatusCode, Latency: time.Since(began), Excerpt: excerpt(buf)}
	switch {
	case rerr != nil:
		r.Err = "answer cut off: " + describe(rerr)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		r.Err = fmt.Sprintf("redirect to %q not followed", resp.Header.Get("Location"))
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		r.Err = fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return r
}

// excerpt is b as valid UTF-8 (invalid bytes replaced), without a rune
// cut in half at the end.
func excerpt(b []byte) string {
	for len(b) > 0 && !utf8.Valid(b) {
		r, size := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || size != 1 || len(b) < webhook.ExcerptBytes-3 {
			break
		}
		b = b[:len(b)-1]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// describe turns a transport error into the log's short message.
func describe(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, errRefused):
		msg := err.Error()
		if i := strings.Index(msg, errRefused.Error()); i >= 0 {
			msg = msg[i:]
		}
		return "connection refused by policy: " + msg
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return "connection closed without an answer"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	}
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300]
	}
	return msg
}
