package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// Lists (docs/lists.md) share the conventions of GET /v1/events.json:
// limit 1–100 (default 10), starting_after or ending_before naming a
// record of the caller's account and environment, created[gte] and
// created[lt], newest first, and every parameter problem a 400
// invalid_parameter naming the parameter.

// ListRequest is the paging part of a list request, as sent.
type ListRequest struct {
	Limit         string
	StartingAfter string
	EndingBefore  string
	CreatedGTE    string
	CreatedLT     string
}

// listParams collects the problems of one list request's parameters.
type listParams struct {
	probs []apperr.FieldError
}

func (l *listParams) bad(field, msg string) {
	l.probs = append(l.probs, apperr.FieldError{Field: field, Message: msg})
}

// limit is the page size v asks for (event.DefaultLimit when empty).
func (l *listParams) limit(v string) int {
	if v == "" {
		return event.DefaultLimit
	}
	var n int
	if _, err := fmt.Sscanf(v, "%d", &n); err != nil || fmt.Sprint(n) != v || n < 1 || n > event.MaxLimit {
		l.bad("limit", fmt.Sprintf("limit must be an integer from 1 to %d", event.MaxLimit))
		return event.DefaultLimit
	}
	return n
}

// timestamp is the RFC 3339 instant v of parameter field, nil when empty.
func (l *listParams) timestamp(field, v string) *time.Time {
	if v == "" {
		return nil
	}
	t, err := clock.ParseTimestamp(v)
	if err != nil {
		l.bad(field, field+" must be an RFC 3339 timestamp such as 2026-06-01T00:00:00Z")
		return nil
	}
	return &t
}

// cursors resolves starting_after and ending_before (at most one may be
// sent) with resolve, which says whether the id names a record of the
// caller's account and environment; noun and note word the refusal. They
// are resolved only when every other parameter is good.
func (l *listParams) cursors(req ListRequest, noun, note string, resolve func(field, id string) (bool, error)) error {
	if req.StartingAfter != "" && req.EndingBefore != "" {
		l.bad("ending_before", "send starting_after or ending_before, not both")
	}
	for _, c := range []struct{ field, id string }{{"starting_after", req.StartingAfter}, {"ending_before", req.EndingBefore}} {
		if c.id == "" || len(l.probs) > 0 {
			continue
		}
		ok, err := resolve(c.field, c.id)
		if err != nil {
			return err
		}
		if !ok {
			l.bad(c.field, fmt.Sprintf("%s: no %s %q in this account and environment%s", c.field, noun, c.id, note))
		}
	}
	return nil
}

// err is the 400 invalid_parameter of the problems found, nil without.
func (l *listParams) err(op string) error {
	if len(l.probs) == 0 {
		return nil
	}
	return apperr.E(op, apperr.Invalid, apperr.CodeInvalidParameter, l.probs[0].Message).WithDetails(l.probs...)
}

// listQuery reads the common parameters of a list of table's records
// (named noun in refusals) into a store query; the caller adds its own
// problems to l and asks l.err when done.
func (a *App) listQuery(ctx context.Context, p account.Principal, table, noun string, req ListRequest, l *listParams) (list.Query, error) {
	lq := list.Query{AccountID: p.AccountID, Environment: p.Environment, Limit: l.limit(req.Limit),
		CreatedGTE: l.timestamp("created[gte]", req.CreatedGTE), CreatedLT: l.timestamp("created[lt]", req.CreatedLT)}
	err := l.cursors(req, noun, "", func(field, id string) (bool, error) {
		c, ok, err := a.store.Read().ListCursor(ctx, table, p.AccountID, p.Environment, id)
		if ok && field == "starting_after" {
			lq.After = &c
		} else if ok {
			lq.Before = &c
		}
		return ok, err
	})
	return lq, err
}

// ListJSON is the answer of a list: a page of objects as their GET shows
// them, newest first.
type ListJSON[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
}

func listOf[T any](data []T, hasMore bool) ListJSON[T] {
	if data == nil {
		data = []T{}
	}
	return ListJSON[T]{Object: "list", Data: data, HasMore: hasMore}
}

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
// and the filter: it reads the common ones into *lq, refuses the problems
// found (400 invalid_parameter), reads the page and shows each record.
func runList[R, T any](ctx context.Context, a *App, p account.Principal, op, table, noun string, req ListRequest, l *listParams,
	lq *list.Query, read func(store.Q) (list.Page[R], error), view func(R) (T, error)) (ListJSON[T], error) {
	var err error
	if *lq, err = a.listQuery(ctx, p, table, noun, req, l); err != nil {
		return ListJSON[T]{}, err
	}
	if err := l.err(op); err != nil {
		return ListJSON[T]{}, err
	}
	page, err := read(a.store.Read())
	if err != nil {
		return ListJSON[T]{}, err
	}
	out := make([]T, 0, len(page.Items))
	for _, r := range page.Items {
		v, err := view(r)
		if err != nil {
			return ListJSON[T]{}, err
		}
		out = append(out, v)
	}
	return listOf(out, page.HasMore), nil
}

