package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceDevices(t *testing.T) { devicesConformance.run(t) }

// deviceTicket writes ticket t-1 of a live order of fxAccount, unbound.
func deviceTicket(f *fixture) ticketing.Ticket {
	f.t.Helper()
	o := f.order(fxAccount, account.Live, "o-1", fxAt, 1)
	return f.ticket(o.Coupons[0], "t-1", fxAt, nil)
}

// bind binds key to ticket id at at in its own transaction.
func bind(f *fixture, id, key string, at time.Time) (string, error) {
	var outcome string
	err := f.s.Write(f.ctx, func(q store.Q) (err error) { outcome, err = q.BindDevice(f.ctx, id, key, at); return err })
	return outcome, err
}

// allowMove records a permission to move ticket id at at (rate limit
// notBefore) in its own transaction.
func allowMove(f *fixture, id string, at, notBefore time.Time) (bool, error) {
	var ok bool
	err := f.s.Write(f.ctx, func(q store.Q) (err error) { ok, err = q.AllowDeviceMove(f.ctx, id, at, notBefore); return err })
	return ok, err
}

// wantBinding fails unless ticket id's binding is want.
func wantBinding(t *testing.T, f *fixture, want ticketing.DeviceBinding) {
	t.Helper()
	got, err := f.read().DeviceBinding(f.ctx, want.TicketID)
	if d := cmp.Diff(want, got); err != nil || d != "" {
		t.Errorf("DeviceBinding(%s) (%v; -want +got):\n%s", want.TicketID, err, d)
	}
}

