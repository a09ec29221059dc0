package invoices

// Invoice files: rendering and storing an invoice's PDF, UBL and CII, the
// invoice.files_ready event when its set completes, and their downloads
// (docs/invoicing.md).

import (
	"context"
	"crypto/subtle"
	"fmt"
	"github.com/farebox/farebox/internal/app/books"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/pdf"
	"github.com/farebox/farebox/internal/invoicedoc/xrechnung"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/jobs"
)

// Download formats.
const (
	FormatPDF = "pdf"
	FormatUBL = "ubl"
	FormatCII = "cii"
)

// Download returns a generated file. The identifier is the credential: a
// wrong one is NotFound exactly like an unknown invoice. XML of a document
// whose customer has no electronic invoicing is NotFound with its own code;
// XML still being generated is apperr.Accepted (202). The PDF is never
// pending: the interface makes it available with the invoice, so a PDF the
// job has not stored yet is rendered here (ensurePDF).
func (s *Service) Download(ctx context.Context, invoiceID, identifier, format string) (DocumentFile, error) {
	inv, f, err := s.documentFile(ctx, invoiceID, identifier, format)
	if err != nil {
		return DocumentFile{}, err
	}
	return DocumentFile{Name: inv.Number, ContentType: f.ContentType, Body: f.Body}, nil
}

// DocumentFile is a generated file of an invoice document as a download
// answers it.
type DocumentFile struct {
	Name        string // the document number: the attachment's name before its extension
	ContentType string
	Body        []byte
}

// documentFile is Download's document and its stored (or rendered) file.
func (s *Service) documentFile(ctx context.Context, invoiceID, identifier, format string) (invoicing.Invoice, invoicing.File, error) {
	const op = "invoices.Download"
	q := s.DB.Read()
	inv, err := q.InvoiceByID(ctx, invoiceID)
	if err != nil || subtle.ConstantTimeCompare([]byte(inv.Identifier), []byte(identifier)) != 1 {
		return invoicing.Invoice{}, invoicing.File{}, apperr.E(op, apperr.NotFound, CodeNotFound, "no such invoice document")
	}
	if format != FormatPDF && !inv.Electronic {
		return inv, invoicing.File{}, apperr.E(op, apperr.NotFound, CodeElectronicInvoicingNotEnabled,
			"this document has no XRechnung file: its customer was created without electronic_invoicing (or it has no customer); the PDF is available")
	}
	f, err := q.GetFile(ctx, invoiceID, format)
	if apperr.KindOf(err) != apperr.NotFound {
		return inv, f, err
	}
	if format == FormatPDF {
		if f, err = s.ensurePDF(ctx, inv); err != nil && apperr.KindOf(err) != apperr.Unavailable {
			// A document that cannot be rendered is a bug, not the
			// downloader's fault: 503 like a dead job, cause logged.
			err = apperr.E(op, apperr.Unavailable, CodeGenerationFailed,
				"the document could not be generated; the operator has been alerted, retry later").WithCause(err)
		}
		return inv, f, err
	}
	state, serr := q.JobState(ctx, JobFiles, invoiceID)
	if serr != nil {
		return inv, f, serr
	}
	if state == jobs.StateDead {
		return inv, f, apperr.E(op, apperr.Unavailable, CodeGenerationFailed,
			"the document could not be generated; the operator has been alerted, retry later")
	}
	return inv, f, apperr.E(op, apperr.Accepted, CodeGenerationPending,
		"the file is being generated; retry in a few seconds")
}

// ensurePDF returns the stored PDF of inv, rendering and storing it first
// if it is not there yet. Concurrent calls for one invoice in this instance
// share one rendering (single-flight); across instances the store keeps the
// first PDF written (InsertFile inserts only if absent) and every caller gets
// the stored bytes, so all downloads of a document are identical. The
// rendering does not depend on the first caller's request staying open.
func (s *Service) ensurePDF(ctx context.Context, inv invoicing.Invoice) (invoicing.File, error) {
	ctx = context.WithoutCancel(ctx)
	v, err, _ := s.pdfFlight.Do(inv.ID, func() (any, error) {
		f, err := s.DB.Read().GetFile(ctx, inv.ID, FormatPDF)
		if apperr.KindOf(err) != apperr.NotFound {
			return f, err
		}
		s.pdfRuns.Add(1)
		p, err := s.renderPDF(&inv.Document, inv.Electronic)
		if err != nil {
			return invoicing.File{}, err
		}
		stored, err := s.putFiles(ctx, inv, []invoicing.File{p}, s.Clock.Now())
		if err != nil {
			return invoicing.File{}, err
		}
		return stored[0], nil
	})
	if err != nil {
		return invoicing.File{}, err
	}
	return v.(invoicing.File), nil
}

// renderPDF renders with s.PDFRenderer (RenderPDF through s.pdf by
// default). A panic
// while rendering is returned as an error (code pdf_render_failed), never
// passed on: the download answers 503 generation_failed and the files job
// is buried dead with the message, for the operator to see and retry
// (/admin/jobs) once the cause is fixed.
func (s *Service) renderPDF(d *invoicedoc.Document, electronic bool) (f invoicing.File, err error) {
	const op = "invoices.renderPDF"
	defer func() {
		if r := recover(); r != nil {
			err = apperr.E(op, apperr.Internal, pdf.CodeRenderFailed, fmt.Sprintf("rendering the PDF failed: %v", r))
		}
	}()
	if s.PDFRenderer != nil {
		return s.PDFRenderer(d, electronic)
	}
	return RenderPDF(s.pdf, d, electronic)
}

