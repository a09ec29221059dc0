package app_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/usage"
)

// TestAuthCacheFollowsClock: a cached key stays valid on this instance for
// AuthCacheTTL of the injected clock after its revocation elsewhere, and
// not a second longer.
func TestAuthCacheFollowsClock(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		cached := app.New(app.Options{Store: b.store, Clock: b.clock, AuthCacheTTL: time.Minute})
		p, err := cached.Authenticate(b.ctx, b.liveKey)
		if err != nil || p != b.live {
			t.Fatalf("authenticate: %+v %v", p, err)
		}
		// Another instance (b.app) revokes the key; this one has it cached.
		prefix := b.liveKey[:len("fbx_live_")+4]
		if n, err := b.app.RevokeKeys(b.ctx, prefix); err != nil || n != 1 {
			t.Fatalf("revoke %s: %d %v", prefix, n, err)
		}
		_, err = b.app.Authenticate(b.ctx, b.liveKey)
		wantErr(t, err, apperr.Unauthenticated, "invalid_api_key")
		b.clock.Advance(time.Minute - time.Nanosecond)
		if p, err := cached.Authenticate(b.ctx, b.liveKey); err != nil || p != b.live {
			t.Fatalf("within the TTL: %+v %v", p, err)
		}
		b.clock.Advance(time.Nanosecond)
		_, err = cached.Authenticate(b.ctx, b.liveKey)
		wantErr(t, err, apperr.Unauthenticated, "invalid_api_key")
		_, err = cached.Authenticate(b.ctx, "not-a-key")
		wantErr(t, err, apperr.Unauthenticated, "invalid_api_key")
	})
}

// TestAccountsAndKeys: accounts and keys are stamped by the clock and a
// key prefix must name the environment.
func TestAccountsAndKeys(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		_, err := b.app.CreateAccount(b.ctx, "", account.Live)
		wantErr(t, err, apperr.Invalid, "name_required")
		_, err = b.app.CreateKey(b.ctx, "farebox-account-nope", account.Live)
		wantErr(t, err, apperr.NotFound, "account_not_found")
		for _, prefix := range []string{"", "fbx_", "fbx_live_", "abc"} {
			_, err = b.app.RevokeKeys(b.ctx, prefix)
			wantErr(t, err, apperr.Invalid, "invalid_key_prefix")
		}
		_, err = b.app.RevokeKeys(b.ctx, "fbx_test_zzzzzz")
		wantErr(t, err, apperr.NotFound, "key_not_found")
		if b.test.AccountID != b.live.AccountID || b.test.Environment != account.Test || b.test.KeyID == b.live.KeyID {
			t.Errorf("test principal %+v, live %+v", b.test, b.live)
		}
	})
}

// TestUsage: the ledger's rows come back per account, day and endpoint;
// the range is checked (at most 366 days, in order, real dates).
func TestUsage(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		other, _ := b.newAccount(t, "Other AG", account.Live)
		ev := func(acc string, at time.Time, endpoint string, counted bool) usage.Event {
			return usage.Event{RequestID: "r-" + at.String() + endpoint + acc, AccountID: acc, Environment: account.Live,
				Endpoint: endpoint, Status: 200, Counted: counted, Reason: usage.ReasonCounted, At: at}
		}
		day1, day2 := time.Date(2026, 6, 14, 23, 59, 0, 0, time.UTC), time.Date(2026, 6, 15, 0, 0, 1, 0, time.UTC)
		events := []usage.Event{
			ev(b.live.AccountID, day1, "POST /v9/ticketing/orders.json", true),
			ev(b.live.AccountID, day2, "POST /v9/ticketing/orders.json", true),
			ev(b.live.AccountID, day2.Add(time.Second), "POST /v9/ticketing/orders.json", false),
			ev(other.AccountID, day2, "GET /v1/account.json", true),
		}
		if err := b.store.Write(b.ctx, func(q store.Q) error { return q.InsertUsage(b.ctx, events) }); err != nil {
			t.Fatal(err)
		}
		rows, err := b.app.Usage(b.ctx, b.live.AccountID, "2026-06-14", "2026-06-15")
		if err != nil {
			t.Fatal(err)
		}
		want := []usage.Row{
			{AccountID: b.live.AccountID, Day: "2026-06-14", Endpoint: "POST /v9/ticketing/orders.json", Counted: 1},
			{AccountID: b.live.AccountID, Day: "2026-06-15", Endpoint: "POST /v9/ticketing/orders.json", Counted: 1, Uncounted: 1},
		}
		if len(rows) != len(want) || rows[0] != want[0] || rows[1] != want[1] {
			t.Errorf("rows %+v, want %+v", rows, want)
		}
		if all, err := b.app.Usage(b.ctx, "", "2026-06-15", "2026-06-15"); err != nil || len(all) != 2 {
			t.Errorf("operator view %+v %v", all, err)
		}
		if rows, err := b.app.Usage(b.ctx, b.live.AccountID, "2026-01-01", "2027-01-01"); err != nil || len(rows) != 2 {
			t.Errorf("366 days: %d rows, %v", len(rows), err)
		}
		for _, c := range []struct{ from, to, field string }{
			{"2026-01-01", "2027-01-02", "to"},
			{"2026-06-15", "2026-06-14", "to"},
			{"15.06.2026", "2026-06-15", "from"},
			{"2026-06-15", "2026-02-30", "to"},
		} {
			_, err := b.app.Usage(b.ctx, b.live.AccountID, c.from, c.to)
			wantFields(t, wantErr(t, err, apperr.Invalid, "invalid_parameter"), c.field)
		}
	})
}
