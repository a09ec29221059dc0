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

// getBooksCheckpoints lists the signed checkpoints of the caller's chain,
// newest first, with the public keys that signed them (docs/books.md
// "Export"): what farebox books verify --checkpoints reads.
func (s *Server) getBooksCheckpoints(w http.ResponseWriter, r *http.Request) error {
	_, lr, err := listQuery("httpapi.getBooksCheckpoints", r)
	if err != nil {
		return err
	}
	out, err := s.Books.ExportCheckpoints(r.Context(), principalOf(r), books.CheckpointsRequest{ListRequest: lr})
	return writeResult(w, http.StatusOK, out, err)
}

// getInclusionProof proves that a record is in the caller's chain at a
// tree size (docs/books.md "Proofs").
func (s *Server) getInclusionProof(w http.ResponseWriter, r *http.Request) error {
	q, err := knownQuery("httpapi.getInclusionProof", r, "kind", "record_id", "tree_size")
	if err != nil {
		return err
	}
	out, err := s.Books.InclusionProof(r.Context(), principalOf(r),
		books.InclusionRequest{Kind: q.Get("kind"), RecordID: q.Get("record_id"), TreeSize: q.Get("tree_size")})
	return writeResult(w, http.StatusOK, out, err)
}

// getConsistencyProof proves that the caller's chain at size second
// extends it at size first (docs/books.md "Proofs").
func (s *Server) getConsistencyProof(w http.ResponseWriter, r *http.Request) error {
	q, err := knownQuery("httpapi.getConsistencyProof", r, "first", "second")
	if err != nil {
		return err
	}
	out, err := s.Books.ConsistencyProof(r.Context(), principalOf(r), books.ConsistencyRequest{First: q.Get("first"), Second: q.Get("second")})
	return writeResult(w, http.StatusOK, out, err)
}
