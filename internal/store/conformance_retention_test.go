package store_test

import (
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/retention"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceRetention(t *testing.T) { retentionConformance.run(t) }

// medium is a ticket's identification medium with a person's name.
const medium = `{"photo_id_name_only":{"first_name":"Erika","last_name":"Mustermann"}}`

// erasedMedium is medium erased.
var erasedMedium = string(retention.NeutralMedium(json.RawMessage(medium)))

// retentionConformance: retention.go (the retention run's erasures and
// erasure on request; docs/privacy.md).
var retentionConformance = conformanceCases{
	"RetentionDue": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if d, err := f.read().RetentionDue(f.ctx, fxAt, fxAt, fxAt); err != nil || !cmp.Equal(d, retention.Due{}) {
			t.Errorf("RetentionDue of nothing = %+v, %v", d, err)
		}
		retentionWorld(f)
		cutoff := fxAt.Add(-24 * time.Hour)
		d, err := f.read().RetentionDue(f.ctx, cutoff, fxAt, fxAt.Add(time.Hour))
		ticketEnd, couponAt, restricted := fxAt.Add(-72*time.Hour+24*time.Hour-time.Second), fxAt.Add(-72*time.Hour), fxAt.Add(-time.Hour)
		want := retention.Due{Tickets: 1, Coupons: 1, Customers: 1, OldestTicket: &ticketEnd, OldestCoupon: &couponAt, OldestCustomer: &restricted,
			InvoicesPastPeriod: 1}
		if d2 := cmp.Diff(want, d); err != nil || d2 != "" {
			t.Errorf("RetentionDue (%v; -want +got):\n%s", err, d2)
		}
	},
	"EraseExpiredTickets": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 4).Coupons
		for i, id := range []string{"t-b", "t-a", "t-c"} { // ended 3, 3 and 2 days ago
			start := fxAt.Add(-72 * time.Hour)
			if id == "t-c" {
				start = fxAt.Add(-48 * time.Hour)
			}
			f.ticket(c[i], id, start, func(tk *ticketing.Ticket) {
				tk.IdentificationMedium, tk.TariffSettings = json.RawMessage(medium), json.RawMessage(`{"z":1}`)
			})
		}
		f.ticket(c[3], "t-valid", fxAt, func(tk *ticketing.Ticket) { tk.IdentificationMedium = json.RawMessage(medium) })
		// Batches in (valid_until, id) order, with the cursor.
		var cur retention.TicketCursor
		var ids []string
		for {
			var n int
			f.write(func(q store.Q) (err error) { n, cur, err = q.EraseExpiredTickets(f.ctx, fxAt, cur, 2); return err })
			if n == 0 {
				break
			}
			ids = append(ids, cur.ID)
		}
		if !cmp.Equal(ids, []string{"t-b", "t-c"}) {
			t.Errorf("batch cursors %v, want t-b (after t-a), t-c", ids)
		}
		wantErased(t, f, map[string]bool{"t-a": true, "t-b": true, "t-c": true, "t-valid": false})
	},
	"EraseTicketData": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		tk := f.ticket(c[0], "t-1", fxAt, func(tk *ticketing.Ticket) { tk.IdentificationMedium = json.RawMessage(medium) })
		f.ticket(c[1], "t-2", fxAt, func(tk *ticketing.Ticket) { tk.IdentificationMedium = json.RawMessage(medium) })
		f.write(func(q store.Q) error { return q.EraseTicketData(f.ctx, []ticketing.Ticket{tk}) }) // valid or not: on request
		wantErased(t, f, map[string]bool{"t-1": true, "t-2": false})
	},
	"EraseExpiredCouponSettings": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		retentionWorld(f)
		var n int64
		f.write(func(q store.Q) (err error) {
			n, err = q.EraseExpiredCouponSettings(f.ctx, fxAt.Add(-24*time.Hour), 10)
			return err
		})
		if n != 1 {
			t.Errorf("EraseExpiredCouponSettings = %d, want the one due", n)
		}
		for id, erased := range map[string]bool{"old-c0": true, "old-c1": false, "new-c0": false, "sub-coupon": false} {
			c, err := f.read().Coupon(f.ctx, id)
			if err != nil || (c.TariffSettings == nil) != erased {
				t.Errorf("coupon %s settings %s (%v), erased want %v", id, c.TariffSettings, err, erased)
			}
		}
	},
	"EraseCouponSettings": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		f.write(func(q store.Q) error {
			for _, cc := range c {
				if err := q.SetCouponTariffSettings(f.ctx, cc.ID, json.RawMessage(`{"z":1}`)); err != nil {
					return err
				}
			}
			if err := q.EraseCouponSettings(f.ctx, c[0].ID, fxAt); err != nil {
				return err
			}
			return q.EraseCouponSettings(f.ctx, c[0].ID, fxAt.Add(time.Hour)) // the first request's time stays
		})
		got, err := f.read().Coupon(f.ctx, c[0].ID)
		erased, _, err2 := f.read().ErasedAt(f.ctx, "coupon", c[0].ID)
		if err != nil || err2 != nil || got.TariffSettings != nil || erased == nil || !erased.Equal(fxAt) {
			t.Errorf("coupon after EraseCouponSettings: %+v erased %v (%v, %v)", got, erased, err, err2)
		}
		if other, err := f.read().Coupon(f.ctx, c[1].ID); err != nil || other.TariffSettings == nil {
			t.Errorf("another coupon erased: %+v, %v", other, err)
		}
	},
	"MarkSubscriptionErased": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.subscription(fxAccount, account.Live, "sub-1", fxAt, 0)
		f.write(func(q store.Q) error {
			if err := q.MarkSubscriptionErased(f.ctx, "sub-1", fxAt); err != nil {
				return err
			}
			return q.MarkSubscriptionErased(f.ctx, "sub-1", fxAt.Add(time.Hour))
		})
		if erased, restricted, err := f.read().ErasedAt(f.ctx, "subscription", "sub-1"); err != nil || erased == nil || !erased.Equal(fxAt) || restricted != nil {
			t.Errorf("ErasedAt after MarkSubscriptionErased = %v, %v, %v; want the first request's time", erased, restricted, err)
		}
	},
	"ErasedAt": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		f.subscription(fxAccount, account.Live, "sub-1", fxAt, 0)
		f.customer(fxAccount, account.Live, "cust-1", fxAt)
		for _, q := range [][2]string{{"coupon", c.ID}, {"subscription", "sub-1"}, {"customer", "cust-1"}} {
			if e, r, err := f.read().ErasedAt(f.ctx, q[0], q[1]); err != nil || e != nil || r != nil {
				t.Errorf("ErasedAt(%s) of a record not erased = %v, %v, %v", q[0], e, r, err)
			}
		}
		until := fxAt.Add(24 * time.Hour)
		f.write(func(q store.Q) error { return q.RestrictCustomer(f.ctx, "cust-1", fxAt, until) })
		if e, r, err := f.read().ErasedAt(f.ctx, "customer", "cust-1"); err != nil || e == nil || !e.Equal(fxAt) || r == nil || !r.Equal(until) {
			t.Errorf("ErasedAt(customer) = %v, %v, %v", e, r, err)
		}
		if _, _, err := f.read().ErasedAt(f.ctx, "coupon", "coupon-x"); err == nil {
			t.Error("ErasedAt of an unknown coupon answered")
		}
	},
	"RestrictCustomer": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		cust := f.customer(fxAccount, account.Live, "cust-1", fxAt)
		until := fxAt.Add(24 * time.Hour)
		f.write(func(q store.Q) error { return q.RestrictCustomer(f.ctx, cust.ID, fxAt, until) })
		cust.ErasedAt, cust.RestrictedUntil = &fxAt, &until // its data kept for the duty
		if got, err := f.read().Customer(f.ctx, fxAccount, account.Live, cust.ID); err != nil || !cmp.Equal(got, cust) {
			t.Errorf("customer after RestrictCustomer = %+v, %v; want %+v", got, err, cust)
		}
	},
	"EraseCustomer": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		cust := invoicing.Customer{ID: "cust-1", AccountID: fxAccount, Environment: account.Live, AddressLines: []string{"Erika"},
			Electronic: &invoicing.Electronic{ElectronicAddress: "e@example.com"}, CreatedAt: fxAt}
		f.write(func(q store.Q) error {
			if err := q.InsertCustomer(f.ctx, cust); err != nil {
				return err
			}
			if err := q.RestrictCustomer(f.ctx, cust.ID, fxAt, fxAt.Add(time.Hour)); err != nil {
				return err
			}
			return q.EraseCustomer(f.ctx, cust.ID, fxAt.Add(time.Minute))
		})
		cust.AddressLines, cust.Electronic, cust.ErasedAt = []string{retention.ErasedName}, nil, &fxAt // the first erasure's time, no restriction
		if got, err := f.read().Customer(f.ctx, fxAccount, account.Live, cust.ID); err != nil || !cmp.Equal(got, cust) {
			t.Errorf("customer after EraseCustomer (%v): %s", err, cmp.Diff(cust, got))
		}
	},
	"EraseRestrictedCustomers": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		retentionWorld(f)
		var n int64
		f.write(func(q store.Q) (err error) { n, err = q.EraseRestrictedCustomers(f.ctx, fxAt, 10); return err })
		if n != 1 {
			t.Errorf("EraseRestrictedCustomers = %d, want the one whose restriction ended", n)
		}
		for id, erased := range map[string]bool{"cust-ended": true, "cust-restricted": false} {
			c, err := f.read().Customer(f.ctx, fxAccount, account.Live, id)
			if isErased := cmp.Equal(c.AddressLines, []string{retention.ErasedName}) && c.RestrictedUntil == nil; err != nil || isErased != erased {
				t.Errorf("customer %s = %+v (%v), erased want %v", id, c, err, erased)
			}
		}
	},
	"BillingRecordsOf": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		sub := f.subscription(fxAccount, account.Live, "sub-1", fxAt, 0)
		cust := f.customer(fxAccount, account.Live, "cust-1", fxAt).ID
		byCoupon := f.item(fxAccount, account.Live, "item-c", fxAt, func(b *ticketing.BillableItem) { b.CouponID = &c.ID })
		bySub := f.item(fxAccount, account.Live, "item-s", fxAt.Add(time.Minute), func(b *ticketing.BillableItem) { b.SubscriptionID = &sub.ID })
		inv := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt.Add(time.Hour), nil)
		custInv := f.invoice(fxAccount, account.Live, "inv-2", "R-2", fxAt.Add(2*time.Hour), &cust)
		assign(f, map[string]invoicing.Assignment{bySub.ID: {CustomerID: &cust}})
		f.write(func(q store.Q) error { return q.ClaimItem(f.ctx, byCoupon.ID, "", inv.ID) })
		ref := func(typ, id string, at time.Time) retention.RecordRef {
			return retention.RecordRef{Type: typ, ID: id, At: at}
		}
		for _, q := range []struct {
			kind, id string
			want     []retention.RecordRef
		}{
			{"coupon", c.ID, []retention.RecordRef{ref("billable_item", byCoupon.ID, fxAt), ref("invoice", inv.ID, inv.CreatedAt)}},
			{"subscription", sub.ID, []retention.RecordRef{ref("billable_item", bySub.ID, bySub.OrderedAt)}},
			{"customer", cust, []retention.RecordRef{ref("billable_item", bySub.ID, bySub.OrderedAt), ref("invoice", custInv.ID, custInv.CreatedAt)}},
		} {
			got, err := f.read().BillingRecordsOf(f.ctx, q.kind, q.id)
			if d := cmp.Diff(q.want, got); err != nil || d != "" {
				t.Errorf("BillingRecordsOf(%s) (%v; -want +got):\n%s", q.kind, err, d)
			}
		}
	},
	"CouponsOfSubscription": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sub := f.subscription(fxAccount, account.Live, "sub-1", fxAt, 0)
		f.order(fxAccount, account.Live, "order-1", fxAt, 0)
		f.order(fxAccount, account.Live, "order-2", fxAt, 1)
		var want []ticketing.Coupon
		f.write(func(q store.Q) error {
			for i, id := range []string{"c-restored", "c-first"} {
				c := ticketing.Coupon{ID: id, OrderID: "order-1", Position: i, AccountID: fxAccount, Environment: account.Live, ProductID: fxProduct,
					SubscriptionID: &sub.ID, CreatedAt: fxAt.Add(time.Duration(1-i) * time.Hour)}
				want = append([]ticketing.Coupon{c}, want...)
				if err := q.InsertCoupon(f.ctx, c); err != nil {
					return err
				}
			}
			return nil
		})
		if got, err := f.read().CouponsOfSubscription(f.ctx, sub.ID); err != nil || !cmp.Equal(got, want) {
			t.Errorf("CouponsOfSubscription = %+v, %v; want c-first, c-restored", got, err)
		}
	},
	"OldestEvent": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if _, _, _, ok, err := f.read().OldestEvent(f.ctx, fxAccount, account.Live); ok || err != nil {
			t.Errorf("OldestEvent of an empty stream: %v, %v", ok, err)
		}
		evs := writeEvents(f, fxAccount, account.Live, 3, fxAt)
		writeEvents(f, fxAccount, account.Test, 1, fxAt.Add(-time.Hour))
		first, _, _ := f.read().EventSeq(f.ctx, fxAccount, account.Live, evs[0].ID)
		seq, at, obj, ok, err := f.read().OldestEvent(f.ctx, fxAccount, account.Live)
		if err != nil || !ok || seq != first || !at.Equal(evs[0].CreatedAt) || obj != string(evs[0].Object) {
			t.Errorf("OldestEvent = %d, %v, %s, %v, %v; want %s's", seq, at, obj, ok, err, evs[0].ID)
		}
	},
	"EventsOfObjects": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		evs := writeEvents(f, fxAccount, account.Live, 3, fxAt) // objects order-0, order-1, order-2
		writeEvents(f, fxAccount, account.Test, 1, fxAt)        // order-0 in test
		want := map[int64]string{}
		for _, e := range evs[:2] {
			seq, _, _ := f.read().EventSeq(f.ctx, fxAccount, account.Live, e.ID)
			want[seq] = string(e.Object)
		}
		if got, err := f.read().EventsOfObjects(f.ctx, fxAccount, account.Live, []string{"order-0", "order-1", "order-x"}); err != nil || !cmp.Equal(got, want) {
			t.Errorf("EventsOfObjects = %v, %v; want %v", got, err, want)
		}
		if got, err := f.read().EventsOfObjects(f.ctx, fxAccount, account.Live, nil); err != nil || len(got) != 0 {
			t.Errorf("EventsOfObjects(none) = %v, %v", got, err)
		}
	},
	"SetEventObject": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		evs := writeEvents(f, fxAccount, account.Live, 2, fxAt)
		seq, _, _ := f.read().EventSeq(f.ctx, fxAccount, account.Live, evs[0].ID)
		f.write(func(q store.Q) error {
			return q.SetEventObject(f.ctx, fxAccount, account.Live, seq, `{"n":"redacted"}`)
		})
		for i, want := range []string{`{"n":"redacted"}`, string(evs[1].Object)} {
			if e, ok, err := f.read().Event(f.ctx, fxAccount, account.Live, evs[i].ID); err != nil || !ok || string(e.Object) != want {
				t.Errorf("event %s object %s (%v), want %s", evs[i].ID, e.Object, err, want)
			}
		}
	},
	"ClaimRetentionRun": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		for _, c := range []struct {
			at   time.Time
			want bool
		}{{fxAt, true}, {fxAt.Add(time.Hour), false}, {fxAt.Add(24 * time.Hour), true}} { // once a day
			var ok bool
			f.write(func(q store.Q) (err error) { ok, err = q.ClaimRetentionRun(f.ctx, c.at, 24*time.Hour); return err })
			if ok != c.want {
				t.Errorf("ClaimRetentionRun at %v = %v, want %v", c.at, ok, c.want)
			}
		}
	},
	"FinishRetentionRun": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error { return q.FinishRetentionRun(f.ctx, fxAt) })
		var fin sql.NullTime
		if err := s.ReaderDB().QueryRowContext(f.ctx, `SELECT finished_at FROM retention_state WHERE id = 1`).Scan(&fin); err != nil ||
			!fin.Valid || !fin.Time.Equal(fxAt) {
			t.Errorf("finished_at after FinishRetentionRun = %v, %v", fin, err)
		}
	},
}

