package apple_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/wallet/apple/apnstest"
)

const testToken = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"

func newAPNs(t *testing.T, srv *apnstest.Server, now func() time.Time) *apple.APNs {
	t.Helper()
	key, err := apple.ParseP8(srv.P8)
	if err != nil {
		t.Fatal(err)
	}
	cfg := srv.Config()
	cfg.Key, cfg.Now = key, now
	c, err := apple.NewAPNs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAPNsPush: a push reaches the local APNs over HTTP/2 with the pass
// type as topic, a background push at priority 5, the body {} and a
// provider token that verifies with the .p8 key's public key.
func TestAPNsPush(t *testing.T) {
	srv := apnstest.New(t, "pass.org.farebox.development")
	c := newAPNs(t, srv, nil)
	out, err := c.Push(context.Background(), testToken)
	if err != nil || out != apple.Delivered {
		t.Fatalf("push: %v %v (%s)", out, err, srv)
	}
	ps := srv.Pushes()
	if len(ps) != 1 {
		t.Fatalf("%d requests", len(ps))
	}
	p := ps[0]
	if p.Proto != "HTTP/2.0" || p.Token != testToken || p.Topic != "pass.org.farebox.development" || p.PushType != "background" ||
		p.Priority != "5" || p.Body != "{}" || p.Status != http.StatusOK {
		t.Errorf("push %+v", p)
	}
	if r := srv.Refused(); len(r) != 0 {
		t.Errorf("refused: %v", r)
	}
}

// TestAPNsProviderTokenCache: the JWT is reused for 50 minutes and signed
// anew after; an ExpiredProviderToken answer replaces it at once and the
// push is repeated.
func TestAPNsProviderTokenCache(t *testing.T) {
	srv := apnstest.New(t, "pass.org.farebox.development")
	var mu sync.Mutex
	now := time.Now()
	clk := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := newAPNs(t, srv, clk)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := c.Push(ctx, testToken); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	now = now.Add(apple.TokenRefresh - time.Second)
	mu.Unlock()
	if _, err := c.Push(ctx, testToken); err != nil {
		t.Fatal(err)
	}
	ps := srv.Pushes()
	for _, p := range ps[1:] {
		if !p.IssuedAt.Equal(ps[0].IssuedAt) {
			t.Fatalf("token re-signed within %v: iat %v then %v", apple.TokenRefresh, ps[0].IssuedAt, p.IssuedAt)
		}
	}
	mu.Lock()
	now = now.Add(2 * time.Second)
	mu.Unlock()
	if _, err := c.Push(ctx, testToken); err != nil {
		t.Fatal(err)
	}
	ps = srv.Pushes()
	if last := ps[len(ps)-1]; !last.IssuedAt.After(ps[0].IssuedAt) {
		t.Errorf("token not re-signed after %v: iat %v", apple.TokenRefresh, last.IssuedAt)
	}

	// APNs says the token expired: a fresh one, the same push again.
	srv.Respond(func(_ string, n int) (int, string) {
		if n == 5 {
			return http.StatusForbidden, "ExpiredProviderToken"
		}
		return http.StatusOK, ""
	})
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	before := len(srv.Pushes())
	if out, err := c.Push(ctx, testToken); err != nil || out != apple.Delivered {
		t.Fatalf("after ExpiredProviderToken: %v %v", out, err)
	}
	ps = srv.Pushes()
	if len(ps) != before+2 || ps[len(ps)-2].Status != http.StatusForbidden || ps[len(ps)-1].Status != http.StatusOK ||
		!ps[len(ps)-1].IssuedAt.After(ps[len(ps)-2].IssuedAt) {
		t.Errorf("expected a refused push and a repeat with a newer token: %+v", ps[before:])
	}
}

// TestAPNsAnswers: 410 and a bad device token mean "unregistered"; 429 and
// 5xx are retryable errors; another refusal is an error not worth
// retrying.
func TestAPNsAnswers(t *testing.T) {
	srv := apnstest.New(t, "pass.org.farebox.development")
	c := newAPNs(t, srv, nil)
	for _, tc := range []struct {
		status  int
		reason  string
		out     apple.Outcome
		errWant bool
		retry   bool
	}{
		{http.StatusGone, "Unregistered", apple.Unregistered, false, false},
		{http.StatusBadRequest, "BadDeviceToken", apple.Unregistered, false, false},
		{http.StatusTooManyRequests, "TooManyRequests", 0, true, true},
		{http.StatusInternalServerError, "InternalServerError", 0, true, true},
		{http.StatusServiceUnavailable, "ServiceUnavailable", 0, true, true},
		{http.StatusBadRequest, "PayloadTooLarge", 0, true, false},
	} {
		srv.Respond(func(string, int) (int, string) { return tc.status, tc.reason })
		out, err := c.Push(context.Background(), testToken)
		var pe *apple.PushError
		switch {
		case tc.errWant && (!errors.As(err, &pe) || pe.Retry != tc.retry || pe.Status != tc.status || pe.Reason != tc.reason):
			t.Errorf("%d %s: error %v (%+v), want retry=%v", tc.status, tc.reason, err, pe, tc.retry)
		case !tc.errWant && (err != nil || out != tc.out):
			t.Errorf("%d %s: %v %v, want outcome %v", tc.status, tc.reason, out, err, tc.out)
		}
	}
	// Nobody listening: a retryable transport error.
	cfg := srv.Config()
	cfg.Endpoint = "https://127.0.0.1:1"
	c2, err := apple.NewAPNs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var pe *apple.PushError
	if _, err := c2.Push(context.Background(), testToken); !errors.As(err, &pe) || !pe.Retry || pe.Status != 0 {
		t.Errorf("unreachable endpoint: %v", err)
	}
}

// TestAPNsConfig: the key must be a P-256 .p8, the endpoint https, the
// topic a pass type id.
func TestAPNsConfig(t *testing.T) {
	srv := apnstest.New(t, "pass.org.farebox.development")
	if _, err := apple.ParseP8([]byte("garbage")); err == nil {
		t.Error("garbage accepted as .p8")
	}
	if _, err := apple.ParseP8([]byte(strings.Replace(string(srv.P8), "MIG", "MIF", 1))); err == nil {
		t.Error("a corrupted key accepted")
	}
	for name, mut := range map[string]func(*apple.APNsConfig){
		"no key":     func(c *apple.APNsConfig) { c.Key = nil },
		"no key id":  func(c *apple.APNsConfig) { c.KeyID = "" },
		"no team":    func(c *apple.APNsConfig) { c.TeamID = " " },
		"bad topic":  func(c *apple.APNsConfig) { c.Topic = "com.example.app" },
		"plain http": func(c *apple.APNsConfig) { c.Endpoint = "http://127.0.0.1" },
	} {
		cfg := srv.Config()
		mut(&cfg)
		if _, err := apple.NewAPNs(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
