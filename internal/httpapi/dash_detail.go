package httpapi

import (
	"html/template"
	"net/http"
	"strings"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/web"
)

// The dashboard's detail pages (docs/web.md "Detail pages", issue 34): an
// order, a ticket and an invoice, each with what a partner asks of it
// (state, amounts, product and customer by name), the related records
// linked (order → coupons and tickets → invoices and back) and the
// timeline of events about them. The webhook endpoint's page is
// dash_webhooks.go's. Every read is of the session's account and the
// page's environment: another account's or environment's id is 404.

// detailView is a detail page: its record's id (small, with a copy
// button), facts, tables of related records and the timeline.
type detailView struct {
	ID, IDLabel     string // IDLabel: message key naming the id
	Back, BackLabel string
	Facts           []fact
	Tables          []detailTable
	Timeline        []timelineRow
}

// fact is one line of the page's facts: a label (message key) and a cell.
type fact struct {
	Label string
	Cell  cell
}

// detailTable is a table of related records; Empty is the message key
// shown when it has no rows.
type detailTable struct {
	ID, Title, Empty string
	Columns          []string
	Rows             [][]cell
}

// timelineRow is one event of the timeline: when, its type, its object.
type timelineRow struct {
	At      template.HTML
	Type    string
	EventID string
	Object  cell
}

// dashPath is the page's environment's dashboard path of rest.
func dashPath(r *http.Request, rest ...string) string {
	return "/dashboard/" + r.PathValue("env") + "/" + strings.Join(rest, "/")
}

// amount writes a decimal amount (money.Cents.Decimal) in the page's
// language with the currency.
func amount(l, d, currency string) string {
	if l == "de" {
		d = strings.Replace(d, ".", ",", 1)
	}
	return d + " " + currency
}

// timelineOf writes the events; objects the page knows (links) are linked
// and named by it, others shown by id.
func (s *Server) timelineOf(l string, evs []app.TimelineEntry, links map[string]cell) []timelineRow {
	out := make([]timelineRow, 0, len(evs))
	for _, e := range evs {
		obj, ok := links[e.ObjectID]
		if !ok {
			obj = cell{Text: e.ObjectID, Mono: true}
		}
		out = append(out, timelineRow{At: s.ago(l, e.At), Type: e.Type, EventID: e.EventID, Object: obj})
	}
	return out
}

func ticketState(l string, t passes.TicketSummary) string {
	if t.Valid {
		return web.T(l, "dash.valid")
	}
	return web.T(l, "dash.invalid")
}

// dashOrder is an order's page: its coupons with product, area, state,
// amount and invoices, their tickets, and the timeline.
func (s *Server) dashOrder(w http.ResponseWriter, r *http.Request) error {
	l := lang(r)
	o, err := s.app.DashboardOrder(r.Context(), dashPrincipal(r), r.PathValue("order_id"))
	if err != nil {
		return err
	}
	v := detailView{ID: o.OrderID, IDLabel: "dash.detail.orderid", Back: dashPath(r, "orders"), BackLabel: "dash.detail.back.orders"}
	names := make([]string, 0, len(o.Coupons))
	coupons := detailTable{ID: "coupons", Title: "dash.col.coupons", Empty: "dash.detail.none",
		Columns: []string{"dash.col.product", "dash.col.area", "dash.col.status", "dash.col.total", "dash.detail.invoices", "dash.col.coupon"}}
	tickets := detailTable{ID: "tickets", Title: "dash.tickets", Empty: "dash.detail.notickets",
		Columns: []string{"dash.col.ticket", "dash.col.product", "dash.col.valid", "dash.col.status"}}
	links := map[string]cell{o.OrderID: {Text: web.T(l, "dash.col.order")}}
	for _, c := range o.Coupons {
		names = append(names, c.ProductName)
		st, amt := web.T(l, "dash.state.not_activated"), "—"
		if c.Activated {
			st = web.T(l, "dash.state.activated")
		}
		if c.Currency != "" {
			amt = amount(l, c.Amount.Decimal(), c.Currency)
		}
		inv := cell{Text: "—"}
		if len(c.InvoiceIDs) > 0 {
			inv = cell{}
			for _, id := range c.InvoiceIDs {
				inv.Links = append(inv.Links, cell{Text: web.T(l, "dash.detail.invoice"), Href: dashPath(r, "invoices", id)})
			}
		}
		coupons.Rows = append(coupons.Rows, []cell{{Text: c.ProductName}, {Text: c.AreaName}, {Text: st}, {Text: amt}, inv,
			{Text: web.T(l, "dash.detail.travellerpage"), Href: "/c/" + c.CouponID, Sub: s.publicBase(r) + "/c/" + c.CouponID, Copy: true}})
		links[c.CouponID] = cell{Text: c.ProductName, Sub: c.CouponID}
		for _, t := range c.Tickets {
			tickets.Rows = append(tickets.Rows, []cell{{Text: t.TicketID, Href: dashPath(r, "tickets", t.TicketID), Mono: true},
				{Text: t.ProductName}, {Text: s.ts(l, t.ValidFrom) + " – " + s.ts(l, t.ValidUntil)}, {Text: ticketState(l, t)}})
			links[t.TicketID] = cell{Text: web.T(l, "dash.col.ticket") + " " + t.ProductName, Href: dashPath(r, "tickets", t.TicketID)}
		}
	}
	total := "—"
	if o.Currency != "" {
		total = amount(l, o.Total.Decimal(), o.Currency)
	}
	v.Facts = []fact{{"dash.col.products", cell{Text: strings.Join(names, ", ")}}, {"dash.col.reference", cell{Text: orDash(o.Reference)}},
		{"dash.col.total", cell{Text: total}}, {"dash.col.created", cell{At: s.ago(l, o.CreatedAt)}}}
	v.Tables = []detailTable{coupons, tickets}
	v.Timeline = s.timelineOf(l, o.Timeline, links)
	return s.dashRender(w, r, http.StatusOK, "dash_detail", "orders", web.Page{Data: v, Title: web.T(l, "dash.detail.order", strings.Join(names, ", "))})
}

