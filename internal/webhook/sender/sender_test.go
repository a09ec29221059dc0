package sender_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/farebox/farebox/internal/webhook"
	"github.com/farebox/farebox/internal/webhook/sender"
)

// TestConnectTimeCheck: the dialer refuses the address it is about to
// connect to when the policy forbids it, whatever the URL's host name
// resolved to earlier ("localhost" here stands for a name rebound to
// loopback), and the receiver is never reached.
func TestConnectTimeCheck(t *testing.T) {
	var hits atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer rc.Close()
	s := sender.New(0)
	url := strings.Replace(rc.URL, "127.0.0.1", "localhost", 1)
	live := webhook.Policy{AllowHTTP: true} // https only in production; http here to reach the test server
	r := s.Post(context.Background(), sender.Delivery{URL: url, Body: []byte(`{}`), Policy: live})
	if r.OK() || !strings.HasPrefix(r.Err, "connection refused by policy") || hits.Load() != 0 {
		t.Errorf("refused address reached: %+v, %d hits", r, hits.Load())
	}
	if r := s.Post(context.Background(), sender.Delivery{URL: url, Body: []byte(`{}`), Policy: webhook.PolicyFor("test", false)}); !r.OK() || hits.Load() != 1 {
		t.Errorf("test policy: %+v", r)
	}
	if msg := s.Resolve(context.Background(), "localhost", live); !strings.Contains(msg, "loopback") {
		t.Errorf("Resolve localhost: %q", msg)
	}
	if msg := s.Resolve(context.Background(), "nonexistent.invalid", live); !strings.Contains(msg, "does not resolve") {
		t.Errorf("Resolve .invalid: %q", msg)
	}
}

// TestConnectTimeEmbeddedAddresses: the dialer's check judges an IPv4
// address embedded in IPv6 like the address itself (issue 28: NAT64 of
// the metadata address, 6to4, IPv4-compatible loopback), and refuses
// before any packet is sent; Resolve, the check at creation, agrees.
func TestConnectTimeEmbeddedAddresses(t *testing.T) {
	s := sender.New(0)
	live := webhook.Policy{AllowHTTP: true}
	for _, host := range []string{"[::127.0.0.1]", "[::7f00:1]", "[64:ff9b::a9fe:a9fe]", "[2002:a9fe:a9fe::1]", "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
		"198.18.0.1", "192.0.0.192", "240.0.0.1", "255.255.255.255", "[64:ff9b:1::a9fe:a9fe]", "[::ffff:169.254.169.254]"} {
		r := s.Post(context.Background(), sender.Delivery{URL: "http://" + host + ":9/hook", Body: []byte(`{}`), Policy: live})
		if r.OK() || !strings.HasPrefix(r.Err, "connection refused by policy") {
			t.Errorf("%s: %+v", host, r)
		}
		if msg := s.Resolve(context.Background(), host, live); msg == "" {
			t.Errorf("Resolve %s: allowed", host)
		}
	}
}
