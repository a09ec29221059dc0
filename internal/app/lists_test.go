package app_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/ticketing"
)

// TestOrderList: GET /v9/ticketing/orders.json pages the caller's orders
// newest first (the id breaks ties of one instant) in both directions,
// filters by reference and created range, shows each order as its GET
// does, sees no other account's or environment's orders and takes none of
// their ids as a cursor; bad parameters are a 400 naming the parameter.
func TestOrderList(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		p := b.test
		single := b.product(t, singleBerlin).ID
		ref := "partner-ref-7"
		var early, late, refd []string
		for i := range 11 {
			if i == 6 {
				b.clock.Advance(time.Hour)
			}
			req := app.OrderRequest{ProductIDs: []string{single}}
			if i%5 == 0 {
				req.OptionalOrderReference = &ref
			}
			o, err := b.app.PlaceOrder(b.ctx, idempotency.Claim{}, p, req)
			if err != nil {
				t.Fatal(err)
			}
			if i < 6 {
				early = append(early, o.ID)
			} else {
				late = append(late, o.ID)
			}
			if i%5 == 0 {
				refd = append(refd, o.ID)
			}
		}
		all := append(testtool.ByNewest(late), testtool.ByNewest(early)...)
		call := func(req app.OrdersRequest) (app.ListJSON[app.OrderJSON], error) { return b.app.Orders(b.ctx, p, req) }
		list := testtool.MustList(t, call)
		id := func(o app.OrderJSON) string { return o.OrderID }
		testtool.WalkList(t, "all", all, id, func(after, before string) app.ListJSON[app.OrderJSON] {
			return list(app.OrdersRequest{ListRequest: app.ListRequest{Limit: "4", StartingAfter: after, EndingBefore: before}})
		})
		// refd: orders 0 and 5 (early), 10 (late).
		wantRef := append(testtool.ByNewest(refd[2:]), testtool.ByNewest(refd[:2])...)
		testtool.WalkList(t, "reference", wantRef, id, func(after, before string) app.ListJSON[app.OrderJSON] {
			return list(app.OrdersRequest{ListRequest: app.ListRequest{Limit: "1", StartingAfter: after, EndingBefore: before},
				OptionalOrderReference: &ref})
		})
		later := b.clock.Now().Format(time.RFC3339)
		testtool.WalkList(t, "created[lt]", testtool.ByNewest(early), id, func(after, before string) app.ListJSON[app.OrderJSON] {
			return list(app.OrdersRequest{ListRequest: app.ListRequest{Limit: "4", StartingAfter: after, EndingBefore: before, CreatedLT: later}})
		})
		testtool.WalkList(t, "created[gte]", testtool.ByNewest(late), id, func(after, before string) app.ListJSON[app.OrderJSON] {
			return list(app.OrdersRequest{ListRequest: app.ListRequest{Limit: "4", StartingAfter: after, EndingBefore: before, CreatedGTE: later}})
		})
		if l := list(app.OrdersRequest{ListRequest: app.ListRequest{Limit: "100"}}); len(l.Data) != 11 || l.HasMore {
			t.Errorf("limit 100: %d orders, has_more %v", len(l.Data), l.HasMore)
		}
		if l := list(app.OrdersRequest{}); len(l.Data) != 10 || !l.HasMore {
			t.Errorf("default limit: %d orders, has_more %v", len(l.Data), l.HasMore)
		}
		none := "no-such-ref"
		if l := list(app.OrdersRequest{OptionalOrderReference: &none}); len(l.Data) != 0 || l.HasMore || l.Data == nil {
			t.Errorf("unknown reference: %+v", l)
		}
		// Each order as GET shows it.
		for _, o := range list(app.OrdersRequest{ListRequest: app.ListRequest{Limit: "100"}}).Data {
			got, err := b.app.Order(b.ctx, p, o.OrderID)
			if err != nil {
				t.Fatal(err)
			}
			want, err := b.app.OrderResponse(b.ctx, got, 9, true)
			if err != nil {
				t.Fatal(err)
			}
			if listed, got := testtool.JSON(t, o), testtool.JSON(t, want); listed != got || o.RestoreSecret == "" || len(o.Coupons) != 1 {
				t.Errorf("listed %s, GET %s", listed, got)
			}
		}

		// The live environment and another account see none of these,
		// and their ids are no cursor here.
		liveOrder := b.order(t, b.live, single)
		other, _ := b.newAccount(t, "Other AG", account.Test)
		otherOrder := b.order(t, other, single)
		for _, c := range []struct {
			p    account.Principal
			want string
		}{{b.live, liveOrder.ID}, {other, otherOrder.ID}} {
			l, err := b.app.Orders(b.ctx, c.p, app.OrdersRequest{})
			if err != nil || len(l.Data) != 1 || l.Data[0].OrderID != c.want || l.HasMore {
				t.Errorf("%s: %+v %v, want only %s", c.p.AccountID, l, err, c.want)
			}
		}
		page := func(r app.ListRequest) app.OrdersRequest { return app.OrdersRequest{ListRequest: r} }
		testtool.CheckBadLists(t, call,
			[]testtool.ListCase[app.OrdersRequest]{
				{Req: page(app.ListRequest{StartingAfter: liveOrder.ID}), Field: "starting_after"},
				{Req: page(app.ListRequest{EndingBefore: otherOrder.ID}), Field: "ending_before"},
				{Req: page(app.ListRequest{StartingAfter: "farebox-order-nope"}), Field: "starting_after"},
				{Req: page(app.ListRequest{StartingAfter: all[0], EndingBefore: all[1]}), Field: "ending_before"},
				{Req: page(app.ListRequest{Limit: "0"}), Field: "limit"},
				{Req: page(app.ListRequest{Limit: "101"}), Field: "limit"},
				{Req: page(app.ListRequest{Limit: "1.5"}), Field: "limit"},
				{Req: page(app.ListRequest{CreatedGTE: "yesterday"}), Field: "created[gte]"},
				{Req: page(app.ListRequest{CreatedLT: "2026-06-15"}), Field: "created[lt]"},
			})
	})
}