// dashTicket is a ticket's page: product, area, validity, state, its
// coupon (the traveller page) and order, and the timeline.
func (s *Server) dashTicket(w http.ResponseWriter, r *http.Request) error {
	l := lang(r)
	t, err := s.app.DashboardTicket(r.Context(), dashPrincipal(r), r.PathValue("ticket_id"))
	if err != nil {
		return err
	}
	v := detailView{ID: t.TicketID, IDLabel: "dash.detail.ticketid", Back: dashPath(r, "tickets"), BackLabel: "dash.detail.back.tickets"}
	v.Facts = []fact{{"dash.col.product", cell{Text: t.ProductName}}, {"dash.col.area", cell{Text: t.AreaName}},
		{"dash.col.valid", cell{Text: s.ts(l, t.ValidFrom) + " – " + s.ts(l, t.ValidUntil)}},
		{"dash.col.status", cell{Text: ticketState(l, t.TicketSummary)}}}
	if t.InvalidatedAt != nil {
		v.Facts = append(v.Facts, fact{"dash.detail.invalidated", cell{At: s.ago(l, *t.InvalidatedAt)}})
		if t.RevokedReason != nil {
			v.Facts = append(v.Facts, fact{"dash.detail.reason", cell{Text: *t.RevokedReason}})
		}
	}
	v.Facts = append(v.Facts, fact{"dash.detail.issued", cell{At: s.ago(l, t.CreatedAt)}},
		fact{"dash.col.order", cell{Text: web.T(l, "dash.detail.openorder"), Href: dashPath(r, "orders", t.OrderID), Sub: t.OrderID}},
		fact{"dash.col.coupon", cell{Text: web.T(l, "dash.detail.travellerpage"), Href: "/c/" + t.CouponID, Sub: s.publicBase(r) + "/c/" + t.CouponID, Copy: true}})
	links := map[string]cell{t.TicketID: {Text: web.T(l, "dash.col.ticket")}, t.CouponID: {Text: web.T(l, "dash.col.coupon"), Sub: t.CouponID}}
	v.Timeline = s.timelineOf(l, t.Timeline, links)
	return s.dashRender(w, r, http.StatusOK, "dash_detail", "tickets", web.Page{Data: v, Title: web.T(l, "dash.detail.ticket", t.ProductName)})
}

