package metering

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/clock/clocktest"
)

var key = []byte("0123456789abcdef0123456789abcdef")

// client is a transit client that always adopts the latest token, and the
// ledger of its requests.
type client struct {
	account string
	token   string
	counted int
	free    int
}

func (c *client) call(now time.Time, res string) bool {
	counted, tok := NewSigner(key).Check(c.account, c.token, res, now)
	c.token = tok
	if counted {
		c.counted++
	} else {
		c.free++
	}
	return counted
}

// TestTwelveMinuteSequence walks a client through 12 minutes on a fake
// clock and checks the ledger after every step.
func TestTwelveMinuteSequence(t *testing.T) {
	A, B, X := StationResource("farebox-station-ct_22nd_street"), StationResource("farebox-station-ct_tamien"), TripResource("farebox-trip-ct_412_20231107")
	start := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	clk := clocktest.NewFixed(start)
	c := &client{account: "acct-1"}
	steps := []struct {
		at            time.Duration
		res           string
		counted       bool
		ledgerCounted int
		ledgerFree    int
	}{
		{0, A, true, 1, 0},                                // first request opens A's block (until 5:00)
		{1 * time.Minute, A, false, 1, 1},                 // inside the block
		{2 * time.Minute, B, true, 2, 1},                  // another station: own block (until 7:00)
		{3 * time.Minute, A, false, 2, 2},                 // A still open while B was added
		{4*time.Minute + 59*time.Second, A, false, 2, 3},  // last second of A's block
		{5 * time.Minute, A, true, 3, 3},                  // A expired: counted, new block until 10:00
		{6 * time.Minute, B, false, 3, 4},                 // B still open
		{7 * time.Minute, B, true, 4, 4},                  // B expired
		{8 * time.Minute, X, true, 5, 4},                  // trip block until 13:00
		{9 * time.Minute, A, false, 5, 5},                 // A's second block
		{10 * time.Minute, A, true, 6, 5},                 // expired again
		{11 * time.Minute, X, false, 6, 6},                // trip block
		{11*time.Minute + 30*time.Second, B, false, 6, 7}, // B's block of 7:00
		{12 * time.Minute, X, false, 6, 8},                // still inside (opened 8:00)
	}
	for i, s := range steps {
		clk.Set(start.Add(s.at))
		got := c.call(clk.Now(), s.res)
		if got != s.counted || c.counted != s.ledgerCounted || c.free != s.ledgerFree {
			t.Fatalf("step %d (%v %s): counted %v, ledger %d/%d; want %v %d/%d", i, s.at, s.res, got, c.counted, c.free, s.counted, s.ledgerCounted, s.ledgerFree)
		}
		if c.token == "" || strings.ContainsAny(c.token, "+/=%&#? ") {
			t.Fatalf("token not URL/header safe: %q", c.token)
		}
	}
}

func TestInvalidTokensAreIgnored(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	res := StationResource("s1")
	_, tok := NewSigner(key).Check("acct-1", "", res, now)
	if counted, _ := NewSigner(key).Check("acct-1", tok, res, now.Add(time.Minute)); counted {
		t.Fatal("valid token not honoured")
	}
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	flipped := append([]byte(nil), raw...)
	flipped[5] ^= 1
	for name, bad := range map[string]string{
		"other account": "",
		"other key":     "",
		"bit flip":      base64.RawURLEncoding.EncodeToString(flipped),
		"truncated":     tok[:len(tok)-3],
		"garbage":       "not a token at all!",
		"padding":       tok + "==",
		"huge":          strings.Repeat("A", 100000),
	} {
		acct, k, token := "acct-1", key, bad
		switch name {
		case "other account":
			acct, token = "acct-2", tok
		case "other key":
			k, token = []byte("another key"), tok
		}
		counted, newTok := NewSigner(k).Check(acct, token, res, now.Add(time.Minute))
		if !counted || newTok == "" {
			t.Fatalf("%s: must be counted with a fresh token", name)
		}
		if blocks, _ := NewSigner(k).decode(nil, acct, newTok); len(blocks) != 1 {
			t.Fatalf("%s: new token must hold exactly the new block, has %d", name, len(blocks))
		}
	}
	// A block from the future (beyond the skew allowance) is dropped.
	_, future := NewSigner(key).Check("acct-1", "", res, now.Add(10*time.Minute))
	if counted, _ := NewSigner(key).Check("acct-1", future, res, now); !counted {
		t.Fatal("future block honoured")
	}
}

