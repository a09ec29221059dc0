package app_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/subscription"
	"github.com/farebox/farebox/internal/ticketing"
)

// monthlyActivated orders the monthly product at the clock's time,
// activates it now and returns the coupon, the subscription id and the
// first ticket.
func (b *testBundle) monthlyActivated(t *testing.T) (ticketing.Coupon, string, ticketing.Ticket) {
	t.Helper()
	c := b.order(t, b.live, b.product(t, monthly).ID).Coupons[0]
	tk := b.activate(t, c.ID, activation(berlinTariff))
	return c, *c.SubscriptionID, tk
}

// TestMonthlyActivationReorderReactivation drives the monthly product
// through June and July 2026 with the clock: the first activation fixes
// the calendar month (in Berlin), a reorder bills the next cycle, a
// reactivation issues its ticket once.
func TestMonthlyActivationReorderReactivation(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		month := b.product(t, monthly)
		c, subID, june := b.monthlyActivated(t)
		if !june.ValidFrom.Equal(berlin(2026, 6, 1, 0, 0, 0)) || !june.ValidUntil.Equal(berlin(2026, 6, 30, 23, 59, 59)) ||
			june.ReactivationKey == nil || june.UsedReactivationKey != nil || string(june.TariffSettings) != berlinTariff {
			t.Fatalf("June ticket %+v", june)
		}
		s := b.subscription(t, b.live, subID)
		if len(s.Cycles) != 2 || s.Cycles[0].ID != june.CycleID || !s.Cycles[0].CouponActivated || deref(s.Cycles[0].TicketID) != june.ID ||
			s.Cycles[1].Ordered || !s.Cycles[1].ValidFrom.Equal(berlin(2026, 7, 1, 0, 0, 0)) || !s.Cycles[1].ValidUntil.Equal(berlin(2026, 7, 31, 23, 59, 59)) {
			t.Fatalf("cycles after activation %+v", s.Cycles)
		}
		d, err := b.app.SubscriptionDetails(b.ctx, b.live, subID)
		if err != nil || !d.View.Active || d.View.CouponReactivatable || !d.View.Reorderable || d.View.NextUnordered == nil ||
			d.View.NextUnordered.ID != s.Cycles[1].ID {
			t.Fatalf("view after activation %+v %v", d.View, err)
		}

		// Reactivating before the next cycle is ordered.
		_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c.ID, app.ActivationRequest{ReactivationKey: *june.ReactivationKey, Version: 9})
		wantErr(t, err, apperr.Unprocessable, subscription.CodeNotOrdered)

		// The reorder bills July and appends August, unordered.
		b.clock.Set(berlin(2026, 6, 20, 9, 0, 0))
		items := b.count(t, "billable_items")
		if err := b.app.Reorder(b.ctx, idempotency.Claim{}, b.live, subID, ""); err != nil {
			t.Fatal(err)
		}
		s = b.subscription(t, b.live, subID)
		july := s.Cycles[1]
		if len(s.Cycles) != 3 || !july.Ordered || july.BillableItemID == nil || s.Cycles[2].Ordered ||
			!s.Cycles[2].ValidFrom.Equal(berlin(2026, 8, 1, 0, 0, 0)) || b.count(t, "billable_items") != items+1 {
			t.Fatalf("after reorder %+v", s.Cycles)
		}
		it, err := b.inv.BillableItem(b.ctx, b.live, *july.BillableItemID)
		if err != nil || it.AmountCents != month.PriceInCents || deref(it.CycleID) != july.ID || deref(it.SubscriptionID) != subID ||
			it.CouponID != nil || !it.OrderedAt.Equal(b.clock.Now()) {
			t.Errorf("July item %+v %v", it, err)
		}
		err = b.app.Reorder(b.ctx, idempotency.Claim{}, b.live, subID, july.ID)
		wantErr(t, err, apperr.Unprocessable, subscription.CodeAlreadyOrdered)
		err = b.app.Reorder(b.ctx, idempotency.Claim{}, b.live, subID, "farebox-cycle-nope")
		wantFields(t, wantErr(t, err, apperr.Unprocessable, subscription.CodeCycleNotFound), subscription.FieldCycleID)
		other, _ := b.newAccount(t, "Other AG", b.live.Environment)
		err = b.app.Reorder(b.ctx, idempotency.Claim{}, other, subID, "")
		wantErr(t, err, apperr.NotFound, "subscription_not_found")

		// Reactivation (still in June) issues July's ticket with a new key;
		// v9 repeats answer the same ticket, v8 repeats a 409.
		act, err := b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c.ID, app.ActivationRequest{ReactivationKey: *june.ReactivationKey, Version: 9})
		if err != nil {
			t.Fatal(err)
		}
		jt := b.ticket(t, act.TicketID).Ticket
		if jt.CycleID != july.ID || !jt.ValidFrom.Equal(july.ValidFrom) || !jt.ValidUntil.Equal(july.ValidUntil) ||
			deref(jt.UsedReactivationKey) != *june.ReactivationKey || jt.ReactivationKey == nil || *jt.ReactivationKey == *june.ReactivationKey ||
			string(jt.IdentificationMedium) != string(june.IdentificationMedium) {
			t.Fatalf("July ticket %+v", jt)
		}
		again, err := b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c.ID, app.ActivationRequest{ReactivationKey: *june.ReactivationKey, Version: 9})
		if err != nil || again.TicketID != jt.ID {
			t.Errorf("v9 repeat: %+v %v", again, err)
		}
		// Before v9 a repeat with the same medium (here: none, so the old ticket's) is the same
		// request and answers the same ticket; another medium with the used key is refused.
		again, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c.ID, app.ActivationRequest{ReactivationKey: *june.ReactivationKey, Version: 8})
		if err != nil || again.TicketID != jt.ID {
			t.Errorf("v8 repeat: %+v %v", again, err)
		}
		_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c.ID, app.ActivationRequest{ReactivationKey: *june.ReactivationKey, Version: 8,
			IdentificationMedium: json.RawMessage(`{"photo_id_lite":{"first_name":"Erika","last_name":"Musterfrau","birth_date":"1985-03-07"}}`)})
		wantErr(t, err, apperr.Conflict, "reactivation_key_used")
		_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c.ID, app.ActivationRequest{ReactivationKey: "farebox-reactivation-key-nope", Version: 9})
		wantFields(t, wantErr(t, err, apperr.Unprocessable, "invalid_reactivation_key"), "/reactivation_key")

		// Across the month end, August is what a reorder without id orders;
		// July's ticket is the current one.
		b.clock.Set(berlin(2026, 8, 1, 0, 0, 30))
		if err := b.app.Reorder(b.ctx, idempotency.Claim{}, b.live, subID, ""); err != nil {
			t.Fatal(err)
		}
		s = b.subscription(t, b.live, subID)
		if len(s.Cycles) != 4 || !s.Cycles[2].Ordered || s.Cycles[3].Ordered || !s.Cycles[3].ValidFrom.Equal(berlin(2026, 9, 1, 0, 0, 0)) {
			t.Errorf("after the August reorder %+v", s.Cycles)
		}
		if n := b.count(t, "tickets"); n != 2 {
			t.Errorf("%d tickets, want 2", n)
		}
	})
}