// devicesConformance: devices.go (a ticket's binding to a device key and
// the partner's permission to move it).
var devicesConformance = conformanceCases{
	"DeviceBinding": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		tk := deviceTicket(f)
		wantBinding(t, f, ticketing.DeviceBinding{TicketID: tk.ID})
		at := fxAt.Add(time.Hour).In(time.FixedZone("CET", 3600))
		if _, err := bind(f, tk.ID, "key-a", at); err != nil {
			t.Fatal(err)
		}
		u := at.UTC()
		wantBinding(t, f, ticketing.DeviceBinding{TicketID: tk.ID, Key: "key-a", BoundAt: &u})
		_, err := f.read().DeviceBinding(f.ctx, "unknown-id")
		wantCode(t, "an unknown ticket", err, apperr.NotFound, store.CodeTicketNotFound)
	},
	"BindDevice": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		tk := deviceTicket(f)
		at1, at2, at3, at4 := fxAt.Add(time.Hour), fxAt.Add(2*time.Hour), fxAt.Add(3*time.Hour), fxAt.Add(4*time.Hour)
		for _, c := range []struct {
			what, key string
			at        time.Time
			want      string
		}{
			{"the first key", "key-a", at1, ticketing.BindFirst},
			{"the same key again", "key-a", at2, ticketing.BindSame},
			{"another key without a permission", "key-b", at2, ticketing.BindRefused},
		} {
			if got, err := bind(f, tk.ID, c.key, c.at); err != nil || got != c.want {
				t.Errorf("%s: %q, %v; want %q", c.what, got, err, c.want)
			}
		}
		wantBinding(t, f, ticketing.DeviceBinding{TicketID: tk.ID, Key: "key-a", BoundAt: &at1})
		if ok, err := allowMove(f, tk.ID, at2, fxAt); !ok || err != nil {
			t.Fatalf("AllowDeviceMove: %v, %v", ok, err)
		}
		if got, err := bind(f, tk.ID, "key-a", at3); err != nil || got != ticketing.BindSame {
			t.Errorf("the bound key while a move is allowed: %q, %v; want %q (the permission stays)", got, err, ticketing.BindSame)
		}
		if got, err := bind(f, tk.ID, "key-b", at3); err != nil || got != ticketing.BindMoved {
			t.Errorf("another key with a permission: %q, %v; want %q", got, err, ticketing.BindMoved)
		}
		wantBinding(t, f, ticketing.DeviceBinding{TicketID: tk.ID, Key: "key-b", BoundAt: &at3, Moves: 1, MoveLastAllowedAt: &at2})
		if got, err := bind(f, tk.ID, "key-c", at4); err != nil || got != ticketing.BindRefused {
			t.Errorf("a third key after the permission was used: %q, %v; want %q", got, err, ticketing.BindRefused)
		}
		err := s.Write(f.ctx, func(q store.Q) error { _, err := q.BindDevice(f.ctx, "unknown-id", "key-a", at1); return err })
		wantCode(t, "an unknown ticket", err, apperr.NotFound, store.CodeTicketNotFound)

		// Two devices binding an unbound ticket at once: one binds, the other is refused.
		o := f.order(fxAccount, account.Live, "o-2", fxAt, 1)
		race := f.ticket(o.Coupons[0], "t-race", fxAt, nil)
		outcomes := map[string]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, key := range []string{"key-x", "key-y"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := bind(f, race.ID, key, at1)
				if err != nil {
					t.Errorf("concurrent bind of %s: %v", key, err)
				}
				mu.Lock()
				outcomes[got]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if outcomes[ticketing.BindFirst] != 1 || outcomes[ticketing.BindRefused] != 1 {
			t.Errorf("two concurrent binds of two keys: %v; want one %q and one %q", outcomes, ticketing.BindFirst, ticketing.BindRefused)
		}
	},
	"AllowDeviceMove": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		tk := deviceTicket(f)
		at1, day := fxAt.Add(time.Hour), 24*time.Hour
		if ok, err := allowMove(f, tk.ID, at1, at1.Add(-day)); ok || err != nil {
			t.Errorf("a permission for an unbound ticket: %v, %v; want nothing changed", ok, err)
		}
		var unknown bool
		err := s.Write(f.ctx, func(q store.Q) (err error) {
			unknown, err = q.AllowDeviceMove(f.ctx, "unknown-id", at1, at1.Add(-day))
			return err
		})
		if ok := unknown; ok || err != nil {
			t.Errorf("a permission for an unknown ticket: %v, %v; want false", ok, err)
		}
		if _, err := bind(f, tk.ID, "key-a", fxAt); err != nil {
			t.Fatal(err)
		}
		if ok, err := allowMove(f, tk.ID, at1, at1.Add(-day)); !ok || err != nil {
			t.Errorf("the first permission: %v, %v", ok, err)
		}
		bound := fxAt
		wantBinding(t, f, ticketing.DeviceBinding{TicketID: tk.ID, Key: "key-a", BoundAt: &bound, MoveAllowedAt: &at1, MoveLastAllowedAt: &at1})
		at2 := at1.Add(time.Hour)
		if ok, err := allowMove(f, tk.ID, at2, at2.Add(-day)); ok || err != nil {
			t.Errorf("a second permission within the rate limit: %v, %v; want refused", ok, err)
		}
		at3 := at1.Add(day) // exactly at the limit
		if ok, err := allowMove(f, tk.ID, at3, at3.Add(-day)); !ok || err != nil {
			t.Errorf("a permission a day after the last: %v, %v", ok, err)
		}
		wantBinding(t, f, ticketing.DeviceBinding{TicketID: tk.ID, Key: "key-a", BoundAt: &bound, MoveAllowedAt: &at3, MoveLastAllowedAt: &at3})

		// Two permissions at once: the rate limit lets one through.
		at4 := at3.Add(2 * day)
		results := make(chan bool, 2)
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := allowMove(f, tk.ID, at4, at4.Add(-day))
				if err != nil {
					t.Errorf("concurrent permission: %v", err)
				}
				results <- ok
			}()
		}
		wg.Wait()
		close(results)
		granted := 0
		for ok := range results {
			if ok {
				granted++
			}
		}
		if granted != 1 {
			t.Errorf("two concurrent permissions: %d granted, want 1", granted)
		}
	},
}
