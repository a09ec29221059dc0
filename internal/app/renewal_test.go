package app_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/config"
	"github.com/farebox/farebox/internal/subscription"
)

// TestRenewalBeforeTheMonthTurns: once the next cycle is ordered, its ticket
// can be obtained from 00:00 Berlin seven days before the cycle starts, and
// the ticket is valid from 00:00 on the 1st, not from the reactivation; one
// second before the window the refusal is the one the SDKs know and the
// coupon is not reactivatable. Month turns: the 31st → 1st, December →
// January, and the DST months (the window spans the change).
func TestRenewalBeforeTheMonthTurns(t *testing.T) {
	for _, c := range []struct {
		name      string
		activated time.Time // first activation, in the month before the cycle
		cycle     time.Time // 00:00 Berlin on the 1st of the ordered cycle
		opens     time.Time // 00:00 Berlin seven days before
	}{
		{"31 May → 1 June", berlin(2026, 5, 12, 9, 0, 0), berlin(2026, 6, 1, 0, 0, 0), berlin(2026, 5, 25, 0, 0, 0)},
		{"December → January", berlin(2026, 12, 3, 9, 0, 0), berlin(2027, 1, 1, 0, 0, 0), berlin(2026, 12, 25, 0, 0, 0)},
		{"31 March → 1 April, summer time from 28 March", berlin(2027, 3, 2, 9, 0, 0), berlin(2027, 4, 1, 0, 0, 0), berlin(2027, 3, 25, 0, 0, 0)},
		{"31 October → 1 November, winter time from 25 October", berlin(2026, 10, 2, 9, 0, 0), berlin(2026, 11, 1, 0, 0, 0), berlin(2026, 10, 25, 0, 0, 0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			eachEngine(t, func(t *testing.T, b *testBundle) {
				b.clock.Set(c.activated)
				cp, subID, first := b.monthlyActivated(t)
				if err := b.app.Reorder(b.ctx, b.live, subID, ""); err != nil {
					t.Fatal(err)
				}
				key := app.ActivationRequest{ReactivationKey: *first.ReactivationKey, Version: 9}

				b.clock.Set(c.opens.Add(-time.Second))
				before := b.counts(t)
				_, err := b.app.ActivateCoupon(b.ctx, cp.ID, key)
				e := wantErr(t, err, apperr.Unprocessable, subscription.CodeNotOrdered)
				if e.Msg != subscription.MsgNotOrdered {
					t.Errorf("message %q; the iOS SDK matches %q exactly", e.Msg, subscription.MsgNotOrdered)
				}
				wantFields(t, e, subscription.FieldReactivationKey)
				if after := b.counts(t); after["tickets"] != before["tickets"] || after["subscription_cycles"] != before["subscription_cycles"] {
					t.Errorf("a refused reactivation changed rows: %v → %v", before, after)
				}
				if d, err := b.app.Coupon(b.ctx, cp.ID); err != nil || d.Subscription.View.CouponReactivatable {
					t.Errorf("coupon_reactivatable a second before the window: %+v %v", d.Subscription, err)
				}

				b.clock.Set(c.opens)
				if d, err := b.app.Coupon(b.ctx, cp.ID); err != nil || !d.Subscription.View.CouponReactivatable {
					t.Errorf("coupon_reactivatable false when the window opens: %v", err)
				}
				next := b.activate(t, cp.ID, key)
				wantUntil := c.cycle.In(clock.Berlin).AddDate(0, 1, 0).Add(-time.Second)
				if !next.ValidFrom.Equal(c.cycle) || !next.ValidUntil.Equal(wantUntil) || !next.CreatedAt.Equal(c.opens) ||
					next.ValidFrom.Sub(first.ValidUntil) != time.Second {
					t.Errorf("ticket issued %v valid %v – %v; want %v – %v, one second after the first ticket (until %v)",
						next.CreatedAt, next.ValidFrom, next.ValidUntil, c.cycle, wantUntil, first.ValidUntil)
				}
				// The first ticket ends at 23:59:59 on the last day, the new one
				// starts at 00:00:00: nothing to fetch at midnight.
				if l := first.ValidUntil.In(clock.Berlin); l.Hour() != 23 || l.Minute() != 59 || l.Second() != 59 || l.AddDate(0, 0, 1).Day() != 1 {
					t.Errorf("first ticket ends %v, not the month's last second", l)
				}
				// The next reactivation (the cycle after) waits for its order and window.
				_, err = b.app.ActivateCoupon(b.ctx, cp.ID, app.ActivationRequest{ReactivationKey: *next.ReactivationKey, Version: 9})
				wantErr(t, err, apperr.Unprocessable, subscription.CodeNotOrdered)
			})
		})
	}
}

