package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"slices"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/apperr"
)

// listParams are the query parameters every list takes (docs/lists.md).
var listParams = []string{"limit", "starting_after", "ending_before", "created[gte]", "created[lt]"}

// listQuery checks a list's query: only the common parameters and extra
// ones, each at most once; any other is refused, so a misspelt filter does
// not silently list everything.
func listQuery(op string, r *http.Request, extra ...string) (url.Values, app.ListRequest, error) {
	q, err := knownQuery(op, r, append(listParams, extra...)...)
	if err != nil {
		return nil, app.ListRequest{}, err
	}
	return q, app.ListRequest{Limit: q.Get("limit"), StartingAfter: q.Get("starting_after"), EndingBefore: q.Get("ending_before"),
		CreatedGTE: q.Get("created[gte]"), CreatedLT: q.Get("created[lt]")}, nil
}

// writeList answers a list that takes only the common parameters with
// list's page of the caller's records.
func writeList[T any](w http.ResponseWriter, r *http.Request, op string, list func(context.Context, app.Principal, app.ListRequest) (T, error)) error {
	_, lr, err := listQuery(op, r)
	if err != nil {
		return err
	}
	out, err := list(r.Context(), principalOf(r), lr)
	return writeResult(w, http.StatusOK, out, err)
}

// knownQuery is the request's query string, refused (400 naming the
// parameter) when it has a parameter other than those known or one given
// more than once.
func knownQuery(op string, r *http.Request, known ...string) (url.Values, error) {
	q := r.URL.Query()
	for k, v := range q {
		if !slices.Contains(known, k) {
			return nil, apperr.Param(op, k, "unknown query parameter "+k)
		}
		if len(v) > 1 {
			return nil, apperr.Param(op, k, k+" given more than once")
		}
	}
	return q, nil
}

// optional is the value of query parameter k, nil when it is absent.
func optional(q url.Values, k string) *string {
	if !q.Has(k) {
		return nil
	}
	v := q.Get(k)
	return &v
}

// getEvents lists the caller's events of its environment, newest first
// (docs/events.md).
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request) error {
	q, lr, err := listQuery("httpapi.getEvents", r, "type")
	if err != nil {
		return err
	}
	page, err := s.Events.List(r.Context(), principalOf(r), events.Request{Limit: lr.Limit,
		StartingAfter: lr.StartingAfter, EndingBefore: lr.EndingBefore, Type: q.Get("type"),
		CreatedGTE: lr.CreatedGTE, CreatedLT: lr.CreatedLT})
	return writeView(w, http.StatusOK, page, err, events.Response)
}

// getOrders lists the caller's orders of its environment, newest first
// (docs/lists.md).
func (s *Server) getOrders(w http.ResponseWriter, r *http.Request) error {
	q, lr, err := listQuery("httpapi.getOrders", r, "optional_order_reference")
	if err != nil {
		return err
	}
	out, err := s.app.Orders(r.Context(), principalOf(r), app.OrdersRequest{ListRequest: lr,
		OptionalOrderReference: optional(q, "optional_order_reference")})
	return writeResult(w, http.StatusOK, out, err)
}

// getSubscriptions lists the caller's subscriptions of its environment,
// newest first (docs/lists.md).
func (s *Server) getSubscriptions(w http.ResponseWriter, r *http.Request) error {
	q, lr, err := listQuery("httpapi.getSubscriptions", r, "state", "ends_at[gte]", "ends_at[lt]")
	if err != nil {
		return err
	}
	out, err := s.app.Subscriptions(r.Context(), principalOf(r), app.SubscriptionsRequest{ListRequest: lr,
		State: q.Get("state"), EndsGTE: q.Get("ends_at[gte]"), EndsLT: q.Get("ends_at[lt]")})
	return writeResult(w, http.StatusOK, out, err)
}

// getCoupons lists the caller's coupons of its environment, newest first
// (docs/lists.md).
func (s *Server) getCoupons(w http.ResponseWriter, r *http.Request) error {
	q, lr, err := listQuery("httpapi.getCoupons", r, "state")
	if err != nil {
		return err
	}
	out, err := s.app.Coupons(r.Context(), principalOf(r), app.CouponsRequest{ListRequest: lr, State: q.Get("state")})
	return writeResult(w, http.StatusOK, out, err)
}

// getTickets lists the caller's tickets of its environment, newest first
// (docs/lists.md).
func (s *Server) getTickets(w http.ResponseWriter, r *http.Request) error {
	q, lr, err := listQuery("httpapi.getTickets", r, "state")
	if err != nil {
		return err
	}
	l, err := s.app.Tickets(r.Context(), principalOf(r), app.TicketsRequest{ListRequest: lr, State: q.Get("state")})
	if err != nil {
		return err
	}
	out, err := app.TicketList(l, s.Wallets.Offer)
	return writeResult(w, http.StatusOK, out, err)
}

// getCustomers lists the caller's customers of its environment, newest
// first (docs/lists.md).
func (s *Server) getCustomers(w http.ResponseWriter, r *http.Request) error {
	return writeList(w, r, "httpapi.getCustomers", s.Invoices.Customers)
}

// getInvoices lists the caller's documents of its environment, newest
// first (docs/lists.md).
func (s *Server) getInvoices(w http.ResponseWriter, r *http.Request) error {
	q, lr, err := listQuery("httpapi.getInvoices", r, "number", "customer_id")
	if err != nil {
		return err
	}
	out, err := s.Invoices.Invoices(r.Context(), principalOf(r), invoices.InvoicesRequest{ListRequest: lr,
		Number: optional(q, "number"), CustomerID: optional(q, "customer_id")})
	return writeResult(w, http.StatusOK, out, err)
}

// getBillableItems lists the caller's billable items of its environment,
// newest first (docs/lists.md).
func (s *Server) getBillableItems(w http.ResponseWriter, r *http.Request) error {
	q, lr, err := listQuery("httpapi.getBillableItems", r, "invoiced", "customer_id", "billablable_collection_id")
	if err != nil {
		return err
	}
	out, err := s.Invoices.BillableItems(r.Context(), principalOf(r), invoices.BillableItemsRequest{ListRequest: lr,
		Invoiced: optional(q, "invoiced"), CustomerID: optional(q, "customer_id"), CollectionID: optional(q, "billablable_collection_id")})
	return writeResult(w, http.StatusOK, out, err)
}

// getCollections lists the caller's billable collections of its
// environment, newest first (docs/lists.md).
func (s *Server) getCollections(w http.ResponseWriter, r *http.Request) error {
	return writeList(w, r, "httpapi.getCollections", s.Invoices.Collections)
}