// TestMonthlyActivationWindow: a monthly coupon starts in the month of the
// order or the next (in Berlin), never later, and the tariff settings are
// checked against the product.
func TestMonthlyActivationWindow(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		month := b.product(t, monthly).ID
		// Ordered at 23:30 on 31 May in Berlin (still 21:30 UTC): May counts.
		b.clock.Set(berlin(2026, 5, 31, 23, 30, 0))
		o := b.order(t, b.live, month, month, month)
		_, err := b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, o.Coupons[0].ID, activation(`{"german_postal_code":"1"}`))
		wantErr(t, err, apperr.Unprocessable, "tariff_settings_invalid")
		_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, o.Coupons[0].ID, activation(""))
		wantErr(t, err, apperr.Unprocessable, "tariff_settings_invalid")

		next := activation(berlinTariff)
		next.ActivationStart = berlin(2026, 6, 30, 23, 59, 59).Format(time.RFC3339)
		if tk := b.activate(t, o.Coupons[0].ID, next); !tk.ValidFrom.Equal(berlin(2026, 6, 1, 0, 0, 0)) {
			t.Errorf("start on the last second of June: ticket from %v", tk.ValidFrom)
		}
		late := activation(berlinTariff)
		late.ActivationStart = berlin(2026, 7, 1, 0, 0, 0).Format(time.RFC3339)
		_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, o.Coupons[1].ID, late)
		wantErr(t, err, apperr.Unprocessable, "activation_expired")
		// Now, the ticket is May's: the remaining half hour of it.
		if tk := b.activate(t, o.Coupons[1].ID, activation(berlinTariff)); !tk.ValidFrom.Equal(berlin(2026, 5, 1, 0, 0, 0)) ||
			!tk.ValidUntil.Equal(berlin(2026, 5, 31, 23, 59, 59)) {
			t.Errorf("May ticket %v – %v", tk.ValidFrom, tk.ValidUntil)
		}
		// Stored tariff settings serve an activation that sends none.
		if _, err := b.app.SetTariffSettings(b.ctx, idempotency.Claim{}, o.Coupons[2].ID, json.RawMessage(berlinTariff)); err != nil {
			t.Fatal(err)
		}
		if tk := b.activate(t, o.Coupons[2].ID, activation("")); string(tk.TariffSettings) != berlinTariff {
			t.Errorf("ticket tariff settings %s", tk.TariffSettings)
		}
	})
}

