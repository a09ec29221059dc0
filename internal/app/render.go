package app

import (
	"github.com/farebox/farebox/internal/invoice"
	"github.com/farebox/farebox/internal/invoice/pdf"
	"github.com/farebox/farebox/internal/invoice/xrechnung"
	"github.com/farebox/farebox/internal/store"
)

// Content types of the downloads.
const (
	ContentTypePDF = "application/pdf"
	ContentTypeXML = "application/xml"
)

// RenderFiles produces a document's files in the order docs/invoicing.md
// prescribes: CII first, so the PDF embeds exactly the bytes served as
// .cii.xml.
func RenderFiles(d *invoice.Document, electronic bool) ([]store.File, error) {
	var out []store.File
	var cii []byte
	if electronic {
		var err error
		if cii, err = xrechnung.EncodeCII(d); err != nil {
			return nil, err
		}
		ubl, err := xrechnung.EncodeUBL(d)
		if err != nil {
			return nil, err
		}
		out = append(out, store.File{Format: FormatCII, ContentType: ContentTypeXML, Body: cii},
			store.File{Format: FormatUBL, ContentType: ContentTypeXML, Body: ubl})
	}
	p, err := pdf.Render(d, cii)
	if err != nil {
		return nil, err
	}
	return append(out, store.File{Format: FormatPDF, ContentType: ContentTypePDF, Body: p}), nil
}
