package store_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceTestClocks(t *testing.T) { testClocksConformance.run(t) }

// testClocksConformance: testclocks.go (test clocks and the tickets an
// advance reaches).
var testClocksConformance = conformanceCases{
	"InsertTestClock": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		name := "Ä clock"
		c := clockRecord("clock-1", account.Test, fxAt)
		c.Name, c.FrozenTime = &name, fxAt.Add(72*time.Hour)
		f.write(func(q store.Q) error { return q.InsertTestClock(f.ctx, c) })
		if got, err := f.read().TestClock(f.ctx, fxAccount, account.Test, c.ID); err != nil || !cmp.Equal(got, c) {
			t.Errorf("TestClock after InsertTestClock = %+v, %v; want %+v", got, err, c)
		}
		err := s.Write(f.ctx, func(q store.Q) error { return q.InsertTestClock(f.ctx, c) })
		wantCode(t, "a second clock of the same id", err, apperr.Conflict, store.CodeConflict)
	},
	"TestClock": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c, deleted := clockRecord("clock-1", account.Test, fxAt), clockRecord("clock-2", account.Test, fxAt)
		f.write(func(q store.Q) error {
			if err := q.InsertTestClock(f.ctx, c); err != nil {
				return err
			}
			if err := q.InsertTestClock(f.ctx, deleted); err != nil {
				return err
			}
			return q.DeleteTestClock(f.ctx, deleted.ID, fxAt)
		})
		if got, err := f.read().TestClock(f.ctx, fxAccount, account.Test, c.ID); err != nil || !cmp.Equal(got, c) {
			t.Errorf("TestClock = %+v, %v", got, err)
		}
		for _, q := range []struct {
			acct string
			env  account.Environment
			id   string
		}{{fxOther, account.Test, c.ID}, {fxAccount, account.Live, c.ID}, {fxAccount, account.Test, deleted.ID}, {fxAccount, account.Test, "clock-x"}} {
			_, err := f.read().TestClock(f.ctx, q.acct, q.env, q.id)
			wantCode(t, q.acct+"/"+string(q.env)+"/"+q.id, err, apperr.NotFound, store.CodeTestClockNotFound)
		}
	},
	"TestClockTime": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := clockRecord("clock-1", account.Test, fxAt.Add(time.Hour))
		f.write(func(q store.Q) error {
			if err := q.InsertTestClock(f.ctx, c); err != nil {
				return err
			}
			return q.DeleteTestClock(f.ctx, c.ID, fxAt) // deleted or not: the objects on it keep its time
		})
		if got, err := f.read().TestClockTime(f.ctx, c.ID); err != nil || !got.Equal(c.FrozenTime) || got.Location() != time.UTC {
			t.Errorf("TestClockTime = %v, %v; want %v in UTC", got, err, c.FrozenTime)
		}
		_, err := f.read().TestClockTime(f.ctx, "clock-x")
		wantCode(t, "an unknown clock", err, apperr.NotFound, store.CodeTestClockNotFound)
	},
	"LockTestClock": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := clockRecord("clock-1", account.Test, fxAt)
		f.write(func(q store.Q) error {
			if err := q.InsertTestClock(f.ctx, c); err != nil {
				return err
			}
			if err := q.LockTestClock(f.ctx, c.ID); err != nil {
				return err
			}
			return q.LockTestClock(f.ctx, "clock-x")
		})
		if got, err := f.read().TestClock(f.ctx, fxAccount, account.Test, c.ID); err != nil || !cmp.Equal(got, c) {
			t.Errorf("clock changed by its lock: %+v, %v", got, err)
		}
	},
	"SetTestClock": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c, other := clockRecord("clock-1", account.Test, fxAt), clockRecord("clock-2", account.Test, fxAt)
		f.write(func(q store.Q) error {
			if err := q.InsertTestClock(f.ctx, c); err != nil {
				return err
			}
			if err := q.InsertTestClock(f.ctx, other); err != nil {
				return err
			}
			return q.SetTestClock(f.ctx, c.ID, fxAt.Add(24*time.Hour), ticketing.TestClockAdvancing)
		})
		c.FrozenTime, c.Status = fxAt.Add(24*time.Hour), ticketing.TestClockAdvancing
		for _, want := range []ticketing.TestClock{c, other} {
			if got, err := f.read().TestClock(f.ctx, fxAccount, account.Test, want.ID); err != nil || !cmp.Equal(got, want) {
				t.Errorf("clock %s after SetTestClock = %+v, %v; want %+v", want.ID, got, err, want)
			}
		}
	},
	"SetTestClockStatus": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := clockRecord("clock-1", account.Test, fxAt)
		f.write(func(q store.Q) error {
			if err := q.InsertTestClock(f.ctx, c); err != nil {
				return err
			}
			return q.SetTestClockStatus(f.ctx, c.ID, ticketing.TestClockAdvancing)
		})
		c.Status = ticketing.TestClockAdvancing // the time stays
		if got, err := f.read().TestClock(f.ctx, fxAccount, account.Test, c.ID); err != nil || !cmp.Equal(got, c) {
			t.Errorf("clock after SetTestClockStatus = %+v, %v; want %+v", got, err, c)
		}
	},
	"DeleteTestClock": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := clockRecord("clock-1", account.Test, fxAt)
		f.write(func(q store.Q) error {
			if err := q.InsertTestClock(f.ctx, c); err != nil {
				return err
			}
			return q.DeleteTestClock(f.ctx, c.ID, fxAt)
		})
		_, err := f.read().TestClock(f.ctx, fxAccount, account.Test, c.ID)
		wantCode(t, "the deleted clock", err, apperr.NotFound, store.CodeTestClockNotFound)
		if p, err := f.read().TestClocks(f.ctx, ticketing.TestClockFilter{Query: list.Query{AccountID: fxAccount, Environment: account.Test, Limit: 5}}); err != nil || len(p.Items) != 0 {
			t.Errorf("the deleted clock is listed: %+v, %v", p.Items, err)
		}
	},
	"TestClocks": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		f.write(func(q store.Q) error {
			for i, id := range []string{"k-a", "k-b", "k-c", "k-d", "k-e", "k-deleted"} {
				c := clockRecord(id, account.Test, fxAt)
				c.CreatedAt = fxAt.Add(time.Duration(i) * time.Minute)
				if err := q.InsertTestClock(f.ctx, c); err != nil {
					return err
				}
				if id != "k-deleted" {
					want = append(want, list.Cursor{CreatedAt: c.CreatedAt, ID: id})
				}
			}
			if err := q.DeleteTestClock(f.ctx, "k-deleted", fxAt); err != nil {
				return err
			}
			other := clockRecord("k-other", account.Test, fxAt)
			other.AccountID = fxOther
			if err := q.InsertTestClock(f.ctx, other); err != nil {
				return err
			}
			return q.InsertTestClock(f.ctx, clockRecord("k-live", account.Live, fxAt))
		})
		checkList(t, s, account.Test, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.TestClocks(f.ctx, ticketing.TestClockFilter{Query: lq})
			return cursors(p.Items, func(c ticketing.TestClock) list.Cursor { return list.Cursor{CreatedAt: c.CreatedAt, ID: c.ID} }), p.HasMore, err
		})
	},
	"ClockTicketsStarted": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		clock := "clock-1"
		f.write(func(q store.Q) error { return q.InsertTestClock(f.ctx, clockRecord(clock, account.Test, fxAt)) })
		on := f.order(fxAccount, account.Test, "order-1", fxAt, 1).Coupons[0]
		off := f.order(fxAccount, account.Test, "order-2", fxAt, 1).Coupons[0]
		f.write(func(q store.Q) error {
			on.ID, on.OrderID, on.Position, on.TestClockID = "coupon-on", "order-1", 1, &clock
			return q.InsertCoupon(f.ctx, on)
		})
		for i, c := range []struct {
			coupon ticketing.Coupon
			id     string
			from   time.Time
		}{{on, "t-b", fxAt.Add(2 * time.Hour)}, {on, "t-a", fxAt.Add(24 * time.Hour)}, {on, "t-before", fxAt},
			{on, "t-after", fxAt.Add(25 * time.Hour)}, {off, "t-off", fxAt.Add(2 * time.Hour)}} {
			f.ticket(c.coupon, c.id, c.from, func(tk *ticketing.Ticket) { tk.CycleID = string(rune('a' + i)) })
		}
		// Starting after from and not after to, by id.
		got, err := f.read().ClockTicketsStarted(f.ctx, clock, fxAt, fxAt.Add(24*time.Hour))
		if err != nil || !cmp.Equal(got, []string{"t-a", "t-b"}) {
			t.Errorf("ClockTicketsStarted = %v, %v; want t-a, t-b", got, err)
		}
	},
	"NextVDVNumber": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		// Tickets holding hash-derived numbers 2 (still valid) and 3 (ended).
		f.ticket(c[0], "t-2", fxAt, func(tk *ticketing.Ticket) { tk.VDVNumber = 2 })
		f.ticket(c[1], "t-3", fxAt.Add(-72*time.Hour), func(tk *ticketing.Ticket) { tk.VDVNumber = 3 })
		var got []uint32
		for range 3 {
			f.write(func(q store.Q) error {
				n, err := q.NextVDVNumber(f.ctx, fxAt)
				got = append(got, n)
				return err
			})
		}
		if !cmp.Equal(got, []uint32{1, 3, 4}) {
			t.Errorf("NextVDVNumber = %v, want 1, 3, 4 (2 is held by a valid ticket)", got)
		}
	},
	"UnnumberedVDVTickets": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 4).Coupons
		f.ticket(c[0], "t-b", fxAt, nil)
		f.ticket(c[1], "t-a", fxAt, nil)
		f.ticket(c[2], "t-numbered", fxAt, func(tk *ticketing.Ticket) { tk.VDVNumber = 9 })
		f.ticket(c[3], "t-ended", fxAt.Add(-72*time.Hour), nil)
		for _, q := range []struct {
			products []string
			limit    int
			want     []string
		}{{[]string{fxProduct}, 10, []string{"t-a", "t-b"}}, {[]string{fxProduct}, 1, []string{"t-a"}}, {[]string{"product-x"}, 10, nil}, {nil, 10, nil}} {
			got, err := f.read().UnnumberedVDVTickets(f.ctx, q.products, fxAt, q.limit)
			if err != nil || !cmp.Equal(got, q.want) {
				t.Errorf("UnnumberedVDVTickets(%v, %d) = %v, %v; want %v", q.products, q.limit, got, err, q.want)
			}
		}
	},
	"SetVDVNumbers": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		f.ticket(c[0], "t-1", fxAt, nil)
		f.ticket(c[1], "t-2", fxAt, func(tk *ticketing.Ticket) { tk.VDVNumber = 9 })
		f.write(func(q store.Q) error { return q.SetVDVNumbers(f.ctx, map[string]uint32{"t-1": 5, "t-2": 6}) })
		for id, want := range map[string]uint32{"t-1": 5, "t-2": 9} { // a stored number is never replaced
			if tk, err := f.read().Ticket(f.ctx, id); err != nil || tk.VDVNumber != want {
				t.Errorf("ticket %s number %d (%v), want %d", id, tk.VDVNumber, err, want)
			}
		}
	},
}
