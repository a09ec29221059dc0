package inspection_test

import (
	"slices"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/apptest"
	"github.com/farebox/farebox/internal/app/inspection"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/credentials"
	"github.com/farebox/farebox/internal/store"
)

// TestRotateListPrune: keys in a key directory; a ticket signed with the
// first live key keeps it through a rotation (stamped), so the list shows
// the old key in use and pruning keeps it until the ticket has ended; then
// it is pruned and the new key alone remains. Bad requests change nothing.
// Both engines.
func TestRotateListPrune(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, b *apptest.Bundle) {
		s := credentials.Settings{InspectionKeys: t.TempDir()}
		if _, _, err := barcode.LoadOrCreateDir(s.InspectionKeys, nil); err != nil {
			t.Fatal(err)
		}
		notified := 0
		keys := inspection.New(store.NewView[inspection.Queries](b.Store), b.Clock, credentials.InspectionStore{Settings: s, Store: b.Store},
			func() { notified++ })
		live := func() map[uint16]inspection.KeyInfo {
			t.Helper()
			list, err := keys.Keys(b.Ctx)
			if err != nil {
				t.Fatal(err)
			}
			out := map[uint16]inspection.KeyInfo{}
			for _, k := range list {
				if k.Environment == barcode.EnvLive {
					out[k.Kid] = k
				}
			}
			return out
		}
		if k := live(); len(k) != 1 || !k[1].Active || !k[1].Signing || k[1].Tickets != 0 {
			t.Fatalf("keys before: %+v", k)
		}
		id := b.Activate(t, b.Order(t, b.Product(t, apptest.Single).ID).Coupons[0].ID, "")

		field := func(err error) string {
			if e := apperr.As(err); e != nil && len(e.Details) == 1 {
				return e.Code + " " + e.Details[0].Field
			}
			return ""
		}
		if _, err := keys.Rotate(b.Ctx, "staging", 0); field(err) != barcode.CodeInvalidEnvironment+" /environment" {
			t.Errorf("bad environment: %v", err)
		}
		if _, err := keys.Rotate(b.Ctx, barcode.EnvLive, -time.Hour); field(err) != inspection.CodeInvalidPublishAhead+" /publish_ahead" {
			t.Errorf("negative publish-ahead: %v", err)
		}
		r, err := keys.Rotate(b.Ctx, barcode.EnvLive, 0)
		if err != nil || r.Old != 1 || r.New.ID != 2 || r.Stamped != 1 || len(r.Pruned) != 0 || !r.SignsFrom.Equal(b.Clock.Now()) {
			t.Fatalf("rotate: %+v %v", r, err)
		}
		if k := b.Ticket(t, id).Ticket.InspectionKeyID; k != 1 {
			t.Errorf("the ticket is stamped with key %d, want 1", k)
		}
		k := live()
		if len(k) != 2 || k[1].Active || k[1].Tickets != 1 || k[1].LastValidUntil == nil || !k[2].Active || k[2].Tickets != 0 {
			t.Fatalf("keys after the rotation: %+v", k)
		}
		if pruned, err := keys.Prune(b.Ctx); err != nil || len(pruned) != 0 {
			t.Errorf("pruned %v (%v) while key 1 signs a valid ticket", pruned, err)
		}
		b.Clock.Set(k[1].LastValidUntil.Add(time.Second))
		if pruned, err := keys.Prune(b.Ctx); err != nil || !slices.Equal(pruned, []uint16{1}) {
			t.Errorf("pruned %v (%v), want key 1", pruned, err)
		}
		if k := live(); len(k) != 1 || !k[2].Active {
			t.Errorf("keys after pruning: %+v", k)
		}
		if notified != 0 {
			t.Errorf("rotation and pruning woke the job workers %d times", notified)
		}
	})
}

// TestRevokeRefusals: a key revocation names a stored key that has a
// successor, with a reason; anything else is refused before a ticket or the
// feed changes.
func TestRevokeRefusals(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, b *apptest.Bundle) {
		s := credentials.Settings{InspectionKeys: t.TempDir()}
		if _, _, err := barcode.LoadOrCreateDir(s.InspectionKeys, nil); err != nil {
			t.Fatal(err)
		}
		keys := inspection.New(store.NewView[inspection.Queries](b.Store), b.Clock, credentials.InspectionStore{Settings: s, Store: b.Store}, nil)
		for _, c := range []struct{ kid, reason, code string }{
			{"x1", "kompromittiert", inspection.CodeInvalidKeyID},
			{"0", "kompromittiert", inspection.CodeInvalidKeyID},
			{"1", " ", inspection.CodeInvalidRevocationReason},
			{"999", "kompromittiert", inspection.CodeUnknownInspectionKey},
			{"1", "kompromittiert", inspection.CodeInspectionKeyActive},
		} {
			if _, err := keys.Revoke(b.Ctx, c.kid, c.reason); apperr.As(err) == nil || apperr.As(err).Code != c.code {
				t.Errorf("revoke %q %q: %v, want %s", c.kid, c.reason, err, c.code)
			}
		}
		if n, err := b.Store.Read().CountRows(b.Ctx, "revocations"); err != nil || n != 0 {
			t.Errorf("%d feed entries after refusals (%v)", n, err)
		}
	})
}
