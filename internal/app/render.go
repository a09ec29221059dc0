package app

import (
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/pdf"
	"github.com/farebox/farebox/internal/invoicedoc/xrechnung"
	"github.com/farebox/farebox/internal/invoicing"
)

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

// RenderPDF renders a document's PDF. Invoices and cancellations of an
// electronic customer embed their CII as the Factur-X attachment; the CII
// encoding is deterministic, so the attachment equals the .cii.xml served
// (whoever rendered it). The PDF's own bytes are not reproducible from one
// render to the next (a review found two renders of one document differ),
// which is why the store keeps the first PDF stored and every download
// serves it (ensurePDF). A payment notice is not an invoice: its PDF embeds
// no Factur-X data (docs/invoicing.md, "Payment notices").
func RenderPDF(d *invoicedoc.Document, electronic bool) (invoicing.File, error) {
	var cii []byte
	if electronic && d.Kind != invoicedoc.KindPaymentNotice {
		var err error
		if cii, err = xrechnung.EncodeCII(d); err != nil {
			return invoicing.File{}, err
		}
	}
	p, err := pdf.Render(d, cii)
	if err != nil {
		return invoicing.File{}, err
	}
	return invoicing.File{Format: FormatPDF, ContentType: ContentTypePDF, Body: p}, nil
}
