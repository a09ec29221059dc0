package store_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestWriteOutcomeUnknown: when PostgreSQL answers neither a COMMIT nor
// the cancel request sent after the request's end (here a proxy swallows
// the server's answers from the COMMIT on), the write gives the connection
// up after store.CancelGrace and reports outcome_unknown, never
// request_cancelled, because the commit may have happened (here it did).
// A write whose COMMIT was never sent is request_cancelled and wrote
// nothing. PostgreSQL only: SQLite runs in the process, where a failed
// COMMIT did not commit.
func TestWriteOutcomeUnknown(t *testing.T) {
	grace := store.CancelGrace
	store.CancelGrace = 300 * time.Millisecond
	t.Cleanup(func() { store.CancelGrace = grace })
	p := newSwallowProxy(t)
	s := storetest.OpenWith(t, store.Postgres, func(o *store.Options) { o.URL = p.via(t, o.URL) })
	claim := func(ctx context.Context, key string, block func()) error {
		return s.Write(ctx, func(q store.Q) error {
			if _, _, err := q.ClaimIdempotencyKey(ctx, "scope", key, "h", time.Now(), time.Minute); err != nil {
				return err
			}
			block()
			return nil
		})
	}
	// stored reports whether key's claim was written (it claims the key
	// when it was not, so ask once per key).
	stored := func(key string) bool {
		var claimed bool
		if err := s.Write(context.Background(), func(q store.Q) (err error) {
			claimed, _, err = q.ClaimIdempotencyKey(context.Background(), "scope", key, "other", time.Now(), time.Minute)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return !claimed
	}

	// The commit is sent and its answer swallowed: unknown, and committed.
	p.swallowFromCommit.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	err := claim(ctx, "k1", func() {})
	cancel()
	p.swallowFromCommit.Store(false)
	if ae := apperr.As(err); ae == nil || ae.Code != apperr.CodeOutcomeUnknown {
		t.Fatalf("a COMMIT without an answer: %v, want %s", err, apperr.CodeOutcomeUnknown)
	}
	if !stored("k1") {
		t.Fatal("the swallowed COMMIT did not commit")
	}

	// The request ends before the COMMIT: nothing is sent, nothing written.
	ctx, cancel = context.WithCancel(context.Background())
	err = claim(ctx, "k2", cancel)
	if ae := apperr.As(err); ae == nil || ae.Code != store.CodeRequestCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("ended before the COMMIT: %v", err)
	}
	if stored("k2") {
		t.Fatal("a write cancelled before its COMMIT was written")
	}
	// The store goes on working.
	if err := claim(context.Background(), "k3", func() {}); err != nil || !stored("k3") {
		t.Fatalf("after: %v", err)
	}
}

// swallowProxy forwards connections to PostgreSQL; while swallowFromCommit
// is set, a connection that sends a COMMIT gets no more answers.
type swallowProxy struct {
	ln                net.Listener
	upstream          string
	swallowFromCommit atomic.Bool
}

func newSwallowProxy(t *testing.T) *swallowProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &swallowProxy{ln: ln}
	var conns sync.Map
	t.Cleanup(func() {
		ln.Close()
		conns.Range(func(k, _ any) bool { k.(net.Conn).Close(); return true })
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(c, true)
			go p.serve(c, &conns)
		}
	}()
	return p
}

// via is target's URL through the proxy; the proxy dials target's host.
func (p *swallowProxy) via(t *testing.T, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p.upstream = u.Host
	u.Host = p.ln.Addr().String()
	return u.String()
}

func (p *swallowProxy) serve(c net.Conn, conns *sync.Map) {
	defer c.Close()
	s, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	conns.Store(s, true)
	defer s.Close()
	var swallowed atomic.Bool
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := s.Read(buf)
			if err != nil {
				c.Close()
				return
			}
			if swallowed.Load() {
				continue
			}
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
	}()
	// Client to server: the startup packet (no type byte), then messages.
	head := make([]byte, 4)
	if _, err := io.ReadFull(c, head); err != nil {
		return
	}
	body := make([]byte, binary.BigEndian.Uint32(head)-4)
	if _, err := io.ReadFull(c, body); err != nil {
		return
	}
	if _, err := s.Write(append(head, body...)); err != nil {
		return
	}
	for {
		h := make([]byte, 5)
		if _, err := io.ReadFull(c, h); err != nil {
			return
		}
		m := make([]byte, binary.BigEndian.Uint32(h[1:])-4)
		if _, err := io.ReadFull(c, m); err != nil {
			return
		}
		if h[0] == 'Q' && strings.Contains(strings.ToLower(string(m)), "commit") && p.swallowFromCommit.Load() {
			swallowed.Store(true)
		}
		if _, err := s.Write(append(h, m...)); err != nil {
			return
		}
	}
}
