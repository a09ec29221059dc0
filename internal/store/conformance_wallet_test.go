package store_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/wallet"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceWallet(t *testing.T) { walletConformance.run(t) }

// walletConformance: applewallet.go (the Apple Wallet web service's passes,
// device registrations and update tags).
var walletConformance = conformanceCases{
	"EnsureApplePass": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		first := wallet.ApplePassRecord{SerialNumber: "sn-1", CouponID: c.ID, AuthToken: "tok-1"}
		for i, rec := range []wallet.ApplePassRecord{first, {SerialNumber: "sn-1", CouponID: c.ID, AuthToken: "tok-2"}} {
			var got wallet.ApplePassRecord
			f.write(func(q store.Q) (err error) {
				got, err = q.EnsureApplePass(f.ctx, rec, fxAt.Add(time.Duration(i)*time.Hour))
				return err
			})
			want := first // the first token wins
			want.UpdatedAt = fxAt
			if !cmp.Equal(got, want) {
				t.Errorf("EnsureApplePass #%d = %+v, want %+v", i+1, got, want)
			}
		}
	},
	"ApplePass": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		applePass(f, "sn-1", c.ID)
		want := wallet.ApplePassRecord{SerialNumber: "sn-1", CouponID: c.ID, AuthToken: "tok-sn-1", UpdatedAt: fxAt}
		if got, ok, err := f.read().ApplePass(f.ctx, "sn-1"); err != nil || !ok || !cmp.Equal(got, want) {
			t.Errorf("ApplePass = %+v, %v, %v; want %+v", got, ok, err, want)
		}
		if _, ok, err := f.read().ApplePass(f.ctx, "sn-x"); ok || err != nil {
			t.Errorf("ApplePass of an unknown serial = %v, %v", ok, err)
		}
	},
	"RegisterAppleDevice": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		applePass(f, "sn-1", c.ID)
		for i, want := range []bool{true, false} { // a known registration gets the new token
			var created bool
			f.write(func(q store.Q) (err error) {
				created, err = q.RegisterAppleDevice(f.ctx, "dev-1", "sn-1", []string{"push-1", "push-2"}[i], fxAt)
				return err
			})
			if created != want {
				t.Errorf("RegisterAppleDevice #%d = %v, want %v", i+1, created, want)
			}
		}
		tokens := markUpdated(f, "t-1")
		if !cmp.Equal(tokens, map[string][]string{"t-1": {"push-2"}}) {
			t.Errorf("push tokens after re-registering = %v, want the new one", tokens)
		}
	},
	"UnregisterAppleDevice": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		applePass(f, "sn-1", c.ID)
		register(f, "dev-1", "sn-1", "push-1")
		register(f, "dev-2", "sn-1", "push-2")
		for i, want := range []bool{true, false} {
			var removed bool
			f.write(func(q store.Q) (err error) {
				removed, err = q.UnregisterAppleDevice(f.ctx, "dev-1", "sn-1")
				return err
			})
			if removed != want {
				t.Errorf("UnregisterAppleDevice #%d = %v, want %v", i+1, removed, want)
			}
		}
		if got, err := f.read().AppleDevicePasses(f.ctx, "dev-2"); err != nil || len(got) != 1 {
			t.Errorf("another device's registration: %v, %v", got, err)
		}
	},
	"ApplePassLastTag": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if tag, err := f.read().ApplePassLastTag(f.ctx); err != nil || tag != 0 {
			t.Errorf("ApplePassLastTag before any update = %d, %v", tag, err)
		}
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		applePass(f, "sn-1", c.ID)
		markUpdated(f, "t-1")
		markUpdated(f, "t-1")
		if tag, err := f.read().ApplePassLastTag(f.ctx); err != nil || tag != 2 {
			t.Errorf("ApplePassLastTag after two updates = %d, %v", tag, err)
		}
	},
	"AppleDevicePasses": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		twoDevices(f)
		markUpdated(f, "t-1") // sn-1 gets tag 1
		if got, err := f.read().AppleDevicePasses(f.ctx, "dev-1"); err != nil || !cmp.Equal(got, map[string]int64{"sn-1": 1, "sn-2": 0}) {
			t.Errorf("AppleDevicePasses(dev-1) = %v, %v", got, err)
		}
		if got, err := f.read().AppleDevicePasses(f.ctx, "dev-x"); err != nil || len(got) != 0 {
			t.Errorf("AppleDevicePasses of an unknown device = %v, %v", got, err)
		}
	},
	"MarkTicketsApplePassesUpdated": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		cs := f.order(fxAccount, account.Live, "order-1", fxAt, 3).Coupons
		applePass(f, "sn-1", cs[0].ID)
		applePass(f, "sn-1b", cs[0].ID) // a second pass of the same coupon
		applePass(f, "sn-2", cs[1].ID)
		register(f, "dev-1", "sn-1", "push-b")
		register(f, "dev-2", "sn-1b", "push-a")
		register(f, "dev-3", "sn-1b", "push-b")
		f.ticket(cs[2], "t-3", fxAt, nil) // no pass follows its coupon
		var tokens map[string][]string
		at := fxAt.Add(time.Hour)
		f.write(func(q store.Q) (err error) {
			tokens, err = q.MarkTicketsApplePassesUpdated(f.ctx, []string{"t-1", "t-3", "t-x"}, at)
			return err
		})
		if !cmp.Equal(tokens, map[string][]string{"t-1": {"push-a", "push-b"}}) {
			t.Errorf("MarkTicketsApplePassesUpdated = %v; want t-1's distinct tokens, sorted", tokens)
		}
		for sn, tag := range map[string]int64{"sn-1": 1, "sn-1b": 1, "sn-2": 0} {
			p, _, err := f.read().ApplePass(f.ctx, sn)
			if err != nil || p.UpdateSeq != tag || (tag > 0) != p.UpdatedAt.Equal(at) {
				t.Errorf("pass %s after the update = %+v, %v; want tag %d", sn, p, err, tag)
			}
		}
		f.write(func(q store.Q) error {
			for _, ids := range [][]string{nil, {"t-3"}} { // nothing follows: nothing written
				if got, err := q.MarkTicketsApplePassesUpdated(f.ctx, ids, at); got != nil || err != nil {
					t.Errorf("MarkTicketsApplePassesUpdated(%v) = %v, %v", ids, got, err)
				}
			}
			return nil
		})
		if tag, err := f.read().ApplePassLastTag(f.ctx); err != nil || tag != 1 {
			t.Errorf("last tag = %d, %v; want 1", tag, err)
		}
	},
	"DeleteApplePushToken": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		twoDevices(f)
		var n int64
		f.write(func(q store.Q) (err error) { n, err = q.DeleteApplePushToken(f.ctx, "push-1"); return err })
		if n != 2 {
			t.Errorf("DeleteApplePushToken = %d, want 2", n)
		}
		for dev, want := range map[string]int{"dev-1": 0, "dev-2": 1} {
			if got, err := f.read().AppleDevicePasses(f.ctx, dev); err != nil || len(got) != want {
				t.Errorf("passes of %s = %v, %v; want %d", dev, got, err, want)
			}
		}
	},
	"CountApplePasses": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		cs := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		applePass(f, "sn-1", cs[0].ID)
		applePass(f, "sn-1b", cs[0].ID)
		f.ticket(cs[1], "t-2", fxAt, nil)
		for id, want := range map[string]int{"t-1": 2, "t-2": 0, "t-x": 0} {
			if n, err := f.read().CountApplePasses(f.ctx, id); err != nil || n != want {
				t.Errorf("CountApplePasses(%s) = %d, %v; want %d", id, n, err, want)
			}
		}
	},
}

