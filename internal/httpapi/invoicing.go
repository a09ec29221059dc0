package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/apperr"
)

type customerRequest struct {
	Customer *struct {
		AddressLines        []string        `json:"address_lines"`
		ElectronicInvoicing json.RawMessage `json:"electronic_invoicing"`
	} `json:"customer"`
}

func (s *Server) createCustomer(v9 bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req customerRequest
		if err := decode(r, &req); err != nil {
			return err
		}
		if req.Customer == nil {
			return apperr.Validation("customers", CodeCustomerRequired, "/customer", "customer is required: {\"customer\": {\"address_lines\": [...]}}")
		}
		c, err := s.Invoices.CreateCustomer(r.Context(), claimOf(r), principalOf(r), invoices.CustomerInput{
			AddressLines: req.Customer.AddressLines, Electronic: req.Customer.ElectronicInvoicing}, v9)
		return writeView(w, http.StatusCreated, c, err, invoices.CustomerResponse)
	}
}

func (s *Server) getCustomer(w http.ResponseWriter, r *http.Request) error {
	c, err := s.Invoices.Customer(r.Context(), principalOf(r), r.PathValue("customer_id"))
	return writeView(w, http.StatusOK, c, err, invoices.CustomerResponse)
}

// writeIssued answers a document just issued (201, as view shows it) and
// counts it as the metric event, or returns err when issuing failed.
func writeIssued[T any](s *Server, w http.ResponseWriter, view func(T) invoices.InvoiceJSON, inv T, err error, event string) error {
	if err != nil {
		return err
	}
	out := view(inv)
	s.Metrics.Event(event, out.Environment, 1)
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) getBillableItem(w http.ResponseWriter, r *http.Request) error {
	it, err := s.Invoices.BillableItem(r.Context(), principalOf(r), r.PathValue("billable_item_id"))
	return writeView(w, http.StatusOK, it, err, invoices.BillableItemResponse)
}

type itemUpdateRequest struct {
	CustomerID   json.RawMessage `json:"customer_id"`
	Split        json.RawMessage `json:"split"`
	CollectionID json.RawMessage `json:"billablable_collection_id"`
}

func (s *Server) putBillableItem(w http.ResponseWriter, r *http.Request) error {
	var req itemUpdateRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	it, err := s.Invoices.UpdateBillableItem(r.Context(), claimOf(r), principalOf(r), r.PathValue("billable_item_id"),
		invoices.ItemUpdate{CustomerID: req.CustomerID, Split: req.Split, CollectionID: req.CollectionID})
	return writeView(w, http.StatusOK, it, err, invoices.BillableItemResponse)
}

func (s *Server) createCollection(w http.ResponseWriter, r *http.Request) error {
	var req struct{}
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	id, err := s.Invoices.CreateCollection(r.Context(), claimOf(r), principalOf(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": id, "billable_item_ids": []string{}})
	return nil
}

func (s *Server) addToCollection(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		BillableItemIDs []string `json:"billable_item_ids"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	id := r.PathValue("collection_id")
	ids, err := s.Invoices.AddToCollection(r.Context(), claimOf(r), principalOf(r), id, req.BillableItemIDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "billable_item_ids": ids})
	return nil
}

type invoiceRequest struct {
	Subject               *string `json:"subject"`
	Notes                 *string `json:"notes"`
	CustomTextBeforeTable *string `json:"custom_text_before_table"`
	CustomTextAfterTable  *string `json:"custom_text_after_table"`
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (s *Server) createInvoice(w http.ResponseWriter, r *http.Request) error {
	var req invoiceRequest
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	inv, err := s.Invoices.IssueInvoice(r.Context(), claimOf(r), principalOf(r), invoices.InvoiceRequest{
		ItemID: r.PathValue("billable_item_id"), CustomerID: r.PathValue("customer_id"),
		Texts: invoices.InvoiceTexts{Subject: deref(req.Subject), Notes: deref(req.Notes),
			BeforeTable: deref(req.CustomTextBeforeTable), AfterTable: deref(req.CustomTextAfterTable)}})
	return writeIssued(s, w, s.Invoices.Response, inv, err, "invoice_issued")
}

func (s *Server) getInvoice(w http.ResponseWriter, r *http.Request) error {
	inv, err := s.Invoices.Invoice(r.Context(), principalOf(r), r.PathValue("invoice_id"))
	return writeView(w, http.StatusOK, inv, err, s.Invoices.Response)
}

func (s *Server) cancelInvoice(w http.ResponseWriter, r *http.Request) error {
	return s.invoiceAction(w, r, "invoice_cancelled", s.Invoices.CancelInvoice)
}

func (s *Server) invoicePaymentNotice(w http.ResponseWriter, r *http.Request) error {
	return s.invoiceAction(w, r, "payment_notice_issued", s.Invoices.PaymentNoticeForInvoice)
}

// invoiceAction serves a POST on the path's invoice with an empty (or no)
// body: act runs on it, the event is counted and the resulting invoice is
// the 201 answer.
func (s *Server) invoiceAction(w http.ResponseWriter, r *http.Request, event string, act func(context.Context, app.Claim, app.Principal, string) (invoices.Document, error)) error {
	var req struct{}
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	inv, err := act(r.Context(), claimOf(r), principalOf(r), r.PathValue("invoice_id"))
	return writeIssued(s, w, s.Invoices.Response, inv, err, event)
}

func (s *Server) collectionPaymentNotice(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		CustomerID *string `json:"customer_id"`
	}
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	inv, err := s.Invoices.PaymentNoticeForCollection(r.Context(), claimOf(r), principalOf(r), r.PathValue("collection_id"), deref(req.CustomerID))
	return writeIssued(s, w, s.Invoices.Response, inv, err, "payment_notice_issued")
}

// download serves a generated file as an attachment named after the
// document number; the identifier in the path is the credential.
func (s *Server) download(format, ext string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		f, err := s.Invoices.Download(r.Context(), r.PathValue("invoice_id"), r.PathValue("identifier"), format)
		if err != nil {
			return err
		}
		h := w.Header()
		h.Set("Content-Type", f.ContentType)
		h.Set("Content-Disposition", `attachment; filename="`+f.Name+ext+`"`)
		h.Set("Cache-Control", "private, max-age=3600")
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(f.Body)
		return nil
	}
}

// getDeliveries is the delivery log of a document (docs/invoicing.md,
// "Delivery to the buyer").
func (s *Server) getDeliveries(w http.ResponseWriter, r *http.Request) error {
	out, err := s.Delivery.Deliveries(r.Context(), principalOf(r), r.PathValue("invoice_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// resendInvoice sends a document to its buyer once more: 202 with the new
// delivery, whose attempts follow in the background.
func (s *Server) resendInvoice(w http.ResponseWriter, r *http.Request) error {
	var req struct{}
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	out, err := s.Delivery.Resend(r.Context(), claimOf(r), principalOf(r), r.PathValue("invoice_id"))
	if err != nil {
		return err
	}
	s.Metrics.Event("invoice_resent", out.Environment, 1)
	writeJSON(w, http.StatusAccepted, out)
	return nil
}