// TestSubscriptionList: GET /v9/ticketing/subscriptions.json pages the
// caller's subscriptions newest first in both directions, filters by state
// at the current time (active, cancelled, ended, restored) and by ends_at,
// shows each as its GET does, keeps accounts and environments apart and
// refuses bad parameters (an order id is no subscription cursor).
func TestSubscriptionList(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		p := b.test
		var orders []ticketing.Order
		var subs []string
		for range 4 {
			o := b.order(t, p, b.product(t, monthly).ID)
			b.activate(t, o.Coupons[0].ID, activation(berlinTariff))
			orders, subs = append(orders, o), append(subs, *o.Coupons[0].SubscriptionID)
		}
		b.clock.Advance(time.Minute)
		o4 := orders[3]
		_, restored, err := b.app.Restore(b.ctx, idempotency.Claim{}, p, o4.ID, app.RestoreRequest{RestoreSecret: o4.RestoreSecret, CouponIDs: []string{o4.Coupons[0].ID}})
		if err != nil || len(restored) != 1 || restored[0].SubscriptionID == nil {
			t.Fatalf("restore: %v %+v", err, restored)
		}
		replacement := *restored[0].SubscriptionID
		b.clock.Set(berlin(2026, 7, 5, 9, 0, 0))
		if ok, err := b.app.CancelSubscription(b.ctx, idempotency.Claim{}, p, subs[0]); err != nil || !ok {
			t.Fatal(ok, err)
		}
		aug := berlin(2026, 8, 1, 0, 0, 0)
		b.clock.Set(aug)
		if ok, err := b.app.CancelSubscription(b.ctx, idempotency.Claim{}, p, subs[1]); err != nil || !ok {
			t.Fatal(ok, err)
		}
		call := func(req app.SubscriptionsRequest) (app.ListJSON[app.SubscriptionJSON], error) {
			return b.app.Subscriptions(b.ctx, p, req)
		}
		list := testtool.MustList(t, call)
		id := func(s app.SubscriptionJSON) string { return s.ID }
		all := append([]string{replacement}, testtool.ByNewest(subs)...)
		testtool.WalkList(t, "all", all, id, func(after, before string) app.ListJSON[app.SubscriptionJSON] {
			return list(app.SubscriptionsRequest{ListRequest: app.ListRequest{Limit: "2", StartingAfter: after, EndingBefore: before}})
		})
		for state, want := range map[string][]string{
			"active":    append([]string{replacement}, subs[2]),
			"cancelled": {subs[1]},
			"ended":     {subs[0]},
			"restored":  {subs[3]},
		} {
			testtool.WalkList(t, state, want, id, func(after, before string) app.ListJSON[app.SubscriptionJSON] {
				return list(app.SubscriptionsRequest{State: state, ListRequest: app.ListRequest{Limit: "1", StartingAfter: after, EndingBefore: before}})
			})
		}
		if l := list(app.SubscriptionsRequest{EndsGTE: aug.Format(time.RFC3339)}); len(l.Data) != 1 || l.Data[0].ID != subs[1] {
			t.Errorf("ends_at[gte]: %+v", l.Data)
		}
		if l := list(app.SubscriptionsRequest{EndsLT: aug.Format(time.RFC3339), State: "ended"}); len(l.Data) != 1 || l.Data[0].ID != subs[0] {
			t.Errorf("ends_at[lt] and ended: %+v", l.Data)
		}
		if l := list(app.SubscriptionsRequest{EndsLT: aug.Format(time.RFC3339), State: "cancelled"}); len(l.Data) != 0 || l.HasMore {
			t.Errorf("ends_at[lt] and cancelled: %+v", l.Data)
		}
		for _, s := range list(app.SubscriptionsRequest{ListRequest: app.ListRequest{Limit: "100"}}).Data {
			d, err := b.app.SubscriptionDetails(b.ctx, p, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if listed, got := testtool.JSON(t, s), testtool.JSON(t, app.SubscriptionResponse(d)); listed != got {
				t.Errorf("listed %s, GET %s", listed, got)
			}
		}

		liveOrder := b.order(t, b.live, b.product(t, monthly).ID)
		liveSub := *liveOrder.Coupons[0].SubscriptionID
		other, _ := b.newAccount(t, "Other AG", account.Test)
		otherSub := *b.order(t, other, b.product(t, monthly).ID).Coupons[0].SubscriptionID
		for _, c := range []struct {
			p    account.Principal
			want string
		}{{b.live, liveSub}, {other, otherSub}} {
			l, err := b.app.Subscriptions(b.ctx, c.p, app.SubscriptionsRequest{})
			if err != nil || len(l.Data) != 1 || l.Data[0].ID != c.want || l.HasMore {
				t.Errorf("%s: %+v %v, want only %s", c.p.AccountID, l, err, c.want)
			}
		}
		page := func(r app.ListRequest) app.SubscriptionsRequest { return app.SubscriptionsRequest{ListRequest: r} }
		testtool.CheckBadLists(t, call, []testtool.ListCase[app.SubscriptionsRequest]{
			{Req: page(app.ListRequest{StartingAfter: liveSub}), Field: "starting_after"},
			{Req: page(app.ListRequest{EndingBefore: otherSub}), Field: "ending_before"},
			{Req: page(app.ListRequest{StartingAfter: orders[0].ID}), Field: "starting_after"},
			{Req: page(app.ListRequest{Limit: "101"}), Field: "limit"},
			{Req: app.SubscriptionsRequest{State: "paused"}, Field: "state"},
			{Req: app.SubscriptionsRequest{State: "Active"}, Field: "state"},
			{Req: app.SubscriptionsRequest{EndsGTE: "2026-08"}, Field: "ends_at[gte]"},
			{Req: app.SubscriptionsRequest{EndsLT: "soon"}, Field: "ends_at[lt]"},
		})
	})
}