// TestCancelByThe10th: a cancellation up to the 10th (Berlin) ends the
// subscription with that month, from the 11th with the next; an ordered
// cycle is never taken away; unordered cycles after the end are dropped;
// a second cancellation keeps the first end.
func TestCancelByThe10th(t *testing.T) {
	for _, c := range []struct {
		name            string
		ordered, cancel time.Time
		reorderFirst    bool
		wantEnd         time.Time
		wantCycles      int
	}{
		{name: "on the 5th, next month dropped", ordered: berlin(2026, 6, 1, 9, 0, 0), cancel: berlin(2026, 6, 5, 12, 0, 0),
			wantEnd: berlin(2026, 6, 30, 23, 59, 59), wantCycles: 1},
		{name: "last second of the 10th", ordered: berlin(2026, 6, 15, 9, 0, 0), cancel: berlin(2026, 7, 10, 23, 59, 59),
			wantEnd: berlin(2026, 7, 31, 23, 59, 59), wantCycles: 2},
		{name: "first second of the 11th", ordered: berlin(2026, 6, 15, 9, 0, 0), cancel: berlin(2026, 7, 11, 0, 0, 0),
			wantEnd: berlin(2026, 8, 31, 23, 59, 59), wantCycles: 2},
		{name: "after the 10th, across the year end", ordered: berlin(2026, 12, 15, 9, 0, 0), cancel: berlin(2026, 12, 20, 12, 0, 0),
			wantEnd: berlin(2027, 1, 31, 23, 59, 59), wantCycles: 2},
		{name: "an ordered cycle outlives the 10th", ordered: berlin(2026, 6, 1, 9, 0, 0), cancel: berlin(2026, 6, 5, 12, 0, 0),
			reorderFirst: true, wantEnd: berlin(2026, 7, 31, 23, 59, 59), wantCycles: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			eachEngine(t, func(t *testing.T, b *testBundle) {
				b.clock.Set(c.ordered)
				_, subID, _ := b.monthlyActivated(t)
				if c.reorderFirst {
					if err := b.app.Reorder(b.ctx, idempotency.Claim{}, b.live, subID, ""); err != nil {
						t.Fatal(err)
					}
				}
				b.clock.Set(c.cancel)
				if cancelled, err := b.app.CancelSubscription(b.ctx, idempotency.Claim{}, b.live, subID); err != nil || !cancelled {
					t.Fatalf("cancel: %v, cancelled %v", err, cancelled)
				}
				s := b.subscription(t, b.live, subID)
				if !deref(s.CancelRequestedAt).Equal(c.cancel) || !deref(s.EndsAt).Equal(c.wantEnd) || len(s.Cycles) != c.wantCycles {
					t.Fatalf("cancelled at %v: ends %v, %d cycles; want %v, %d", deref(s.CancelRequestedAt), deref(s.EndsAt), len(s.Cycles),
						c.wantEnd, c.wantCycles)
				}
				// Cancelling again a month later keeps the first request and end.
				b.clock.Set(c.cancel.AddDate(0, 1, 0))
				if cancelled, err := b.app.CancelSubscription(b.ctx, idempotency.Claim{}, b.live, subID); err != nil || cancelled {
					t.Fatalf("second cancel: %v, cancelled %v (a repeat changes nothing)", err, cancelled)
				}
				again := b.subscription(t, b.live, subID)
				if !deref(again.CancelRequestedAt).Equal(c.cancel) || !deref(again.EndsAt).Equal(c.wantEnd) {
					t.Errorf("second cancellation moved the end to %v", deref(again.EndsAt))
				}
				// Nothing can be ordered after the end.
				b.clock.Set(c.wantEnd.Add(time.Second))
				err := b.app.Reorder(b.ctx, idempotency.Claim{}, b.live, subID, "")
				wantErr(t, err, apperr.Unprocessable, subscription.CodeCancelled)
			})
		})
	}
}
