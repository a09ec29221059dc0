package httpapi

import (
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/farebox/farebox/internal/web"
)

// deliveriesView is the dashboard's delivery log of one document: a row
// per attempt (a delivery without attempts yet is one row).
type deliveriesView struct {
	InvoiceID string
	Rows      []deliveryRow
}

type deliveryRow struct {
	When                              template.HTML // relative to now (ago)
	Recipient, Status, Attempt, Reply string
	Bad                               bool // failed: shown as an error
}

// deliveriesPage shows the delivery log of the path's document with p's
// notice or error.
func (s *Server) deliveriesPage(w http.ResponseWriter, r *http.Request, status int, p web.Page) error {
	l, id := lang(r), r.PathValue("invoice_id")
	log, err := s.Delivery.Deliveries(r.Context(), dashPrincipal(r), id)
	if err != nil {
		return err
	}
	v := deliveriesView{InvoiceID: id}
	for _, d := range log.Data {
		row := deliveryRow{When: s.ago(l, time.Time(d.Created)), Recipient: d.Recipient, Status: d.Status, Attempt: "—", Reply: "—",
			Bad: d.Status == "failed"}
		if len(d.Attempts) == 0 {
			v.Rows = append(v.Rows, row)
		}
		for _, a := range d.Attempts {
			row.When, row.Status, row.Attempt, row.Reply = s.ago(l, time.Time(a.At)), a.Outcome, strconv.Itoa(a.Attempt), a.Reply
			row.Bad = a.Outcome == "failed"
			v.Rows = append(v.Rows, row)
		}
	}
	p.Data = v
	return s.dashRenderTitled(w, r, status, "dash_deliveries", "invoices", "dash.deliveries", p)
}

func (s *Server) dashDeliveries(w http.ResponseWriter, r *http.Request) error {
	return s.deliveriesPage(w, r, http.StatusOK, web.Page{})
}

// dashResendInvoice sends the path's document to its buyer again (the
// API's resend); a refusal (no e-mail address, no relay, a delivery under
// way) shows the log with the refusal.
func (s *Server) dashResendInvoice(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("invoice_id")
	_, err := s.Delivery.Resend(r.Context(), claimOf(r), dashPrincipal(r), id)
	return actionOutcome(w, r, err, s.deliveriesPage, web.T(lang(r), "dash.dl.resending", id))
}
