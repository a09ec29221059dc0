package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceTickets(t *testing.T) { ticketsConformance.run(t) }

// ticketsConformance: tickets.go (tickets and their inspection keys).
var ticketsConformance = conformanceCases{
	"InsertTicket": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		key, used, reason, inv := "react-2", "react-1", "revoked", fxAt.Add(time.Hour)
		tk := f.ticket(c, "ticket-1", fxAt, func(tk *ticketing.Ticket) {
			tk.CycleID, tk.TariffSettings, tk.ReactivationKey, tk.UsedReactivationKey = "cycle-1", json.RawMessage(`{"zone":"A"}`), &key, &used
			tk.InvalidatedAt, tk.RevokedReason, tk.InspectionKeyID, tk.VDVNumber = &inv, &reason, 7, 4242
		})
		if got, err := f.read().Ticket(f.ctx, tk.ID); err != nil || !cmp.Equal(got, tk) {
			t.Errorf("Ticket after InsertTicket = %+v, %v; want %+v", got, err, tk)
		}
		// A second ticket for the same coupon and cycle (concurrent activations).
		dup := tk
		dup.ID, dup.ReactivationKey, dup.UsedReactivationKey = "ticket-2", nil, nil
		err := s.Write(f.ctx, func(q store.Q) error { return q.InsertTicket(f.ctx, dup) })
		wantCode(t, "a second ticket of the coupon's cycle", err, apperr.Conflict, store.CodeConflict)
	},
	"Ticket": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxOther, account.Test, "order-1", fxAt, 1).Coupons[0]
		tk := f.ticket(c, "ticket-1", fxAt, nil) // any tenant's: the id is the credential
		if got, err := f.read().Ticket(f.ctx, tk.ID); err != nil || !cmp.Equal(got, tk) {
			t.Errorf("Ticket = %+v, %v; want %+v", got, err, tk)
		}
		_, err := f.read().Ticket(f.ctx, "ticket-x")
		wantCode(t, "an unknown ticket", err, apperr.NotFound, store.CodeTicketNotFound)
	},
	"TicketsOfCoupon": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		cs := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		late := f.ticket(cs[0], "ticket-b", fxAt.Add(time.Hour), func(tk *ticketing.Ticket) { tk.CycleID = "y1" })
		early := f.ticket(cs[0], "ticket-c", fxAt, func(tk *ticketing.Ticket) { tk.CycleID = "y0" })
		f.ticket(cs[1], "ticket-a", fxAt, nil)
		if got, err := f.read().TicketsOfCoupon(f.ctx, cs[0].ID); err != nil || !cmp.Equal(got, []ticketing.Ticket{early, late}) {
			t.Errorf("TicketsOfCoupon = %v, %v; want its two oldest first", ticketIDs(got), err)
		}
		if got, err := f.read().TicketsOfCoupon(f.ctx, "coupon-x"); err != nil || len(got) != 0 {
			t.Errorf("TicketsOfCoupon of an unknown coupon = %v, %v", ticketIDs(got), err)
		}
	},
	"TicketByReactivationKey": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		key := "react-1"
		tk := f.ticket(c, "ticket-1", fxAt, func(tk *ticketing.Ticket) { tk.ReactivationKey = &key })
		checkTicketByKey(t, f, key, tk, f.read().TicketByReactivationKey)
	},
	"TicketByUsedReactivationKey": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		key := "react-1"
		tk := f.ticket(c, "ticket-1", fxAt, func(tk *ticketing.Ticket) { tk.UsedReactivationKey = &key })
		checkTicketByKey(t, f, key, tk, f.read().TicketByUsedReactivationKey)
	},
	"RevokeTicket": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		tk := f.ticket(c, "ticket-1", fxAt, nil)
		at := fxAt.Add(time.Hour)
		for i, want := range []bool{true, false} { // the second finds it invalid already
			var revoked bool
			f.write(func(q store.Q) (err error) {
				revoked, err = q.RevokeTicket(f.ctx, tk.ID, "lost", at.Add(time.Duration(i)*time.Hour))
				return err
			})
			if revoked != want {
				t.Errorf("RevokeTicket #%d = %v, want %v", i+1, revoked, want)
			}
		}
		got, err := f.read().Ticket(f.ctx, tk.ID)
		if err != nil || got.InvalidatedAt == nil || !got.InvalidatedAt.Equal(at) || got.RevokedReason == nil || *got.RevokedReason != "lost" {
			t.Errorf("ticket after RevokeTicket: %+v, %v; want invalid at %v for lost (the first revocation's)", got, err, at)
		}
		f.write(func(q store.Q) error {
			revoked, err := q.RevokeTicket(f.ctx, "ticket-x", "lost", at)
			if revoked || err != nil {
				t.Errorf("RevokeTicket of an unknown ticket = %v, %v", revoked, err)
			}
			return nil
		})
	},
	"StampTicketKeysIssuedBefore": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		keyTickets(f)
		var n int64
		f.write(func(q store.Q) (err error) {
			n, err = q.StampTicketKeysIssuedBefore(f.ctx, account.Live, 3, fxAt.Add(90*time.Minute), fxAt.Add(time.Hour))
			return err
		})
		// Unstamped, live, issued before, valid at: t-old and t-old-revoked (revoked tickets are stamped too).
		wantKeys(t, f, n, 2, map[string]uint16{"t-old": 3, "t-old-revoked": 3, "t-new": 0, "t-expired": 0, "t-test": 0, "t-stamped": 9})
	},
	"StampTicketKeys": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		keyTickets(f)
		var n int64
		f.write(func(q store.Q) (err error) {
			n, err = q.StampTicketKeys(f.ctx, account.Live, 3, fxAt.Add(time.Hour))
			return err
		})
		wantKeys(t, f, n, 3, map[string]uint16{"t-old": 3, "t-old-revoked": 3, "t-new": 3, "t-expired": 0, "t-test": 0, "t-stamped": 9})
	},
	"TicketsSignedWith": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		keyTickets(f)
		f.write(func(q store.Q) error { _, err := q.StampTicketKeys(f.ctx, account.Live, 3, fxAt); return err })
		got, err := f.read().TicketsSignedWith(f.ctx, 3, fxAt.Add(time.Hour))
		// Valid at, not invalidated, oldest first.
		if ids := ticketIDs(got); err != nil || !cmp.Equal(ids, []string{"t-old", "t-new"}) {
			t.Errorf("TicketsSignedWith(3) = %v, %v; want t-old, t-new", ids, err)
		}
	},
	"ResignTickets": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		keyTickets(f)
		var n int64
		f.write(func(q store.Q) (err error) {
			if _, err := q.StampTicketKeys(f.ctx, account.Live, 3, fxAt); err != nil {
				return err
			}
			n, err = q.ResignTickets(f.ctx, 3, 4, fxAt.Add(time.Hour))
			return err
		})
		// The revoked ticket keeps the old key.
		wantKeys(t, f, n, 2, map[string]uint16{"t-old": 4, "t-new": 4, "t-old-revoked": 3, "t-expired": 0, "t-test": 0, "t-stamped": 9})
	},
	"InspectionKeyUse": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		keyTickets(f)
		f.write(func(q store.Q) error { _, err := q.StampTicketKeys(f.ctx, account.Live, 3, fxAt); return err })
		got, err := f.read().InspectionKeyUse(f.ctx, fxAt.Add(time.Hour))
		want := map[uint16]ticketing.KeyUse{
			3: {Tickets: 2, LastValidUntil: fxAt.Add(2*time.Hour + 24*time.Hour - time.Second)}, // t-new's end
			9: {Tickets: 1, LastValidUntil: fxAt.Add(24*time.Hour - time.Second)},
		}
		if d := cmp.Diff(want, got); err != nil || d != "" {
			t.Errorf("InspectionKeyUse (%v; -want +got):\n%s", err, d)
		}
	},
	"Tickets": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		for i, c := range f.order(fxAccount, account.Live, "order-1", fxAt, 5).Coupons {
			want = append(want, ticketCursor(f.ticket(c, "ticket-"+c.ID, fxAt.Add(time.Duration(i)*time.Minute), nil)))
		}
		f.ticket(f.order(fxOther, account.Live, "order-2", fxAt, 1).Coupons[0], "t-other", fxAt, nil)
		f.ticket(f.order(fxAccount, account.Test, "order-3", fxAt, 1).Coupons[0], "t-test", fxAt, nil)
		checkList(t, s, account.Live, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.Tickets(f.ctx, ticketing.TicketFilter{Query: lq})
			return cursors(p.Items, ticketCursor), p.HasMore, err
		})
		f.write(func(q store.Q) error { _, err := q.RevokeTicket(f.ctx, "ticket-order-1-c1", "lost", fxAt); return err })
		lq := list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10}
		for state, ids := range map[ticketing.TicketState][]string{
			ticketing.TicketValid:       {"ticket-order-1-c4", "ticket-order-1-c3", "ticket-order-1-c2", "ticket-order-1-c0"},
			ticketing.TicketInvalidated: {"ticket-order-1-c1"},
		} {
			p, err := f.read().Tickets(f.ctx, ticketing.TicketFilter{Query: lq, State: state})
			if got := ticketIDs(p.Items); err != nil || !cmp.Equal(got, ids) {
				t.Errorf("Tickets in state %s = %v, %v; want %v", state, got, err, ids)
			}
		}
	},
}