// TestCouponList: GET /v9/ticketing/coupons.json pages the caller's
// coupons newest first (coupons of one order tie on time: the id decides)
// in both directions, filters by state, shows each as its GET does, keeps
// accounts and environments apart and refuses bad parameters.
func TestCouponList(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		p := b.test
		single := b.product(t, singleBerlin).ID
		first := b.order(t, p, single, single, single)
		b.clock.Advance(time.Minute)
		second := b.order(t, p, single, single)
		var early, late []string
		for _, c := range first.Coupons {
			early = append(early, c.ID)
		}
		for _, c := range second.Coupons {
			late = append(late, c.ID)
		}
		b.activate(t, early[0], activation(""))
		b.activate(t, early[1], activation(""))
		b.clock.Advance(time.Minute)
		_, restored, err := b.app.Restore(b.ctx, idempotency.Claim{}, p, first.ID, app.RestoreRequest{RestoreSecret: first.RestoreSecret, CouponIDs: []string{early[1]}})
		if err != nil || len(restored) != 1 {
			t.Fatalf("restore: %v %+v", err, restored)
		}
		call := func(req app.CouponsRequest) (app.ListJSON[app.CouponJSON], error) {
			return b.app.Coupons(b.ctx, p, req)
		}
		list := testtool.MustList(t, call)
		id := func(c app.CouponJSON) string { return c.ID }
		all := slices.Concat([]string{restored[0].ID}, testtool.ByNewest(late), testtool.ByNewest(early))
		testtool.WalkList(t, "all", all, id, func(after, before string) app.ListJSON[app.CouponJSON] {
			return list(app.CouponsRequest{ListRequest: app.ListRequest{Limit: "2", StartingAfter: after, EndingBefore: before}})
		})
		for state, want := range map[string][]string{
			"not_activated": slices.Concat([]string{restored[0].ID}, testtool.ByNewest(late), []string{early[2]}),
			"activated":     {early[0]},
			"restored":      {early[1]},
		} {
			testtool.WalkList(t, state, want, id, func(after, before string) app.ListJSON[app.CouponJSON] {
				return list(app.CouponsRequest{State: state, ListRequest: app.ListRequest{Limit: "2", StartingAfter: after, EndingBefore: before}})
			})
		}
		for _, c := range list(app.CouponsRequest{ListRequest: app.ListRequest{Limit: "100"}}).Data {
			d, err := b.app.Coupon(b.ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if listed, got := testtool.JSON(t, c), testtool.JSON(t, app.CouponResponse(d, 9, &p)); listed != got {
				t.Errorf("listed %s, GET %s", listed, got)
			}
		}

		liveCoupon := b.order(t, b.live, single).Coupons[0].ID
		other, _ := b.newAccount(t, "Other AG", account.Test)
		otherCoupon := b.order(t, other, single).Coupons[0].ID
		for _, c := range []struct {
			p    account.Principal
			want string
		}{{b.live, liveCoupon}, {other, otherCoupon}} {
			l, err := b.app.Coupons(b.ctx, c.p, app.CouponsRequest{})
			if err != nil || len(l.Data) != 1 || l.Data[0].ID != c.want || l.HasMore {
				t.Errorf("%s: %+v %v, want only %s", c.p.AccountID, l, err, c.want)
			}
		}
		page := func(r app.ListRequest) app.CouponsRequest { return app.CouponsRequest{ListRequest: r} }
		testtool.CheckBadLists(t, call,
			[]testtool.ListCase[app.CouponsRequest]{
				{Req: page(app.ListRequest{StartingAfter: liveCoupon}), Field: "starting_after"},
				{Req: page(app.ListRequest{EndingBefore: otherCoupon}), Field: "ending_before"},
				{Req: page(app.ListRequest{StartingAfter: first.ID}), Field: "starting_after"},
				{Req: page(app.ListRequest{Limit: "-1"}), Field: "limit"},
				{Req: page(app.ListRequest{CreatedGTE: "now"}), Field: "created[gte]"},
				{Req: app.CouponsRequest{State: "expired"}, Field: "state"},
			})
	})
}