// dashInvoice is an invoice's page: number, kind, customer, dates,
// totals, its lines with the orders they came from, the documents that
// refer to it, its files and deliveries, and the timeline.
func (s *Server) dashInvoice(w http.ResponseWriter, r *http.Request) error {
	l, p := lang(r), dashPrincipal(r)
	doc, err := s.Invoices.Invoice(r.Context(), p, r.PathValue("invoice_id"))
	if err != nil {
		return err
	}
	inv := s.Invoices.Response(doc)
	ids := make([]string, 0, len(inv.Lines))
	for _, ln := range inv.Lines {
		ids = append(ids, ln.BillableItemID)
	}
	orders, err := s.app.ItemOrders(r.Context(), p, ids)
	if err != nil {
		return err
	}
	dl, err := s.Delivery.Deliveries(r.Context(), p, inv.InvoiceID)
	if err != nil {
		return err
	}
	evIDs := []string{inv.InvoiceID}
	for _, d := range dl.Data {
		evIDs = append(evIDs, d.ID)
	}
	evs, err := s.app.Timeline(r.Context(), p, evIDs)
	if err != nil {
		return err
	}
	v := detailView{ID: inv.InvoiceID, IDLabel: "dash.detail.invoiceid", Back: dashPath(r, "invoices"), BackLabel: "dash.dl.back"}
	v.Facts = invoiceFacts(r, l, inv)
	lines := detailTable{ID: "lines", Title: "dash.detail.lines", Empty: "dash.detail.none",
		Columns: []string{"dash.detail.description", "dash.detail.quantity", "dash.col.total", "dash.col.order"}}
	for _, ln := range inv.Lines {
		ord := cell{Text: "—"}
		if o, ok := orders[ln.BillableItemID]; ok {
			ord = cell{Text: web.T(l, "dash.detail.openorder"), Href: dashPath(r, "orders", o.OrderID), Sub: o.OrderID}
		}
		lines.Rows = append(lines.Rows, []cell{{Text: ln.Description}, {Text: web.Number(l, ln.Quantity)},
			{Text: amount(l, ln.GrossAmountInCents.Decimal(), inv.Currency)}, ord})
	}
	files := detailTable{ID: "files", Title: "dash.col.files", Empty: "dash.detail.none", Columns: []string{"dash.col.files", "dash.col.delivery"},
		Rows: [][]cell{{invoiceFiles(inv), {Text: web.T(l, "dash.deliveries"), Href: dashPath(r, "invoices", inv.InvoiceID, "deliveries")}}}}
	v.Tables = []detailTable{lines, files}
	links := map[string]cell{inv.InvoiceID: {Text: inv.InvoiceNumber}}
	v.Timeline = s.timelineOf(l, evs, links)
	return s.dashRender(w, r, http.StatusOK, "dash_detail", "invoices", web.Page{Data: v, Title: web.T(l, "dash.detail.invoicetitle", inv.InvoiceNumber)})
}

// invoiceFacts are an invoice's number, kind, customer, dates, totals and
// the documents it refers to or is cancelled by.
func invoiceFacts(r *http.Request, l string, inv invoices.InvoiceJSON) []fact {
	customer := cell{Text: "—"}
	if len(inv.Recipient) > 0 {
		customer.Text = inv.Recipient[0]
	}
	if inv.CustomerID != nil {
		customer.Sub, customer.Copy = *inv.CustomerID, true
	}
	t := inv.Totals
	out := []fact{{"dash.col.number", cell{Text: inv.InvoiceNumber, Mono: true, Copy: true}},
		{"dash.col.kind", cell{Text: web.T(l, "dash.kind."+inv.Kind)}}, {"dash.col.customer", customer},
		{"dash.col.issued", cell{Text: web.Day(l, inv.IssueDate)}}, {"dash.detail.due", cell{Text: web.Day(l, orDash(inv.DueDate))}},
		{"dash.detail.net", cell{Text: amount(l, t.NetAmountInCents.Decimal(), inv.Currency)}},
		{"dash.detail.vat", cell{Text: amount(l, t.VATAmountInCents.Decimal(), inv.Currency)}},
		{"dash.col.total", cell{Text: amount(l, t.GrossAmountInCents.Decimal(), inv.Currency)}},
		{"dash.detail.payable", cell{Text: amount(l, t.PayableAmountInCents.Decimal(), inv.Currency)}}}
	if inv.RefersToInvoiceID != nil {
		out = append(out, fact{"dash.detail.refers", cell{Text: orDash(inv.RefersToNumber), Href: dashPath(r, "invoices", *inv.RefersToInvoiceID)}})
	}
	if inv.CancelledByInvoiceID != nil {
		out = append(out, fact{"dash.detail.cancelledby", cell{Text: web.T(l, "dash.detail.invoice"), Href: dashPath(r, "invoices", *inv.CancelledByInvoiceID)}})
	}
	return out
}

// invoiceFiles is the cell of an invoice's files: the PDF, and XRechnung
// and CII for electronic invoicing.
func invoiceFiles(inv invoices.InvoiceJSON) cell {
	c := cell{Links: []cell{{Text: "PDF", Href: inv.InvoicePDFURL}}}
	if inv.ElectronicInvoicing {
		c.Links = append(c.Links, cell{Text: "XRechnung", Href: inv.InvoiceXRechnungURL}, cell{Text: "CII", Href: inv.InvoiceCIIURL})
	}
	return c
}
