package app

import (
	"context"
	"slices"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/money"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// The partner dashboard's detail pages (docs/web.md "Detail pages",
// issue 34): an order with its coupons, tickets, amounts and invoices, a
// ticket with its coupon and order, and the timeline of events about
// them. Every read carries the principal's account and environment: an id
// of another account or environment is the same 404 as an unknown one.

// TimelineLimit is the most events a detail page's timeline shows.
const TimelineLimit = 100

// TimelineEntry is one event about a page's records, oldest first.
type TimelineEntry struct {
	EventID, Type, ObjectID string
	At                      time.Time
}

// CouponLine is an order's coupon on its page: its product, its tickets,
// and what it is billed (its billable item) on which invoices.
type CouponLine struct {
	CouponID, ProductName, AreaName string
	Activated                       bool
	Tickets                         []passes.TicketSummary
	BillableItemID                  string // "" for a coupon without one
	Amount                          money.Cents
	Currency                        string
	InvoiceIDs                      []string // the standing invoices of its item, by customer
}

// OrderPage is an order's detail page.
type OrderPage struct {
	OrderID   string
	Reference *string
	CreatedAt time.Time
	Coupons   []CouponLine
	// Total is the sum of the coupons' billed amounts (in Currency; ""
	// when nothing is billed yet).
	Total    money.Cents
	Currency string
	Timeline []TimelineEntry
}

// DashboardOrder is the order id of p with its coupons, tickets, billed
// amounts, invoices and events.
func (a *App) DashboardOrder(ctx context.Context, p account.Principal, id string) (OrderPage, error) {
	q := a.store.Read()
	o, err := q.Order(ctx, p.AccountID, p.Environment, id)
	if err != nil {
		return OrderPage{}, err
	}
	out := OrderPage{OrderID: o.ID, Reference: o.OptionalOrderReference, CreatedAt: o.CreatedAt}
	ids := []string{o.ID}
	for _, c := range o.Coupons {
		line, tids, err := a.couponLine(ctx, q, p, c)
		if err != nil {
			return OrderPage{}, err
		}
		if line.Currency != "" {
			out.Total, out.Currency = out.Total+line.Amount, line.Currency
		}
		out.Coupons = append(out.Coupons, line)
		ids = append(append(ids, c.ID), tids...)
	}
	out.Timeline, err = a.timeline(ctx, q, p, ids)
	return out, err
}

// couponLine is coupon c's line with the ids of its tickets.
func (a *App) couponLine(ctx context.Context, q store.Q, p account.Principal, c ticketing.Coupon) (CouponLine, []string, error) {
	line := CouponLine{CouponID: c.ID, Activated: c.Activated, ProductName: c.ProductID}
	if pr, ok := a.Catalog().Product(c.ProductID); ok {
		line.ProductName = pr.LocalTicketName
		if ar, ok := a.Catalog().Area(pr.AreaID); ok {
			line.AreaName = ar.Name
		}
	}
	ts, err := q.TicketsOfCoupon(ctx, c.ID)
	if err != nil {
		return line, nil, err
	}
	var tids []string
	for _, t := range ts {
		d, err := a.ticketDetails(ctx, q, t)
		if err != nil {
			return line, nil, err
		}
		line.Tickets = append(line.Tickets, d.Summary())
		tids = append(tids, t.ID)
	}
	if c.BillableItemID == nil {
		return line, tids, nil
	}
	it, err := q.BillableItem(ctx, p.AccountID, p.Environment, *c.BillableItemID)
	if err != nil {
		return line, nil, err
	}
	line.BillableItemID, line.Amount, line.Currency = it.ID, it.AmountCents, it.Currency
	claims, err := q.ItemClaims(ctx, it.ID)
	for _, inv := range claims {
		line.InvoiceIDs = append(line.InvoiceIDs, inv)
	}
	slices.Sort(line.InvoiceIDs)
	return line, tids, err
}

// timeline is the events of p about ids, oldest first.
func (a *App) timeline(ctx context.Context, q store.Q, p account.Principal, ids []string) ([]TimelineEntry, error) {
	evs, err := q.EventsAbout(ctx, p.AccountID, p.Environment, ids, TimelineLimit)
	out := make([]TimelineEntry, 0, len(evs))
	for _, e := range evs {
		out = append(out, TimelineEntry{EventID: e.ID, Type: string(e.Type), ObjectID: e.ObjectID, At: e.CreatedAt})
	}
	return out, err
}

// TicketPage is a ticket's detail page.
type TicketPage struct {
	passes.TicketSummary
	OrderID       string
	AreaName      string
	CreatedAt     time.Time
	InvalidatedAt *time.Time
	RevokedReason *string
	Timeline      []TimelineEntry
}

// DashboardTicket is the ticket id of p with its coupon, order and the
// events about the ticket and its coupon; a ticket of another account or
// environment is not found.
func (a *App) DashboardTicket(ctx context.Context, p account.Principal, id string) (TicketPage, error) {
	q := a.store.Read()
	d, err := a.ticketDetailsOf(ctx, q, id)
	if apperr.KindOf(err) == apperr.NotFound || (err == nil && (d.Coupon.AccountID != p.AccountID || d.Coupon.Environment != p.Environment)) {
		return TicketPage{}, apperr.NotFoundf("app.DashboardTicket", store.CodeTicketNotFound)
	}
	if err != nil {
		return TicketPage{}, err
	}
	out := TicketPage{TicketSummary: d.Summary(), OrderID: d.Coupon.OrderID, CreatedAt: d.Ticket.CreatedAt,
		InvalidatedAt: d.Ticket.InvalidatedAt, RevokedReason: d.Ticket.RevokedReason}
	if d.Area != nil {
		out.AreaName = d.Area.Name
	}
	out.Timeline, err = a.timeline(ctx, q, p, []string{d.Ticket.ID, d.Coupon.ID})
	return out, err
}

// ItemOrder is where a billable item came from: its coupon and order ("" for
// an item of a subscription cycle without a coupon of this environment).
type ItemOrder struct{ CouponID, OrderID string }

// ItemOrders are the coupons and orders of p's billable items ids (an
// invoice's lines), by item id; unknown items are left out.
func (a *App) ItemOrders(ctx context.Context, p account.Principal, ids []string) (map[string]ItemOrder, error) {
	q := a.store.Read()
	out := map[string]ItemOrder{}
	for _, id := range ids {
		it, err := q.BillableItem(ctx, p.AccountID, p.Environment, id)
		if apperr.KindOf(err) == apperr.NotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		if it.CouponID == nil {
			continue
		}
		c, err := q.Coupon(ctx, *it.CouponID)
		if err != nil {
			return nil, err
		}
		if c.AccountID == p.AccountID && c.Environment == p.Environment {
			out[id] = ItemOrder{CouponID: c.ID, OrderID: c.OrderID}
		}
	}
	return out, nil
}

// Timeline is the events of p about ids (an invoice and its deliveries),
// oldest first, at most TimelineLimit.
func (a *App) Timeline(ctx context.Context, p account.Principal, ids []string) ([]TimelineEntry, error) {
	return a.timeline(ctx, a.store.Read(), p, ids)
}
