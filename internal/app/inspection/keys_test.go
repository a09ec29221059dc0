package inspection_test

import (
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/apptest"
	"github.com/farebox/farebox/internal/app/inspection"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/credentials"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
)

// TestRevokeKeyWithManyTickets: a compromised key signing 1,000 valid
// tickets (ten orders of 100, the largest order) is revoked while
// travellers keep activating: every one of its tickets moves to the
// successor with its pass update queued, none is left on the key, and the
// activations that ran alongside are signed with the active key.
func TestRevokeKeyWithManyTickets(t *testing.T) {
	const orders, perOrder = 10, app.MaxProductsPerOrder
	apptest.ForEachEngine(t, func(t *testing.T, b *apptest.Bundle) {
		s := credentials.Settings{InspectionKeys: t.TempDir()}
		if _, _, err := barcode.LoadOrCreateDir(s.InspectionKeys, nil); err != nil {
			t.Fatal(err)
		}
		keys := inspection.New(store.NewView[inspection.Queries](b.Store), b.Clock, credentials.InspectionStore{Settings: s, Store: b.Store}, b.App.Jobs.Notify)
		single := b.Product(t, apptest.Single).ID
		ids := make([]string, perOrder)
		for i := range ids {
			ids[i] = single
		}
		var tickets []string
		for range orders {
			for _, c := range b.Order(t, ids...).Coupons {
				tickets = append(tickets, b.Activate(t, c.ID, ""))
			}
		}
		r, err := keys.Rotate(b.Ctx, barcode.EnvLive, 0)
		if err != nil || r.Stamped != orders*perOrder {
			t.Fatalf("rotate: %+v %v", r, err)
		}
		// Travellers activate while the operator revokes.
		extra := b.Order(t, ids[:20]...).Coupons
		var wg sync.WaitGroup
		extraTickets := make(chan string, len(extra))
		for _, c := range extra {
			wg.Add(1)
			go func() {
				defer wg.Done()
				act, err := b.App.ActivateCoupon(b.Ctx, idempotency.Claim{}, c.ID, apptest.Activation(""))
				if err != nil {
					t.Errorf("activation during the revocation: %v", err)
					return
				}
				extraTickets <- act.TicketID
			}()
		}
		began := time.Now()
		rv, err := keys.Revoke(b.Ctx, "1", "Schlüssel kompromittiert")
		took := time.Since(began)
		wg.Wait()
		close(extraTickets)
		if err != nil || rv.Resigned != orders*perOrder || rv.Successor != 2 || !rv.Removed {
			t.Fatalf("revoke: %+v %v", rv, err)
		}
		t.Logf("revoking a key with %d valid tickets took %v", rv.Resigned, took)
		for _, id := range tickets {
			if k := b.Ticket(t, id).Ticket.InspectionKeyID; k != 2 {
				t.Fatalf("ticket %s still on key %d", id, k)
			}
		}
		for id := range extraTickets {
			if k := b.Ticket(t, id).Ticket.InspectionKeyID; k != 0 {
				t.Errorf("ticket activated alongside stamped with key %d", k)
			}
		}
		js, err := b.Store.Read().Jobs(b.Ctx, passes.JobGoogleObject)
		if err != nil || len(js) != orders*perOrder {
			t.Fatalf("%d pass update jobs (%v)", len(js), err)
		}
		// Without Google credentials (wallets of zero Options, as a server
		// without them runs) they complete without a call.
		wallets.New(store.NewView[wallets.Queries](b.Store), b.Clock, b.App.Ticket, wallets.Options{}).HandleJobs(b.App.Jobs)
		for n := 1; n > 0; {
			if n, err = b.App.Jobs.RunOnce(b.Ctx); err != nil {
				t.Fatal(err)
			}
		}
		js, _ = b.Store.Read().Jobs(b.Ctx, passes.JobGoogleObject)
		for _, j := range js {
			if j.State != jobs.StateDone {
				t.Fatalf("job %+v", j)
			}
		}
		if left, err := b.Store.Read().TicketsSignedWith(b.Ctx, 1, b.Clock.Now()); err != nil || len(left) != 0 {
			t.Errorf("%d tickets left on the revoked key (%v)", len(left), err)
		}
	})
}
