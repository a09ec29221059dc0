package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// Lists (docs/lists.md) share the conventions of GET /v1/events.json:
// limit 1–100 (default 10), starting_after or ending_before naming a
// record of the caller's account and environment, created[gte] and
// created[lt], newest first, and every parameter problem a 400
// invalid_parameter naming the parameter.

// ListRequest is the paging part of a list request, as sent (kit).
type ListRequest = kit.ListRequest

// listParams collects the problems of one list request's parameters.
type listParams = kit.ListParams

// ListJSON is the answer of a list: a page of objects as their GET shows
// them, newest first (kit).
type ListJSON[T any] = kit.ListJSON[T]

func listOf[T any](data []T, hasMore bool) ListJSON[T] { return kit.ListOf(data, hasMore) }

// OrdersRequest is GET /v9/ticketing/orders.json's query, as sent;
// OptionalOrderReference is nil when the parameter is absent.
type OrdersRequest struct {
	ListRequest
	OptionalOrderReference *string
}

// Orders lists the caller's orders of its environment, newest first, as
// GET …/orders/{id}.json shows them (with the restore secret).
func (a *App) Orders(ctx context.Context, p account.Principal, req OrdersRequest) (ListJSON[OrderJSON], error) {
	var l listParams
	f := ticketing.OrderFilter{OptionalOrderReference: req.OptionalOrderReference}
	return runList(ctx, a, p, "app.Orders", "orders", "order", req.ListRequest, &l, &f.Query,
		func(q store.Q) (list.Page[ticketing.Order], error) { return q.Orders(ctx, f) },
		func(o ticketing.Order) (OrderJSON, error) { return a.OrderResponse(ctx, o, eventVersion, true) })
}

// runList finishes a list request whose own parameters are read into l
// and the filter (kit.RunList on the store's read side).
func runList[R, T any](ctx context.Context, a *App, p account.Principal, op, table, noun string, req ListRequest, l *listParams,
	lq *list.Query, read func(store.Q) (list.Page[R], error), view func(R) (T, error)) (ListJSON[T], error) {
	return kit.RunList(ctx, a.store.Read(), p, op, table, noun, req, l, lq, read, view)
}

// state is the state v names among states ("" when empty; a problem of
// the parameter state when unknown).
func state[S ~string](l *listParams, v string, states []S) S {
	if v != "" && !slices.Contains(states, S(v)) {
		l.Bad("state", fmt.Sprintf("state must be one of %v", states))
	}
	return S(v)
}

// SubscriptionsRequest is GET /v9/ticketing/subscriptions.json's query,
// as sent.
type SubscriptionsRequest struct {
	ListRequest
	State   string
	EndsGTE string
	EndsLT  string
}

// Subscriptions lists the caller's subscriptions of its environment,
// newest first, as GET …/subscriptions/{id}.json shows them; state is
// taken at each subscription's time (a test clock's for one on a clock).
func (a *App) Subscriptions(ctx context.Context, p account.Principal, req SubscriptionsRequest) (ListJSON[SubscriptionJSON], error) {
	var l listParams
	f := ticketing.SubscriptionFilter{State: state(&l, req.State, ticketing.SubscriptionStates), Now: a.clock.Now(),
		EndsGTE: l.Timestamp("ends_at[gte]", req.EndsGTE), EndsLT: l.Timestamp("ends_at[lt]", req.EndsLT)}
	return runList(ctx, a, p, "app.Subscriptions", "subscriptions", "subscription", req.ListRequest, &l, &f.Query,
		func(q store.Q) (list.Page[ticketing.Subscription], error) { return q.Subscriptions(ctx, f) },
		func(s ticketing.Subscription) (SubscriptionJSON, error) {
			now, err := a.timeOf(ctx, a.store.Read(), s.TestClockID)
			return subscriptionView(a.subscriptionDetailsOf(s, now)), err
		})
}

// CouponsRequest is GET /v9/ticketing/coupons.json's query, as sent.
type CouponsRequest struct {
	ListRequest
	State string
}

// Coupons lists the caller's coupons of its environment, newest first, as
// GET …/coupons/{id}.json (v9) shows them.
func (a *App) Coupons(ctx context.Context, p account.Principal, req CouponsRequest) (ListJSON[CouponJSON], error) {
	var l listParams
	f := ticketing.CouponFilter{State: state(&l, req.State, ticketing.CouponStates)}
	return runList(ctx, a, p, "app.Coupons", "coupons", "coupon", req.ListRequest, &l, &f.Query,
		func(q store.Q) (list.Page[ticketing.Coupon], error) { return q.Coupons(ctx, f) },
		func(c ticketing.Coupon) (CouponJSON, error) {
			d, err := a.couponDetails(ctx, a.store.Read(), c)
			return couponView(d, eventVersion), err
		})
}

// TicketsRequest is GET /v9/ticketing/tickets.json's query, as sent.
type TicketsRequest struct {
	ListRequest
	State string
}

// Tickets lists the caller's tickets of its environment, newest first;
// TicketList shows them as the ticket's GET does.
func (a *App) Tickets(ctx context.Context, p account.Principal, req TicketsRequest) (ListJSON[TicketDetails], error) {
	var l listParams
	f := ticketing.TicketFilter{State: state(&l, req.State, ticketing.TicketStates)}
	return runList(ctx, a, p, "app.Tickets", "tickets", "ticket", req.ListRequest, &l, &f.Query,
		func(q store.Q) (list.Page[ticketing.Ticket], error) { return q.Tickets(ctx, f) },
		func(t ticketing.Ticket) (TicketDetails, error) { return a.ticketDetails(ctx, a.store.Read(), t) })
}

// TicketList shows a page of tickets as PATCH …/tickets/{id}.json does
// (with what offers gives each: this instance's signed barcode and
// rendering options).
func TicketList(l ListJSON[TicketDetails], offers passes.Offers) (ListJSON[ticketJSON], error) {
	out := make([]ticketJSON, 0, len(l.Data))
	for _, d := range l.Data {
		v, err := TicketResponse(d, offers)
		if err != nil {
			return ListJSON[ticketJSON]{}, err
		}
		out = append(out, v)
	}
	return listOf(out, l.HasMore), nil
}
