package books

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/farebox/farebox/internal/invoicing"
)

// Finding is one problem farebox books verify found.
type Finding struct {
	Kind string // number_gap, bad_number, file_hash_mismatch
	Text string
}

// Report is what farebox books verify checked and found.
type Report struct {
	Numbers, Series, Files, Unhashed int
	Findings                         []Finding
}

// verifyPage is how many stored files Verify holds at once.
const verifyPage = 200

// Verify checks every number series for gaps (every number from 1 to the
// series' counter issued) and every stored file against the SHA-256
// recorded when it was written (docs/books.md).
func (b *Books) Verify(ctx context.Context) (Report, error) {
	var rep Report
	q := b.DB.Read()
	numbers, err := q.AllInvoiceNumbers(ctx)
	if err != nil {
		return rep, err
	}
	counters, err := q.InvoiceCounters(ctx)
	if err != nil {
		return rep, err
	}
	rep.Numbers, rep.Series = len(numbers), len(counters)
	gaps, bad := invoicing.Gaps(numbers, counters)
	for _, g := range gaps {
		rep.Findings = append(rep.Findings, Finding{Kind: "number_gap", Text: g.String()})
	}
	for _, n := range bad {
		rep.Findings = append(rep.Findings, Finding{Kind: "bad_number", Text: fmt.Sprintf("number %q belongs to no series", n)})
	}
	afterID, afterFormat := "", ""
	for {
		files, err := q.StoredFiles(ctx, afterID, afterFormat, verifyPage)
		if err != nil {
			return rep, err
		}
		for _, f := range files {
			rep.Files++
			sum := sha256.Sum256(f.Body)
			switch got := hex.EncodeToString(sum[:]); {
			case f.SHA256 == "":
				rep.Unhashed++
			case got != f.SHA256:
				rep.Findings = append(rep.Findings, Finding{Kind: "file_hash_mismatch",
					Text: fmt.Sprintf("%s file of %s (%s): SHA-256 %s, recorded %s", f.Format, f.Number, f.InvoiceID, got, f.SHA256)})
			}
		}
		if len(files) < verifyPage {
			return rep, nil
		}
		afterID, afterFormat = files[len(files)-1].InvoiceID, files[len(files)-1].Format
	}
}
