package invoicetest

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// PDFParts reads what software (not a person) sees in a PDF, with pdfcpu:
// the XMP metadata packet of the catalog, the embedded files by name, and
// whether the catalog lists associated files (/AF).
func PDFParts(pdf []byte) (xmp string, files map[string][]byte, af bool, err error) {
	api.DisableConfigDir()
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	ctx, err := api.ReadContext(bytes.NewReader(pdf), conf)
	if err != nil {
		return "", nil, false, err
	}
	cat, err := ctx.Catalog()
	if err != nil {
		return "", nil, false, err
	}
	if o, ok := cat.Find("Metadata"); ok {
		sd, _, err := ctx.DereferenceStreamDict(o)
		if err != nil || sd == nil {
			return "", nil, false, errors.Join(errors.New("unreadable XMP metadata"), err)
		}
		if err := sd.Decode(); err != nil {
			return "", nil, false, err
		}
		xmp = string(sd.Content)
	}
	_, af = cat.Find("AF")
	files = map[string][]byte{}
	aa, err := api.ExtractAttachmentsRaw(bytes.NewReader(pdf), "", nil, conf)
	if err != nil && !strings.Contains(err.Error(), "no attachments available") {
		return "", nil, false, err
	}
	for _, a := range aa {
		b, err := io.ReadAll(a)
		if err != nil {
			return "", nil, false, err
		}
		files[a.FileName] = b
	}
	return xmp, files, af, nil
}
