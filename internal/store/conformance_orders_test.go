package store_test

import (
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

func TestConformanceOrders(t *testing.T) { ordersConformance.run(t) }

// ordersConformance: orders.go (orders, coupons, billable items).
var ordersConformance = conformanceCases{
	"InsertOrder": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		ref, clock := "ref-1", "clock-1"
		o := ticketing.Order{ID: "order-1", AccountID: fxAccount, Environment: account.Test, OptionalOrderReference: &ref,
			RestoreSecret: "secret", CreatedAt: fxAt.Add(123456789 * time.Nanosecond)}
		f.write(func(q store.Q) error {
			if err := q.InsertTestClock(f.ctx, clockRecord(clock, account.Test, fxAt)); err != nil {
				return err
			}
			o.TestClockID = &clock
			return q.InsertOrder(f.ctx, o)
		})
		got, err := f.read().Order(f.ctx, fxAccount, account.Test, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		o.CreatedAt = o.CreatedAt.Truncate(time.Microsecond) // both engines keep microseconds
		if d := cmp.Diff(o, got); d != "" {
			t.Errorf("Order after InsertOrder (-want +got):\n%s", d)
		}
		err = s.Write(f.ctx, func(q store.Q) error { return q.InsertOrder(f.ctx, o) })
		wantCode(t, "a second order of the same id", err, apperr.Conflict, store.CodeConflict)
	},
	"Order": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		o := f.order(fxAccount, account.Live, "order-1", fxAt, 3)
		got, err := f.read().Order(f.ctx, fxAccount, account.Live, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(o, got); d != "" {
			t.Errorf("Order with its coupons in position order (-want +got):\n%s", d)
		}
		for _, c := range []struct{ acct, id string }{{fxOther, o.ID}, {fxAccount, "order-x"}} {
			_, err := f.read().Order(f.ctx, c.acct, account.Live, c.id)
			wantCode(t, c.acct+"/"+c.id, err, apperr.NotFound, store.CodeOrderNotFound)
		}
		_, err = f.read().Order(f.ctx, fxAccount, account.Test, o.ID)
		wantCode(t, "the order in the other environment", err, apperr.NotFound, store.CodeOrderNotFound)
	},
	"Orders": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		for i, id := range []string{"o-a", "o-b", "o-c", "o-d", "o-e"} {
			o := f.order(fxAccount, account.Live, id, fxAt.Add(time.Duration(i)*time.Minute), 2)
			want = append(want, list.Cursor{CreatedAt: o.CreatedAt, ID: o.ID})
		}
		f.order(fxOther, account.Live, "o-other", fxAt.Add(time.Minute), 1)
		f.order(fxAccount, account.Test, "o-test", fxAt.Add(time.Minute), 1)
		checkList(t, s, account.Live, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.Orders(f.ctx, ticketing.OrderFilter{Query: lq})
			for _, o := range p.Items {
				if len(o.Coupons) != 2 || o.Coupons[0].Position != 0 || o.Coupons[1].Position != 1 {
					t.Errorf("order %s listed with coupons %+v, want its two in position order", o.ID, o.Coupons)
				}
			}
			return cursors(p.Items, orderCursor), p.HasMore, err
		})
		// The reference filter.
		ref := "ref-x"
		f.write(func(q store.Q) error {
			return q.InsertOrder(f.ctx, ticketing.Order{ID: "o-ref", AccountID: fxAccount, Environment: account.Live,
				OptionalOrderReference: &ref, RestoreSecret: "s", CreatedAt: fxAt})
		})
		p, err := f.read().Orders(f.ctx, ticketing.OrderFilter{Query: list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10},
			OptionalOrderReference: &ref})
		if err != nil || len(p.Items) != 1 || p.Items[0].ID != "o-ref" || len(p.Items[0].Coupons) != 0 {
			t.Errorf("Orders with reference %s = %+v, %v; want o-ref alone, without coupons", ref, p.Items, err)
		}
	},
	"InsertCoupon": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		o := f.order(fxAccount, account.Test, "order-1", fxAt, 0)
		sub, item := f.subscription(fxAccount, account.Test, "sub-1", fxAt, 0), f.item(fxAccount, account.Test, "item-1", fxAt, nil)
		orig := f.order(fxAccount, account.Test, "order-0", fxAt, 1).Coupons[0].ID
		c := ticketing.Coupon{ID: "coupon-1", OrderID: o.ID, Position: 0, AccountID: fxAccount, Environment: account.Test, ProductID: fxProduct,
			SubscriptionID: &sub.ID, BillableItemID: &item.ID, OriginalCouponID: &orig, TariffSettings: json.RawMessage(`{"zone":"A"}`),
			Activated: true, CreatedAt: fxAt}
		f.write(func(q store.Q) error { return q.InsertCoupon(f.ctx, c) })
		got, err := f.read().Coupon(f.ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c, got); d != "" {
			t.Errorf("Coupon after InsertCoupon (-want +got):\n%s", d)
		}
		err = s.Write(f.ctx, func(q store.Q) error { return q.InsertCoupon(f.ctx, c) })
		wantCode(t, "a second coupon of the same id", err, apperr.Conflict, store.CodeConflict)
	},
	"Coupon": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		o := f.order(fxOther, account.Live, "order-1", fxAt, 2)
		// The id is the credential: any tenant's coupon is found.
		if got, err := f.read().Coupon(f.ctx, o.Coupons[1].ID); err != nil || !cmp.Equal(got, o.Coupons[1]) {
			t.Errorf("Coupon = %+v, %v; want %+v", got, err, o.Coupons[1])
		}
		_, err := f.read().Coupon(f.ctx, "coupon-x")
		wantCode(t, "an unknown coupon", err, apperr.NotFound, store.CodeCouponNotFound)
	},
	"SetCouponTariffSettings": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		for _, ts := range []json.RawMessage{json.RawMessage(`{"zone":"B"}`), nil} {
			f.write(func(q store.Q) error { return q.SetCouponTariffSettings(f.ctx, c[0].ID, ts) })
			got, err := f.read().Coupon(f.ctx, c[0].ID)
			if err != nil || string(got.TariffSettings) != string(ts) {
				t.Errorf("tariff settings %s after setting %s (%v)", got.TariffSettings, ts, err)
			}
		}
		wantCouponsUnchanged(t, f, c[1])
	},
	"MarkCouponActivated": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		for range 2 { // idempotent
			f.write(func(q store.Q) error { return q.MarkCouponActivated(f.ctx, c[0].ID) })
			if got, err := f.read().Coupon(f.ctx, c[0].ID); err != nil || !got.Activated {
				t.Errorf("coupon after MarkCouponActivated: %+v, %v", got, err)
			}
		}
		wantCouponsUnchanged(t, f, c[1])
	},
	"SetCouponRestored": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		f.write(func(q store.Q) error { return q.SetCouponRestored(f.ctx, c[0].ID, "coupon-new") })
		if got, err := f.read().Coupon(f.ctx, c[0].ID); err != nil || got.RestoredCouponID == nil || *got.RestoredCouponID != "coupon-new" {
			t.Errorf("coupon after SetCouponRestored: %+v, %v", got, err)
		}
		wantCouponsUnchanged(t, f, c[1])
	},
	"InsertBillableItem": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Test, "order-1", fxAt, 1).Coupons[0]
		b := f.item(fxAccount, account.Test, "item-1", fxAt, func(b *ticketing.BillableItem) { b.CouponID = &c.ID })
		got, err := f.read().BillableItem(f.ctx, fxAccount, account.Test, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != b.ID || got.AmountCents != b.AmountCents || got.Currency != b.Currency || got.VATRateBP != b.VATRateBP ||
			got.Description != b.Description || got.CouponID == nil || *got.CouponID != c.ID || !got.OrderedAt.Equal(b.OrderedAt) {
			t.Errorf("BillableItem after InsertBillableItem = %+v, want %+v", got, b)
		}
		err = s.Write(f.ctx, func(q store.Q) error { return q.InsertBillableItem(f.ctx, b) })
		wantCode(t, "a second item of the same id", err, apperr.Conflict, store.CodeConflict)
	},
	"CountRows": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.order(fxAccount, account.Live, "order-1", fxAt, 3)
		f.order(fxOther, account.Test, "order-2", fxAt, 0)
		for table, want := range map[string]int{"orders": 2, "coupons": 3, "tickets": 0} {
			if n, err := f.read().CountRows(f.ctx, table); err != nil || n != want {
				t.Errorf("CountRows(%s) = %d, %v; want %d", table, n, err, want)
			}
		}
		if _, err := f.read().CountRows(f.ctx, "accounts; DROP TABLE orders"); err == nil {
			t.Error("CountRows of a table it does not list answered")
		}
	},
	"LockCoupon": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		f.write(func(q store.Q) error {
			if err := q.LockCoupon(f.ctx, c.ID); err != nil {
				return err
			}
			return q.LockCoupon(f.ctx, "coupon-x") // an unknown coupon locks nothing, and is no error
		})
		wantCouponsUnchanged(t, f, c)
	},
	"LockedCoupon": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		f.write(func(q store.Q) error {
			got, err := q.LockedCoupon(f.ctx, c.ID)
			if err != nil || !cmp.Equal(got, c) {
				t.Errorf("LockedCoupon = %+v, %v; want %+v", got, err, c)
			}
			_, err = q.LockedCoupon(f.ctx, "coupon-x")
			wantCode(t, "an unknown coupon", err, apperr.NotFound, store.CodeCouponNotFound)
			return nil
		})
	},
	"Coupons": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		for i, id := range []string{"o-a", "o-b", "o-c"} {
			for _, c := range f.order(fxAccount, account.Live, id, fxAt.Add(time.Duration(i)*time.Minute), 2).Coupons {
				want = append(want, couponCursor(c)) // coupons of one order share its time: the id breaks the tie
			}
		}
		f.order(fxOther, account.Live, "o-other", fxAt, 1)
		f.order(fxAccount, account.Test, "o-test", fxAt, 1)
		checkList(t, s, account.Live, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.Coupons(f.ctx, ticketing.CouponFilter{Query: lq})
			return cursors(p.Items, couponCursor), p.HasMore, err
		})
		f.write(func(q store.Q) error {
			if err := q.MarkCouponActivated(f.ctx, "o-a-c0"); err != nil {
				return err
			}
			if err := q.MarkCouponActivated(f.ctx, "o-b-c1"); err != nil {
				return err
			}
			return q.SetCouponRestored(f.ctx, "o-b-c1", "o-c-c0")
		})
		for state, ids := range map[ticketing.CouponState][]string{
			ticketing.CouponNotActivated: {"o-c-c1", "o-c-c0", "o-b-c0", "o-a-c1"},
			ticketing.CouponActivated:    {"o-a-c0"},
			ticketing.CouponRestored:     {"o-b-c1"},
		} {
			p, err := f.read().Coupons(f.ctx, ticketing.CouponFilter{Query: list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10}, State: state})
			if got := cursorIDs(cursors(p.Items, couponCursor)); err != nil || !cmp.Equal(got, ids) {
				t.Errorf("Coupons in state %s = %v, %v; want %v", state, got, err, ids)
			}
		}
	},
}

func orderCursor(o ticketing.Order) list.Cursor { return list.Cursor{CreatedAt: o.CreatedAt, ID: o.ID} }
func couponCursor(c ticketing.Coupon) list.Cursor {
	return list.Cursor{CreatedAt: c.CreatedAt, ID: c.ID}
}

// wantCouponsUnchanged fails unless the stored coupons are as cs: a change
// of one coupon touches no other.
func wantCouponsUnchanged(t *testing.T, f *fixture, cs ...ticketing.Coupon) {
	t.Helper()
	for _, c := range cs {
		if got, err := f.read().Coupon(f.ctx, c.ID); err != nil || !cmp.Equal(got, c) {
			t.Errorf("coupon %s changed: %+v, %v; want %+v", c.ID, got, err, c)
		}
	}
}