// TestTicketList: GET /v9/ticketing/tickets.json pages the caller's
// tickets newest first in both directions, filters by state (a restore
// invalidates the restored coupon's ticket), keeps accounts and
// environments apart and refuses bad parameters.
func TestTicketList(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		p := b.test
		single := b.product(t, singleBerlin).ID
		o := b.order(t, p, single, single, single)
		var tickets []string
		for i, c := range o.Coupons {
			if i == 2 {
				b.clock.Advance(time.Minute)
			}
			tickets = append(tickets, b.activate(t, c.ID, activation("")).ID)
		}
		b.clock.Advance(time.Minute)
		if _, _, err := b.app.Restore(b.ctx, idempotency.Claim{}, p, o.ID, app.RestoreRequest{RestoreSecret: o.RestoreSecret, CouponIDs: []string{o.Coupons[0].ID}}); err != nil {
			t.Fatal(err)
		}
		if b.ticket(t, tickets[0]).Valid {
			t.Fatal("the restored coupon's ticket is still valid")
		}
		call := func(req app.TicketsRequest) (app.ListJSON[app.TicketDetails], error) {
			return b.app.Tickets(b.ctx, p, req)
		}
		list := testtool.MustList(t, call)
		id := func(d app.TicketDetails) string { return d.Ticket.ID }
		all := append([]string{tickets[2]}, testtool.ByNewest(tickets[:2])...)
		testtool.WalkList(t, "all", all, id, func(after, before string) app.ListJSON[app.TicketDetails] {
			return list(app.TicketsRequest{ListRequest: app.ListRequest{Limit: "1", StartingAfter: after, EndingBefore: before}})
		})
		for state, want := range map[string][]string{"valid": {tickets[2], tickets[1]}, "invalidated": {tickets[0]}} {
			testtool.WalkList(t, state, want, id, func(after, before string) app.ListJSON[app.TicketDetails] {
				return list(app.TicketsRequest{State: state, ListRequest: app.ListRequest{Limit: "1", StartingAfter: after, EndingBefore: before}})
			})
		}
		for _, d := range list(app.TicketsRequest{}).Data {
			if got := b.ticket(t, d.Ticket.ID); testtool.JSON(t, got) != testtool.JSON(t, d) {
				t.Errorf("listed %s, GET %s", testtool.JSON(t, d), testtool.JSON(t, got))
			}
		}

		liveCoupon := b.order(t, b.live, single).Coupons[0].ID
		liveTicket := b.activate(t, liveCoupon, activation("")).ID
		other, _ := b.newAccount(t, "Other AG", account.Test)
		for _, c := range []struct {
			p    account.Principal
			want []string
		}{{b.live, []string{liveTicket}}, {other, nil}} {
			l, err := b.app.Tickets(b.ctx, c.p, app.TicketsRequest{})
			var got []string
			for _, d := range l.Data {
				got = append(got, d.Ticket.ID)
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) || l.HasMore {
				t.Errorf("%s: %v %v, want %v", c.p.AccountID, got, err, c.want)
			}
		}
		page := func(r app.ListRequest) app.TicketsRequest { return app.TicketsRequest{ListRequest: r} }
		testtool.CheckBadLists(t, call,
			[]testtool.ListCase[app.TicketsRequest]{
				{Req: page(app.ListRequest{StartingAfter: liveTicket}), Field: "starting_after"},
				{Req: page(app.ListRequest{EndingBefore: o.Coupons[1].ID}), Field: "ending_before"},
				{Req: page(app.ListRequest{Limit: "1e2"}), Field: "limit"},
				{Req: page(app.ListRequest{CreatedLT: "2026-06-15T25:00:00Z"}), Field: "created[lt]"},
				{Req: app.TicketsRequest{State: "expired"}, Field: "state"},
			})
	})
}