// retentionWorld writes what the retention run looks at, at fxAt with a
// cutoff a day before: ticket t-old ended three days ago (due), t-new
// valid; coupon old-c0 of order old (three days ago, settings, its ticket
// ended: due), old-c1 (its ticket t-new valid), new-c0 (recent),
// sub-coupon (of a running subscription); customer cust-ended (restricted
// until an hour ago: due), cust-restricted (until tomorrow); invoice
// inv-old (issued before the billing cutoff).
func retentionWorld(f *fixture) {
	f.t.Helper()
	old := fxAt.Add(-72 * time.Hour)
	oc := f.order(fxAccount, account.Live, "old", old, 2).Coupons
	nc := f.order(fxAccount, account.Live, "new", fxAt, 1).Coupons
	sub := f.subscription(fxAccount, account.Live, "sub-1", old, 0)
	f.write(func(q store.Q) error {
		sc := ticketing.Coupon{ID: "sub-coupon", OrderID: "old", Position: 2, AccountID: fxAccount, Environment: account.Live, ProductID: fxProduct,
			SubscriptionID: &sub.ID, CreatedAt: old}
		if err := q.InsertCoupon(f.ctx, sc); err != nil {
			return err
		}
		for _, id := range []string{oc[0].ID, oc[1].ID, nc[0].ID, sc.ID} {
			if err := q.SetCouponTariffSettings(f.ctx, id, json.RawMessage(`{"z":1}`)); err != nil {
				return err
			}
		}
		return nil
	})
	f.ticket(oc[0], "t-old", old, func(tk *ticketing.Ticket) { tk.IdentificationMedium = json.RawMessage(medium) })
	f.ticket(oc[1], "t-new", fxAt, func(tk *ticketing.Ticket) { tk.IdentificationMedium = json.RawMessage(medium) })
	for id, until := range map[string]time.Time{"cust-ended": fxAt.Add(-time.Hour), "cust-restricted": fxAt.Add(24 * time.Hour)} {
		f.customer(fxAccount, account.Live, id, old)
		f.write(func(q store.Q) error { return q.RestrictCustomer(f.ctx, id, old, until) })
	}
	f.invoice(fxAccount, account.Live, "inv-old", "R-1", old, nil)
	f.invoice(fxAccount, account.Live, "inv-new", "R-2", fxAt.Add(2*time.Hour), nil)
}

// wantErased fails unless the tickets named are erased (neutral medium,
// no tariff settings) or not, as given.
func wantErased(t *testing.T, f *fixture, tickets map[string]bool) {
	t.Helper()
	for id, erased := range tickets {
		tk, err := f.read().Ticket(f.ctx, id)
		isErased := tk.MediumHash == store.ErasedMediumHash && string(tk.IdentificationMedium) == erasedMedium && tk.TariffSettings == nil
		if err != nil || isErased != erased {
			t.Errorf("ticket %s: medium %s hash %s settings %s (%v); erased want %v", id, tk.IdentificationMedium, tk.MediumHash, tk.TariffSettings, err, erased)
		}
	}
}