// TestRenewalOfACancelledSubscription: the last, ordered cycle of a
// cancelled subscription is obtained in its window like any other; no cycle
// is generated beyond the end and no later ticket is issued.
func TestRenewalOfACancelledSubscription(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		b.clock.Set(berlin(2027, 1, 2, 9, 0, 0))
		cp, subID, jan := b.monthlyActivated(t)
		if err := b.app.Reorder(b.ctx, b.live, subID, ""); err != nil {
			t.Fatal(err)
		}
		b.clock.Set(berlin(2027, 1, 5, 12, 0, 0)) // by the 10th: January's end, but February is ordered
		if ok, err := b.app.CancelSubscription(b.ctx, b.live, subID); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if s := b.subscription(t, b.live, subID); !deref(s.EndsAt).Equal(berlin(2027, 2, 28, 23, 59, 59)) || len(s.Cycles) != 2 {
			t.Fatalf("cancelled: ends %v, cycles %+v", deref(s.EndsAt), s.Cycles)
		}
		key := app.ActivationRequest{ReactivationKey: *jan.ReactivationKey, Version: 9}
		b.clock.Set(berlin(2027, 1, 24, 23, 59, 59))
		_, err := b.app.ActivateCoupon(b.ctx, cp.ID, key)
		wantErr(t, err, apperr.Unprocessable, subscription.CodeNotOrdered)

		b.clock.Set(berlin(2027, 1, 25, 0, 0, 0))
		feb := b.activate(t, cp.ID, key)
		if !feb.ValidFrom.Equal(berlin(2027, 2, 1, 0, 0, 0)) || !feb.ValidUntil.Equal(berlin(2027, 2, 28, 23, 59, 59)) {
			t.Errorf("February ticket %v – %v", feb.ValidFrom, feb.ValidUntil)
		}
		if s := b.subscription(t, b.live, subID); len(s.Cycles) != 2 {
			t.Errorf("a cycle beyond the end: %+v", s.Cycles)
		}
		// March would open on 22 February: nothing is left.
		b.clock.Set(berlin(2027, 2, 22, 0, 0, 0))
		_, err = b.app.ActivateCoupon(b.ctx, cp.ID, app.ActivationRequest{ReactivationKey: *feb.ReactivationKey, Version: 9})
		wantErr(t, err, apperr.Unprocessable, subscription.CodeEnded)
		if d, err := b.app.Coupon(b.ctx, cp.ID); err != nil || d.Subscription.View.CouponReactivatable || !d.Subscription.View.Active {
			t.Errorf("late February: %+v %v", d.Subscription.View, err)
		}
		if n := b.count(t, "tickets"); n != 2 {
			t.Errorf("%d tickets, want 2", n)
		}
	})
}

// TestRenewalLeadConfigured: the lead comes from the options; NoRenewalLead
// issues a cycle's ticket only from its first instant.
func TestRenewalLeadConfigured(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		d := config.Defaults()
		for _, lead := range []int{2, app.NoRenewalLead} {
			a := app.New(app.Options{Store: b.store, Clock: b.clock, IDPrefix: "farebox", RenewalLeadDays: lead,
				Invoicing: app.InvoicingOptions{Seller: d.Seller, BaseURL: "http://farebox.test", PaymentDays: d.PaymentDays}})
			if err := a.LoadCatalog(b.ctx); err != nil {
				t.Fatal(err)
			}
			b.clock.Set(berlin(2026, 8, 10, 9, 0, 0))
			cp, subID, first := b.monthlyActivated(t)
			if err := b.app.Reorder(b.ctx, b.live, subID, ""); err != nil {
				t.Fatal(err)
			}
			opens := berlin(2026, 8, 30, 0, 0, 0)
			if lead == app.NoRenewalLead {
				opens = berlin(2026, 9, 1, 0, 0, 0)
			}
			key := app.ActivationRequest{ReactivationKey: *first.ReactivationKey, Version: 9}
			b.clock.Set(opens.Add(-time.Second))
			_, err := a.ActivateCoupon(b.ctx, cp.ID, key)
			wantErr(t, err, apperr.Unprocessable, subscription.CodeNotOrdered)
			b.clock.Set(opens)
			act, err := a.ActivateCoupon(b.ctx, cp.ID, key)
			if err != nil {
				t.Fatalf("lead %d at %v: %v", lead, opens, err)
			}
			if tk := b.ticket(t, act.TicketID).Ticket; !tk.ValidFrom.Equal(berlin(2026, 9, 1, 0, 0, 0)) {
				t.Errorf("lead %d: ticket from %v", lead, tk.ValidFrom)
			}
		}
	})
}