// applePass records pass serial of coupon (with token tok-<serial>) at
// fxAt, and the coupon's ticket t-<n> (coupon …-c<n-1>) when it has none.
func applePass(f *fixture, serial, coupon string) {
	f.t.Helper()
	f.write(func(q store.Q) error {
		_, err := q.EnsureApplePass(f.ctx, wallet.ApplePassRecord{SerialNumber: serial, CouponID: coupon, AuthToken: "tok-" + serial}, fxAt)
		return err
	})
	c, err := f.read().Coupon(f.ctx, coupon)
	if err != nil {
		f.t.Fatal(err)
	}
	if ts, _ := f.read().TicketsOfCoupon(f.ctx, coupon); len(ts) == 0 {
		f.ticket(c, "t-"+string(rune('1'+c.Position)), fxAt, nil)
	}
}

// twoDevices writes passes sn-1 and sn-2 (of tickets t-1 and t-2), dev-1
// registered for both with push-1, dev-2 for sn-2 with push-2.
func twoDevices(f *fixture) {
	f.t.Helper()
	cs := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
	applePass(f, "sn-1", cs[0].ID)
	applePass(f, "sn-2", cs[1].ID)
	for _, r := range [][3]string{{"dev-1", "sn-1", "push-1"}, {"dev-1", "sn-2", "push-1"}, {"dev-2", "sn-2", "push-2"}} {
		register(f, r[0], r[1], r[2])
	}
}

// register registers device for pass serial with pushToken.
func register(f *fixture, device, serial, pushToken string) {
	f.t.Helper()
	f.write(func(q store.Q) error {
		_, err := q.RegisterAppleDevice(f.ctx, device, serial, pushToken, fxAt)
		return err
	})
}

// markUpdated gives the passes following ticket id's coupon a new update
// tag and returns the push tokens to notify.
func markUpdated(f *fixture, ticket string) map[string][]string {
	f.t.Helper()
	var tokens map[string][]string
	f.write(func(q store.Q) (err error) {
		tokens, err = q.MarkTicketsApplePassesUpdated(f.ctx, []string{ticket}, fxAt)
		return err
	})
	return tokens
}
