package app_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
)

// TestRestore: restoring activated coupons links old and new both ways,
// invalidates the old tickets at the clock's time, and the new coupon
// activates with an empty request into the original validity; billable
// items are untouched and bad requests change nothing.
func TestRestore(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		single, month := b.product(t, singleBerlin), b.product(t, monthly)
		o := b.order(t, b.live, single.ID, month.ID, single.ID)
		singleTk := b.activate(t, o.Coupons[0].ID, activation(""))
		monthTk := b.activate(t, o.Coupons[1].ID, activation(berlinTariff))
		oldSub := b.subscription(t, b.live, *o.Coupons[1].SubscriptionID)
		before := b.counts(t)

		restore := func(secret string, ids ...string) ([]string, error) {
			_, created, err := b.app.Restore(b.ctx, b.live, o.ID, app.RestoreRequest{RestoreSecret: secret, CouponIDs: ids})
			var out []string
			for _, c := range created {
				out = append(out, c.ID)
			}
			return out, err
		}
		_, err := restore("farebox-restore-secret-wrong", o.Coupons[0].ID)
		wantErr(t, err, apperr.NotFound, "order_not_found")
		_, err = restore(o.RestoreSecret)
		wantFields(t, wantErr(t, err, apperr.Unprocessable, "invalid_coupon_ids"), "/coupon_ids")
		_, err = restore(o.RestoreSecret, o.Coupons[0].ID, "farebox-coupon-nope", o.Coupons[2].ID, o.Coupons[0].ID)
		wantFields(t, wantErr(t, err, apperr.Unprocessable, "invalid_coupon_ids"), "/coupon_ids/1", "/coupon_ids/2", "/coupon_ids/3")
		if after := b.counts(t); after["coupons"] != before["coupons"] || after["subscriptions"] != before["subscriptions"] {
			t.Fatalf("rejected restores wrote %v (before %v)", after, before)
		}

		b.clock.Advance(time.Hour)
		restoredAt := b.clock.Now()
		ids, err := restore(o.RestoreSecret, o.Coupons[0].ID, o.Coupons[1].ID)
		if err != nil || len(ids) != 2 {
			t.Fatalf("restore: %v %v", ids, err)
		}
		got, err := b.app.Order(b.ctx, b.live, o.ID)
		if err != nil || len(got.Coupons) != 5 {
			t.Fatalf("order after restore: %d coupons, %v", len(got.Coupons), err)
		}
		for i, id := range ids {
			old, err := b.app.Coupon(b.ctx, o.Coupons[i].ID)
			if err != nil {
				t.Fatal(err)
			}
			nc, err := b.app.Coupon(b.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if deref(old.Coupon.RestoredCouponID) != id || deref(nc.Coupon.OriginalCouponID) != old.Coupon.ID || nc.Coupon.Activated ||
				nc.Coupon.ProductID != old.Coupon.ProductID || deref(nc.Coupon.BillableItemID) != deref(old.Coupon.BillableItemID) ||
				!nc.Coupon.CreatedAt.Equal(restoredAt) {
				t.Errorf("coupon %d: old %+v new %+v", i, old.Coupon, nc.Coupon)
			}
		}
		for _, id := range []string{singleTk.ID, monthTk.ID} {
			if d := b.ticket(t, id); d.Valid || !deref(d.Ticket.InvalidatedAt).Equal(restoredAt) {
				t.Errorf("old ticket %s: valid %v, invalidated %v", id, d.Valid, d.Ticket.InvalidatedAt)
			}
		}
		// The new subscription copies the cycles; the old one points to it.
		newCoupon, _ := b.app.Coupon(b.ctx, ids[1])
		newSub := b.subscription(t, b.live, *newCoupon.Coupon.SubscriptionID)
		if deref(newSub.OriginalSubscriptionID) != oldSub.ID || len(newSub.Cycles) != len(oldSub.Cycles) ||
			deref(b.subscription(t, b.live, oldSub.ID).RestoredSubscriptionID) != newSub.ID {
			t.Errorf("subscriptions: old %+v new %+v", oldSub, newSub)
		}

		// An empty activation issues the original validity and identification.
		for i, old := range []struct{ from, until time.Time }{{singleTk.ValidFrom, singleTk.ValidUntil}, {monthTk.ValidFrom, monthTk.ValidUntil}} {
			tk := b.activate(t, ids[i], app.ActivationRequest{Version: 9})
			if !tk.ValidFrom.Equal(old.from) || !tk.ValidUntil.Equal(old.until) || string(tk.IdentificationMedium) != maxMedium ||
				tk.InvalidatedAt != nil || !b.ticket(t, tk.ID).Valid {
				t.Errorf("restored ticket %d: %+v", i, tk)
			}
			if i == 1 && (tk.ReactivationKey == nil || tk.CycleID == "" || tk.CycleID == monthTk.CycleID) {
				t.Errorf("restored monthly ticket: key %v cycle %q (old cycle %q)", tk.ReactivationKey, tk.CycleID, monthTk.CycleID)
			}
		}
		_, err = b.app.ActivateCoupon(b.ctx, o.Coupons[0].ID, activation(""))
		wantErr(t, err, apperr.Unprocessable, "coupon_restored")
		_, err = restore(o.RestoreSecret, o.Coupons[0].ID)
		wantFields(t, wantErr(t, err, apperr.Unprocessable, "invalid_coupon_ids"), "/coupon_ids/0")
		if after := b.counts(t); after["billable_items"] != before["billable_items"] {
			t.Errorf("restore changed billable items: %d → %d", before["billable_items"], after["billable_items"])
		}
	})
}
