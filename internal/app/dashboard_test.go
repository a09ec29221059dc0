package app_test

import (
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestDashboardInvitation: an invitation used by eight requests at once
// opens exactly one session; it is refused after its 72 hours; a second
// invitation of the same user sets a new password; an address of another
// account's user is refused; the sign-in takes the address in any case.
func TestDashboardInvitation(t *testing.T) {
	for _, engine := range storetest.Engines {
		t.Run(string(engine), func(t *testing.T) {
			b := setup(t, engine)
			a, ctx := b.users, b.ctx
			const pw = "twelve chars or more"
			token, err := a.InviteDashboardUser(ctx, idempotency.Claim{}, b.live.AccountID, "User@Partner.example")
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			ok, notFound := 0, 0
			for i := 0; i < 8; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := a.AcceptDashboardInvite(ctx, idempotency.Claim{}, token, pw, pw)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						ok++
					case apperr.KindOf(err) == apperr.NotFound:
						notFound++
					default:
						t.Errorf("accept: %v", err)
					}
				}()
			}
			wg.Wait()
			if ok != 1 || notFound != 7 {
				t.Fatalf("%d accepted, %d refused; want 1 and 7", ok, notFound)
			}
			id, err := a.DashboardSignIn(ctx, idempotency.Claim{}, "  USER@partner.example", pw)
			if err != nil {
				t.Fatal(err)
			}
			s, err := a.WebSession(ctx, id)
			if err != nil || s.Kind != webusers.WebDashboard || s.AccountID != b.live.AccountID || s.Subject != "user@partner.example" {
				t.Fatalf("session %+v %v", s, err)
			}
			if _, err := a.DashboardSignIn(ctx, idempotency.Claim{}, "user@partner.example", pw+"x"); apperr.KindOf(err) != apperr.Unauthenticated {
				t.Errorf("wrong password: %v", err)
			}
			// Expiry.
			late, err := a.InviteDashboardUser(ctx, idempotency.Claim{}, b.live.AccountID, "user@partner.example")
			if err != nil {
				t.Fatal(err)
			}
			b.clock.Advance(webusers.InviteTTL + time.Second)
			if _, err := a.AcceptDashboardInvite(ctx, idempotency.Claim{}, late, pw+"2", pw+"2"); apperr.KindOf(err) != apperr.NotFound {
				t.Errorf("an expired invitation: %v", err)
			}
			// A fresh one resets the password.
			again, _ := a.InviteDashboardUser(ctx, idempotency.Claim{}, b.live.AccountID, "user@partner.example")
			if _, err := a.AcceptDashboardInvite(ctx, idempotency.Claim{}, again, pw+"2", pw+"2"); err != nil {
				t.Fatal(err)
			}
			if _, err := a.DashboardSignIn(ctx, idempotency.Claim{}, "user@partner.example", pw); err == nil {
				t.Error("the old password still works")
			}
			if _, err := a.DashboardSignIn(ctx, idempotency.Claim{}, "user@partner.example", pw+"2"); err != nil {
				t.Errorf("the new password: %v", err)
			}
			// Another account cannot take the address.
			other, _ := b.newAccount(t, "Other GmbH", account.Live)
			if _, err := a.InviteDashboardUser(ctx, idempotency.Claim{}, other.AccountID, "user@partner.example"); apperr.KindOf(err) != apperr.Conflict {
				t.Errorf("another account's invitation: %v", err)
			}
			// The longest password accepted, one byte more refused.
			tok, _ := a.InviteDashboardUser(ctx, idempotency.Claim{}, b.live.AccountID, "long@partner.example")
			big := make([]byte, 1025)
			for i := range big {
				big[i] = 'p'
			}
			if _, err := a.AcceptDashboardInvite(ctx, idempotency.Claim{}, tok, string(big), string(big)); apperr.KindOf(err) != apperr.Unprocessable {
				t.Errorf("a 1025-byte password: %v", err)
			}
			if _, err := a.AcceptDashboardInvite(ctx, idempotency.Claim{}, tok, string(big[:1024]), string(big[:1024])); err != nil {
				t.Errorf("a 1024-byte password: %v", err)
			}
		})
	}
}