func TestMostRecentBlocksKept(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	tok := ""
	for i := 0; i < MaxBlocks+5; i++ {
		_, tok = NewSigner(key).Check("a", tok, StationResource(fmt.Sprint(i)), now.Add(time.Duration(i)*time.Second))
	}
	if b, _ := NewSigner(key).decode(nil, "a", tok); len(b) != MaxBlocks {
		t.Fatalf("%d blocks", len(b))
	}
	if len(tok) > MaxTokenLen {
		t.Fatalf("token %d bytes > %d", len(tok), MaxTokenLen)
	}
	later := now.Add(time.Minute)
	for i := 0; i < MaxBlocks+5; i++ {
		counted, _ := NewSigner(key).Check("a", tok, StationResource(fmt.Sprint(i)), later)
		if counted != (i < 5) {
			t.Fatalf("resource %d counted=%v; only the 5 oldest were evicted", i, counted)
		}
	}
}

func FuzzDecode(f *testing.F) {
	_, tok := NewSigner(key).Check("acct", "", "station:x", time.Unix(1700000000, 0))
	f.Add(tok, "acct")
	f.Add("AQA", "")
	f.Add("", "acct")
	f.Fuzz(func(t *testing.T, token, account string) {
		blocks, ok := NewSigner(key).decode(nil, account, token)
		if len(blocks) > MaxBlocks {
			t.Fatal("too many blocks")
		}
		if ok && NewSigner(key).encode(account, blocks) != token {
			t.Fatal("accepted a non-canonical token")
		}
		counted, nt := NewSigner(key).Check(account, token, "station:x", time.Unix(1700000100, 0))
		if nt == "" || (blocks == nil && !counted) {
			t.Fatal("invalid token must count")
		}
	})
}

// TestRenewKeepsBlocks: a per-request endpoint passes the blocks on.
func TestRenewKeepsBlocks(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	t0 := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
	counted, tok := NewSigner(key).Check("acc", "", StationResource("a"), t0)
	if !counted {
		t.Fatal("first request must count")
	}
	renewed := NewSigner(key).Renew("acc", tok, t0.Add(time.Minute))
	if c, _ := NewSigner(key).Check("acc", renewed, StationResource("a"), t0.Add(2*time.Minute)); c {
		t.Error("renewed token lost the station's block")
	}
	for _, bad := range []string{"", "garbage", tok + "x"} {
		empty := NewSigner(key).Renew("acc", bad, t0)
		if got, ok := NewSigner(key).decode(nil, "acc", empty); !ok || len(got) != 0 {
			t.Errorf("Renew(%q) = %q: want a valid token without blocks, got %v", bad, empty, got)
		}
		if c, _ := NewSigner(key).Check("acc", empty, StationResource("a"), t0); !c {
			t.Errorf("an empty token must not make %q uncounted", bad)
		}
	}
	if got, _ := NewSigner(key).decode(nil, "acc", NewSigner(key).Renew("acc", tok, t0.Add(Window))); len(got) != 0 {
		t.Errorf("expired block kept: %v", got)
	}
	if got, ok := NewSigner(key).decode(nil, "other", NewSigner(key).Renew("acc", tok, t0)); ok || got != nil {
		t.Error("a renewed token must stay bound to its account")
	}
}

// BenchmarkCheck: a departure query's metering (no token yet, and with a
// token holding 20 blocks).
func BenchmarkCheck(b *testing.B) {
	s := NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	acct := "farebox-account-0d1f2e3c-4b5a-4687-9a0b-c1d2e3f40516/live"
	now := time.Unix(1791288120, 0)
	b.Run("no-token", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Check(acct, "", StationResource("farebox-station-metro-north_4"), now)
		}
	})
	tok := ""
	for i := range MaxBlocks {
		_, tok = s.Check(acct, tok, StationResource(fmt.Sprint(i)), now)
	}
	b.Run("20-blocks", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Check(acct, tok, StationResource("7"), now)
		}
	})
}