// state is the state v names among states ("" when empty; a problem of
// the parameter state when unknown).
func state[S ~string](l *listParams, v string, states []S) S {
	if v != "" && !slices.Contains(states, S(v)) {
		l.bad("state", fmt.Sprintf("state must be one of %v", states))
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
		EndsGTE: l.timestamp("ends_at[gte]", req.EndsGTE), EndsLT: l.timestamp("ends_at[lt]", req.EndsLT)}
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
// Wallets.TicketList shows them as the ticket's GET does.
func (a *App) Tickets(ctx context.Context, p account.Principal, req TicketsRequest) (ListJSON[TicketDetails], error) {
	var l listParams
	f := ticketing.TicketFilter{State: state(&l, req.State, ticketing.TicketStates)}
	return runList(ctx, a, p, "app.Tickets", "tickets", "ticket", req.ListRequest, &l, &f.Query,
		func(q store.Q) (list.Page[ticketing.Ticket], error) { return q.Tickets(ctx, f) },
		func(t ticketing.Ticket) (TicketDetails, error) { return a.ticketDetails(ctx, a.store.Read(), t) })
}

// TicketList shows a page of tickets as PATCH …/tickets/{id}.json does
// (with this instance's signed barcode and rendering options).
func (w *Wallets) TicketList(l ListJSON[TicketDetails]) (ListJSON[ticketJSON], error) {
	out := make([]ticketJSON, 0, len(l.Data))
	for _, d := range l.Data {
		v, err := w.TicketResponse(d)
		if err != nil {
			return ListJSON[ticketJSON]{}, err
		}
		out = append(out, v)
	}
	return listOf(out, l.HasMore), nil
}

// Customers lists the caller's customers of its environment, newest
// first, as GET …/customers/{id}.json shows them.
func (a *App) Customers(ctx context.Context, p account.Principal, req ListRequest) (ListJSON[CustomerJSON], error) {
	var l listParams
	var f invoicing.CustomerFilter
	return runList(ctx, a, p, "app.Customers", "customers", "customer", req, &l, &f.Query,
		func(q store.Q) (list.Page[invoicing.Customer], error) { return q.Customers(ctx, f) },
		func(c invoicing.Customer) (CustomerJSON, error) { return customerView(c), nil })
}

// InvoicesRequest is GET /v9/ticketing/invoices.json's query, as sent;
// Number and CustomerID are nil when absent.
type InvoicesRequest struct {
	ListRequest
	Number, CustomerID *string
}

// Invoices lists the caller's documents of its environment (invoices,
// cancellations, payment notices), newest first, as
// GET /v5/ticketing/invoices/{id}.json shows them.
func (a *App) Invoices(ctx context.Context, p account.Principal, req InvoicesRequest) (ListJSON[InvoiceJSON], error) {
	var l listParams
	f := invoicing.InvoiceFilter{Number: req.Number, CustomerID: req.CustomerID}
	return runList(ctx, a, p, "app.Invoices", "invoices", "invoice", req.ListRequest, &l, &f.Query,
		func(q store.Q) (list.Page[invoicing.Invoice], error) { return q.Invoices(ctx, f) },
		func(inv invoicing.Invoice) (InvoiceJSON, error) { return a.InvoiceResponse(inv), nil })
}

// BillableItemsRequest is GET /v9/ticketing/billable_items.json's query,
// as sent; each filter is nil when absent.
type BillableItemsRequest struct {
	ListRequest
	Invoiced, CustomerID, CollectionID *string
}

// BillableItems lists the caller's billable items of its environment,
// newest first by ordered_at, as GET /v5/ticketing/billable_item/{id}.json
// shows them.
func (a *App) BillableItems(ctx context.Context, p account.Principal, req BillableItemsRequest) (ListJSON[billableItemJSON], error) {
	var l listParams
	f := invoicing.BillableItemFilter{CustomerID: req.CustomerID, CollectionID: req.CollectionID}
	if v := req.Invoiced; v != nil {
		switch *v {
		case "true", "false":
			b := *v == "true"
			f.Invoiced = &b
		default:
			l.bad("invoiced", "invoiced must be true or false")
		}
	}
	return runList(ctx, a, p, "app.BillableItems", "billable_items", "billable item", req.ListRequest, &l, &f.Query,
		func(q store.Q) (list.Page[invoicing.BillableItem], error) { return q.BillableItems(ctx, f) },
		func(it invoicing.BillableItem) (billableItemJSON, error) {
			claims, err := a.store.Read().ItemClaims(ctx, it.ID)
			return billableItemView(BillableItemView{BillableItem: it, Invoiced: claims}), err
		})
}

// CollectionJSON is a billable collection in a list.
type CollectionJSON struct {
	ID          string    `json:"id"`
	Object      string    `json:"object"`
	Environment string    `json:"environment"`
	Created     timestamp `json:"created"`
}

// Collections lists the caller's billable collections of its
// environment, newest first.
func (a *App) Collections(ctx context.Context, p account.Principal, req ListRequest) (ListJSON[CollectionJSON], error) {
	var l listParams
	var f invoicing.CollectionFilter
	return runList(ctx, a, p, "app.Collections", "billable_collections", "billable collection", req, &l, &f.Query,
		func(q store.Q) (list.Page[invoicing.Collection], error) { return q.Collections(ctx, f) },
		func(c invoicing.Collection) (CollectionJSON, error) {
			return CollectionJSON{ID: c.ID, Object: "billable_collection", Environment: string(c.Environment), Created: timestamp(c.CreatedAt)}, nil
		})
}