// PDFsRendered is how many PDFs this instance has rendered (downloads and
// jobs together); tests use it to see that a document is rendered once.
func (s *Service) PDFsRendered() int64 { return s.pdfRuns.Load() }

// generateFiles is the JobFiles handler (EnsureFiles). A PDF that fails
// to render fails the same way every time: the job is dead at once, with
// the cause, until the operator retries it.
func (s *Service) generateFiles(ctx context.Context, j jobs.Job) error {
	err := s.EnsureFiles(ctx, j.Payload)
	if ae := apperr.As(err); ae != nil && ae.Code == pdf.CodeRenderFailed {
		return jobs.Permanent(err)
	}
	return err
}

// EnsureFiles stores the files of document id that are not stored yet:
// CII and UBL (electronic customers only), then the PDF through ensurePDF
// (unless a download rendered it first). Files are inserted only if
// absent, so a repeated run is harmless and never replaces bytes already
// served. The files job runs it, and so does a delivery whose attempt
// came before the job (its attachments are the stored files).
func (s *Service) EnsureFiles(ctx context.Context, id string) error {
	q := s.DB.Read()
	inv, err := q.InvoiceByID(ctx, id)
	if err != nil {
		return err
	}
	if have, err := q.FileFormats(ctx, id); err != nil || filesComplete(have, inv.Electronic) {
		return err
	}
	files, err := renderXML(&inv.Document, inv.Electronic)
	if err != nil {
		return err
	}
	if _, err := s.putFiles(ctx, inv, files, s.Clock.Now()); err != nil {
		return err
	}
	_, err = s.ensurePDF(ctx, inv)
	return err
}

// createdEvent is the event a new document of kind k writes.
func createdEvent(k invoicedoc.Kind) event.Type {
	if k == invoicedoc.KindPaymentNotice {
		return event.PaymentNoticeCreated
	}
	return event.InvoiceCreated
}

// filesComplete says whether formats hold every file of an invoice: the
// PDF, and for an electronic invoice UBL and CII.
func filesComplete(formats []string, electronic bool) bool {
	have := map[string]bool{}
	for _, f := range formats {
		have[f] = true
	}
	return have[FormatPDF] && (!electronic || have[FormatUBL] && have[FormatCII])
}

// putFiles stores files of inv (each only if absent) and, in the same
// transaction, writes invoice.files_ready when they complete its set. The
// invoice row lock makes exactly one writer see the set become complete.
func (s *Service) putFiles(ctx context.Context, inv invoicing.Invoice, files []invoicing.File, at time.Time) ([]invoicing.File, error) {
	var out []invoicing.File
	err := s.DB.Write(ctx, func(q Queries) error {
		out = out[:0]
		if err := q.LockInvoice(ctx, inv.ID); err != nil {
			return err
		}
		before, err := q.FileFormats(ctx, inv.ID)
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := s.books.Append(ctx, q, books.StoredFile(inv, f, at)); err != nil {
				return err
			}
			stored, err := q.GetFile(ctx, inv.ID, f.Format)
			if err != nil {
				return err
			}
			out = append(out, stored)
		}
		after, err := q.FileFormats(ctx, inv.ID)
		if err != nil {
			return err
		}
		if filesComplete(before, inv.Electronic) || !filesComplete(after, inv.Electronic) {
			return nil
		}
		ev := s.eventsAt(inv.AccountID, inv.Environment, s.Clock.Now())
		if err := ev.invoice(ctx, q, event.InvoiceFilesReady, inv.ID); err != nil {
			return err
		}
		return ev.write(ctx, q)
	})
	return out, err
}

// Content types of the downloads.
const (
	ContentTypePDF = "application/pdf"
	ContentTypeXML = "application/xml"
)

// renderXML produces the CII and UBL files of a document whose customer has
// electronic invoicing (none otherwise).
func renderXML(d *invoicedoc.Document, electronic bool) ([]invoicing.File, error) {
	if !electronic {
		return nil, nil
	}
	cii, err := xrechnung.EncodeCII(d)
	if err != nil {
		return nil, err
	}
	ubl, err := xrechnung.EncodeUBL(d)
	if err != nil {
		return nil, err
	}
	return []invoicing.File{{Format: FormatCII, ContentType: ContentTypeXML, Body: cii},
		{Format: FormatUBL, ContentType: ContentTypeXML, Body: ubl}}, nil
}

// RenderPDF renders a document's PDF after its turn in q. Invoices and cancellations of an
// electronic customer embed their CII as the Factur-X attachment; the CII
// encoding is deterministic, so the attachment equals the .cii.xml served
// (whoever rendered it). The PDF's own bytes are not reproducible from one
// render to the next (a review found two renders of one document differ),
// which is why the store keeps the first PDF stored and every download
// serves it (ensurePDF). A payment notice is not an invoice: its PDF embeds
// no Factur-X data (docs/invoicing.md, "Payment notices").
func RenderPDF(q *pdf.Queue, d *invoicedoc.Document, electronic bool) (invoicing.File, error) {
	var cii []byte
	if electronic && d.Kind != invoicedoc.KindPaymentNotice {
		var err error
		if cii, err = xrechnung.EncodeCII(d); err != nil {
			return invoicing.File{}, err
		}
	}
	p, err := q.Render(d, cii)
	if err != nil {
		return invoicing.File{}, err
	}
	return invoicing.File{Format: FormatPDF, ContentType: ContentTypePDF, Body: p}, nil
}
