package webhook_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/webhook"
	"github.com/farebox/farebox/internal/webhook/webhooktest"
)

// TestSignVerify: a signature made with any of the signing secrets
// verifies with that secret; a changed body, another secret, an old or a
// future timestamp, a missing part do not.
func TestSignVerify(t *testing.T) {
	at := time.Unix(1781517600, 0)
	body := []byte(`{"id":"farebox-event-1"}`)
	h := webhook.Sign([]string{"whsec_new", "whsec_old"}, at, body)
	if !strings.HasPrefix(h, "t=1781517600,v1=") || strings.Count(h, ",v1=") != 2 {
		t.Fatalf("header %s", h)
	}
	for _, s := range []string{"whsec_new", "whsec_old"} {
		if err := webhooktest.Verify(h, body, s, at.Add(time.Minute), 5*time.Minute); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	bad := map[string]error{
		"changed body":  webhooktest.Verify(h, []byte(`{"id":"farebox-event-2"}`), "whsec_new", at, time.Minute),
		"other secret":  webhooktest.Verify(h, body, "whsec_other", at, time.Minute),
		"too old":       webhooktest.Verify(h, body, "whsec_new", at.Add(6*time.Minute), 5*time.Minute),
		"from future":   webhooktest.Verify(h, body, "whsec_new", at.Add(-6*time.Minute), 5*time.Minute),
		"no timestamp":  webhooktest.Verify(strings.TrimPrefix(h, "t=1781517600,"), body, "whsec_new", at, time.Minute),
		"no signature":  webhooktest.Verify("t=1781517600", body, "whsec_new", at, time.Minute),
		"empty":         webhooktest.Verify("", body, "whsec_new", at, time.Minute),
		"other time in": webhooktest.Verify(strings.Replace(h, "t=1781517600", "t=1781517601", 1), body, "whsec_new", at, time.Minute),
	}
	for name, err := range bad {
		if err == nil {
			t.Errorf("%s verified", name)
		}
	}
	if a, b := webhook.NewSecret(), webhook.NewSecret(); a == b || !strings.HasPrefix(a, webhook.SecretPrefix) || len(a) < 30 {
		t.Errorf("secrets %s %s", a, b)
	}
}

// TestPolicy: which addresses and URLs each environment may reach.
func TestPolicy(t *testing.T) {
	live, test, onprem := webhook.PolicyFor(account.Live, false), webhook.PolicyFor(account.Test, false), webhook.PolicyFor(account.Live, true)
	cases := []struct {
		addr             string
		live, test, prem bool // allowed
	}{
		{"93.184.215.14", true, true, true},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", true, true, true},
		{"203.0.113.10", false, false, true}, // documentation (RFC 5737)
		{"2001:db8::1", false, false, true},  // documentation (RFC 3849)
		{"127.0.0.1", false, true, true},
		{"::1", false, true, true},
		{"::ffff:127.0.0.1", false, true, true},
		{"10.0.0.1", false, false, true},
		{"172.31.255.255", false, false, true},
		{"192.168.1.1", false, false, true},
		{"100.64.0.1", false, false, true},
		{"fd00::1", false, false, true},
		{"169.254.169.254", false, false, true},
		{"fe80::1", false, false, true},
		{"224.0.0.251", false, false, true},
		{"ff02::1", false, false, true},
		{"0.0.0.0", false, false, true},
	}
	for _, c := range cases {
		a := netip.MustParseAddr(c.addr)
		for _, p := range []struct {
			pol  webhook.Policy
			want bool
		}{{live, c.live}, {test, c.test}, {onprem, c.prem}} {
			if got := p.pol.AddrProblem(a) == ""; got != p.want {
				t.Errorf("%s under %+v: allowed %v", c.addr, p.pol, got)
			}
		}
	}
	for raw, want := range map[string]bool{"https://partner.example/h": true, "http://partner.example/h": false, "https://localhost/": false,
		"https://a.localhost/": false, "ftp://partner.example/": false, "https://u@partner.example/": false, "https://partner.example/#x": false,
		"https://partner.example:0/": false, "partner.example/h": false, "": false} {
		if _, msg := live.CheckURL(raw); (msg == "") != want {
			t.Errorf("live %q: %q", raw, msg)
		}
	}
	if _, msg := test.CheckURL("http://127.0.0.1:8080/h"); msg != "" {
		t.Errorf("test loopback: %s", msg)
	}
	if _, msg := onprem.CheckURL("http://10.1.1.1/h"); msg != "" {
		t.Errorf("on-premises: %s", msg)
	}
}

// TestRetrySchedule: delays double from FirstBackoff to MaxBackoff with
// at most a quarter of jitter; the last attempt falls at the end of the
// window, after which the delivery has failed; the endpoint is disabled
// once it failed for DisableAfter.
func TestRetrySchedule(t *testing.T) {
	first := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
	now, n := first, 1
	var last time.Time
	for {
		next, ok := webhook.NextAttempt(first, now, n, 0.999)
		if !ok {
			break
		}
		d, b := next.Sub(now), webhook.Backoff(n)
		if next.Before(first.Add(webhook.RetryWindow)) && (d < b || d > b+b/4) {
			t.Errorf("attempt %d: delay %v, backoff %v", n, d, b)
		}
		now, last, n = next, next, n+1
	}
	if !last.Equal(first.Add(webhook.RetryWindow)) || n < 15 || n > 30 {
		t.Errorf("last attempt %v after %d attempts", last, n)
	}
	if webhook.Backoff(1) != webhook.FirstBackoff || webhook.Backoff(40) != webhook.MaxBackoff {
		t.Errorf("backoff bounds")
	}
	if webhook.ShouldDisable(nil, now) || webhook.ShouldDisable(&first, first.Add(webhook.DisableAfter-time.Second)) ||
		!webhook.ShouldDisable(&first, first.Add(webhook.DisableAfter)) {
		t.Errorf("disabling")
	}
}

// TestCheckTypes: the catalogue's types and "*", each once.
func TestCheckTypes(t *testing.T) {
	if msg := webhook.CheckTypes([]string{"order.created", "invoice.files_ready"}); msg != "" {
		t.Error(msg)
	}
	if msg := webhook.CheckTypes([]string{"*"}); msg != "" {
		t.Error(msg)
	}
	for _, bad := range [][]string{nil, {}, {"order.deleted"}, {"*", "*"}, {"ORDER.CREATED"}} {
		if webhook.CheckTypes(bad) == "" {
			t.Errorf("%v accepted", bad)
		}
	}
	ep := webhook.Endpoint{EventTypes: []string{"ticket.issued"}}
	if !ep.Wants("ticket.issued") || ep.Wants("order.created") || !(webhook.Endpoint{EventTypes: []string{"*"}}).Wants("order.created") {
		t.Error("Wants")
	}
}
