package httpapi

import (
	"net/http"

	"github.com/farebox/farebox/internal/app/books"
)

// The books (docs/books.md): the audit log and cancellation receipts.

// getAuditLog lists the audit log of the caller's account and
// environment, newest first (docs/lists.md conventions).
func (s *Server) getAuditLog(w http.ResponseWriter, r *http.Request) error {
	q, lr, err := listQuery("httpapi.getAuditLog", r, "object_id")
	if err != nil {
		return err
	}
	out, err := s.Books.AuditLog(r.Context(), principalOf(r), books.AuditRequest{ListRequest: lr, ObjectID: optional(q, "object_id")})
	return writeResult(w, http.StatusOK, out, err)
}

// getCancellationReceipt answers a subscription's cancellation receipt.
func (s *Server) getCancellationReceipt(w http.ResponseWriter, r *http.Request) error {
	out, err := s.Books.CancellationReceipt(r.Context(), principalOf(r), r.PathValue("subscription_id"))
	return writeResult(w, http.StatusOK, out, err)
}

// getCancellationReceiptPDF answers the receipt as a PDF.
func (s *Server) getCancellationReceiptPDF(w http.ResponseWriter, r *http.Request) error {
	b, name, err := s.Books.CancellationReceiptPDF(r.Context(), principalOf(r), r.PathValue("subscription_id"))
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}