func ticketCursor(tk ticketing.Ticket) list.Cursor {
	return list.Cursor{CreatedAt: tk.CreatedAt, ID: tk.ID}
}

func ticketIDs(ts []ticketing.Ticket) []string { return cursorIDs(cursors(ts, ticketCursor)) }

// checkTicketByKey tests a lookup of a ticket by a key: found, and false
// without an error for an unknown key.
func checkTicketByKey(t *testing.T, f *fixture, key string, want ticketing.Ticket,
	by func(ctx context.Context, key string) (ticketing.Ticket, bool, error)) {
	t.Helper()
	if got, ok, err := by(f.ctx, key); err != nil || !ok || !cmp.Equal(got, want) {
		t.Errorf("by key %s: %+v, %v, %v; want %+v", key, got, ok, err, want)
	}
	if got, ok, err := by(f.ctx, "react-x"); err != nil || ok {
		t.Errorf("by an unknown key: %+v, %v, %v; want none", got, ok, err)
	}
}

// keyTickets writes the tickets the inspection key cases work on, each
// valid for a day: t-old (live, issued at fxAt), t-old-revoked (live, at
// fxAt, revoked), t-new (live, at fxAt+2h), t-expired (live, ended before
// fxAt), t-test (test environment), t-stamped (live, key 9).
func keyTickets(f *fixture) {
	f.t.Helper()
	live := f.order(fxAccount, account.Live, "order-1", fxAt, 5).Coupons
	test := f.order(fxAccount, account.Test, "order-2", fxAt, 1).Coupons
	f.ticket(live[0], "t-old", fxAt, nil)
	f.ticket(live[1], "t-old-revoked", fxAt, nil)
	f.ticket(live[2], "t-new", fxAt.Add(2*time.Hour), nil)
	f.ticket(live[3], "t-expired", fxAt.Add(-48*time.Hour), nil)
	f.ticket(test[0], "t-test", fxAt, nil)
	f.ticket(live[4], "t-stamped", fxAt, func(tk *ticketing.Ticket) { tk.InspectionKeyID = 9 })
	f.write(func(q store.Q) error { _, err := q.RevokeTicket(f.ctx, "t-old-revoked", "lost", fxAt); return err })
}

// wantKeys fails unless n tickets changed (want) and each ticket has the
// inspection key keys names.
func wantKeys(t *testing.T, f *fixture, n, want int64, keys map[string]uint16) {
	t.Helper()
	if n != want {
		t.Errorf("%d tickets changed, want %d", n, want)
	}
	for id, kid := range keys {
		if got, err := f.read().Ticket(f.ctx, id); err != nil || got.InspectionKeyID != kid {
			t.Errorf("ticket %s key %d (%v), want %d", id, got.InspectionKeyID, err, kid)
		}
	}
}
