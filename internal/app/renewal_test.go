package app_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/subscription"
)

// TestRenewalRightAfterTheReorder: once the next cycle is ordered, its
// ticket can be obtained at once, weeks before the cycle starts (the
// interface's state table has no time condition; issue 28 removed the
// renewal window of --renewal-lead-days), and the ticket is valid from 00:00
// Berlin on the 1st, not from the reactivation, issued at the real time.
// Month turns: the 31st → 1st, December → January, and the DST months.
func TestRenewalRightAfterTheReorder(t *testing.T) {
	for _, c := range []struct {
		name      string
		activated time.Time // first activation, in the month before the cycle
		cycle     time.Time // 00:00 Berlin on the 1st of the ordered cycle
	}{
		{"31 May → 1 June", berlin(2026, 5, 12, 9, 0, 0), berlin(2026, 6, 1, 0, 0, 0)},
		{"December → January", berlin(2026, 12, 3, 9, 0, 0), berlin(2027, 1, 1, 0, 0, 0)},
		{"31 March → 1 April, summer time from 28 March", berlin(2027, 3, 2, 9, 0, 0), berlin(2027, 4, 1, 0, 0, 0)},
		{"31 October → 1 November, winter time from 25 October", berlin(2026, 10, 2, 9, 0, 0), berlin(2026, 11, 1, 0, 0, 0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			eachEngine(t, func(t *testing.T, b *testBundle) {
				b.clock.Set(c.activated)
				cp, subID, first := b.monthlyActivated(t)
				key := app.ActivationRequest{ReactivationKey: *first.ReactivationKey, Version: 9}
				if d, err := b.app.Coupon(b.ctx, cp.ID); err != nil || d.Subscription.View.CouponReactivatable {
					t.Errorf("coupon_reactivatable before the reorder: %v", err)
				}
				_, err := b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, cp.ID, key)
				if e := wantErr(t, err, apperr.Unprocessable, subscription.CodeNotOrdered); e.Msg != subscription.MsgNotOrdered || len(e.Details) != 0 {
					t.Errorf("before the reorder: %q %+v; the iOS SDK matches %q exactly", e.Msg, e.Details, subscription.MsgNotOrdered)
				}

				b.clock.Set(c.activated.Add(time.Minute))
				if err := b.app.Reorder(b.ctx, idempotency.Claim{}, b.live, subID, ""); err != nil {
					t.Fatal(err)
				}
				if d, err := b.app.Coupon(b.ctx, cp.ID); err != nil || !d.Subscription.View.CouponReactivatable {
					t.Errorf("coupon_reactivatable false right after the reorder: %v", err)
				}
				now := c.activated.Add(2 * time.Minute)
				b.clock.Set(now)
				next := b.activate(t, cp.ID, key)
				wantUntil := c.cycle.In(clock.Berlin).AddDate(0, 1, 0).Add(-time.Second)
				if !next.ValidFrom.Equal(c.cycle) || !next.ValidUntil.Equal(wantUntil) || !next.CreatedAt.Equal(now) ||
					next.ValidFrom.Sub(first.ValidUntil) != time.Second {
					t.Errorf("ticket issued %v valid %v – %v; want %v – %v issued %v, one second after the first ticket (until %v)",
						next.CreatedAt, next.ValidFrom, next.ValidUntil, c.cycle, wantUntil, now, first.ValidUntil)
				}
				// The first ticket ends at 23:59:59 on the last day, the new one
				// starts at 00:00:00: nothing to fetch at midnight.
				if l := first.ValidUntil.In(clock.Berlin); l.Hour() != 23 || l.Minute() != 59 || l.Second() != 59 || l.AddDate(0, 0, 1).Day() != 1 {
					t.Errorf("first ticket ends %v, not the month's last second", l)
				}
				// The cycle after is not ordered: exactly the SDKs' message.
				_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, cp.ID, app.ActivationRequest{ReactivationKey: *next.ReactivationKey, Version: 9})
				if e := wantErr(t, err, apperr.Unprocessable, subscription.CodeNotOrdered); e.Msg != subscription.MsgNotOrdered {
					t.Errorf("message %q", e.Msg)
				}
			})
		})
	}
}

// TestRenewalOfACancelledSubscription: the last, ordered cycle of a
// cancelled subscription is obtained at once like any other; no cycle is
// generated beyond the end and no later ticket is issued.
func TestRenewalOfACancelledSubscription(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		b.clock.Set(berlin(2027, 1, 2, 9, 0, 0))
		cp, subID, jan := b.monthlyActivated(t)
		if err := b.app.Reorder(b.ctx, idempotency.Claim{}, b.live, subID, ""); err != nil {
			t.Fatal(err)
		}
		b.clock.Set(berlin(2027, 1, 5, 12, 0, 0)) // by the 10th: January's end, but February is ordered
		if ok, err := b.app.CancelSubscription(b.ctx, idempotency.Claim{}, b.live, subID); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if s := b.subscription(t, b.live, subID); !deref(s.EndsAt).Equal(berlin(2027, 2, 28, 23, 59, 59)) || len(s.Cycles) != 2 {
			t.Fatalf("cancelled: ends %v, cycles %+v", deref(s.EndsAt), s.Cycles)
		}
		key := app.ActivationRequest{ReactivationKey: *jan.ReactivationKey, Version: 9}
		feb := b.activate(t, cp.ID, key)
		if !feb.ValidFrom.Equal(berlin(2027, 2, 1, 0, 0, 0)) || !feb.ValidUntil.Equal(berlin(2027, 2, 28, 23, 59, 59)) ||
			!feb.CreatedAt.Equal(berlin(2027, 1, 5, 12, 0, 0)) {
			t.Errorf("February ticket %v – %v issued %v", feb.ValidFrom, feb.ValidUntil, feb.CreatedAt)
		}
		if s := b.subscription(t, b.live, subID); len(s.Cycles) != 2 {
			t.Errorf("a cycle beyond the end: %+v", s.Cycles)
		}
		b.clock.Set(berlin(2027, 2, 22, 0, 0, 0))
		_, err := b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, cp.ID, app.ActivationRequest{ReactivationKey: *feb.ReactivationKey, Version: 9})
		wantErr(t, err, apperr.Unprocessable, subscription.CodeEnded)
		if d, err := b.app.Coupon(b.ctx, cp.ID); err != nil || d.Subscription.View.CouponReactivatable || !d.Subscription.View.Active {
			t.Errorf("late February: %+v %v", d.Subscription.View, err)
		}
		if n := b.count(t, "tickets"); n != 2 {
			t.Errorf("%d tickets, want 2", n)
		}
	})
}
