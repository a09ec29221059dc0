package app_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
)

// listCase is a bad list request and the parameter its 400 must name.
type listCase[R any] struct {
	req   R
	field string
}

// checkBadLists fails unless every case is a 400 invalid_parameter naming
// its field.
func checkBadLists[R, T any](t *testing.T, list func(R) (app.ListJSON[T], error), cases []listCase[R]) {
	t.Helper()
	for _, c := range cases {
		_, err := list(c.req)
		wantFields(t, wantErr(t, err, apperr.Invalid, "invalid_parameter"), c.field)
	}
}

// byNewest orders ids as every list does when they were created at the
// same instant: the id descending breaks the tie.
func byNewest(ids []string) []string {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(b, a) })
	return out
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// walk pages through a list with limit 4 both ways: forwards with
// starting_after to the end, then back with ending_before from the last
// page to the first, and checks both give want (newest first).
func walk[T any](t *testing.T, name string, want []string, id func(T) string,
	list func(after, before string) app.ListJSON[T]) {
	t.Helper()
	var pages [][]string
	after := ""
	for {
		l := list(after, "")
		var ids []string
		for _, v := range l.Data {
			ids = append(ids, id(v))
		}
		pages = append(pages, ids)
		if !l.HasMore {
			break
		}
		after = ids[len(ids)-1]
	}
	if got := slices.Concat(pages...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s forwards: %v, want %v", name, got, want)
	}
	for i := len(pages) - 1; i > 0; i-- {
		l := list("", pages[i][0])
		var ids []string
		for _, v := range l.Data {
			ids = append(ids, id(v))
		}
		if fmt.Sprint(ids) != fmt.Sprint(pages[i-1]) || l.HasMore != (i > 1) {
			t.Errorf("%s back from page %d: %v has_more %v, want %v", name, i, ids, l.HasMore, pages[i-1])
		}
	}
}

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
			o, err := b.app.PlaceOrder(b.ctx, p, req)
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
		all := append(byNewest(late), byNewest(early)...)
		list := func(req app.OrdersRequest) app.ListJSON[app.OrderJSON] {
			t.Helper()
			l, err := b.app.Orders(b.ctx, p, req)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		id := func(o app.OrderJSON) string { return o.OrderID }
		walk(t, "all", all, id, func(after, before string) app.ListJSON[app.OrderJSON] {
			return list(app.OrdersRequest{ListRequest: app.ListRequest{Limit: "4", StartingAfter: after, EndingBefore: before}})
		})
		// refd: orders 0 and 5 (early), 10 (late).
		wantRef := append(byNewest(refd[2:]), byNewest(refd[:2])...)
		walk(t, "reference", wantRef, id, func(after, before string) app.ListJSON[app.OrderJSON] {
			return list(app.OrdersRequest{ListRequest: app.ListRequest{Limit: "1", StartingAfter: after, EndingBefore: before},
				OptionalOrderReference: &ref})
		})
		later := b.clock.Now().Format(time.RFC3339)
		walk(t, "created[lt]", byNewest(early), id, func(after, before string) app.ListJSON[app.OrderJSON] {
			return list(app.OrdersRequest{ListRequest: app.ListRequest{Limit: "4", StartingAfter: after, EndingBefore: before, CreatedLT: later}})
		})
		walk(t, "created[gte]", byNewest(late), id, func(after, before string) app.ListJSON[app.OrderJSON] {
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
			if listed, got := asJSON(t, o), asJSON(t, want); listed != got || o.RestoreSecret == "" || len(o.Coupons) != 1 {
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
		checkBadLists(t, func(r app.OrdersRequest) (app.ListJSON[app.OrderJSON], error) { return b.app.Orders(b.ctx, p, r) },
			[]listCase[app.OrdersRequest]{
				{page(app.ListRequest{StartingAfter: liveOrder.ID}), "starting_after"},
				{page(app.ListRequest{EndingBefore: otherOrder.ID}), "ending_before"},
				{page(app.ListRequest{StartingAfter: "farebox-order-nope"}), "starting_after"},
				{page(app.ListRequest{StartingAfter: all[0], EndingBefore: all[1]}), "ending_before"},
				{page(app.ListRequest{Limit: "0"}), "limit"},
				{page(app.ListRequest{Limit: "101"}), "limit"},
				{page(app.ListRequest{Limit: "1.5"}), "limit"},
				{page(app.ListRequest{CreatedGTE: "yesterday"}), "created[gte]"},
				{page(app.ListRequest{CreatedLT: "2026-06-15"}), "created[lt]"},
			})
	})
}
