package books

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/farebox/farebox/internal/invoicing"
)

// Finding is one problem farebox books verify found.
type Finding struct {
	// Kind: number_gap, bad_number, file_hash_mismatch; of the chain
	// (docs/books.md): entry_missing, chain_broken, entry_changed,
	// record_missing, record_changed, salt_missing, record_not_chained,
	// head_mismatch, chain_truncated, checkpoint_mismatch,
	// checkpoint_bad_signature, checkpoint_unknown_key, key_mismatch, checkpoint_missing,
	// checkpoint_conflict, cancellation_mismatch.
	Kind string
	Text string
}

// Report is what farebox books verify checked and found.
type Report struct {
	Numbers, Series, Files, Unhashed int
	// Chains, Entries: the chains and entries walked; BeforeChain: the
	// records written before the chain existed (migration 00036), not
	// chained; Erased: entries whose record's personal fields are erased
	// (checked by their commitment); Checkpoints: checkpoints checked.
	Chains, Entries, BeforeChain, Erased, Checkpoints int
	// Proofs: the proofs of an export checked (VerifyExport).
	Proofs int
	// KeysFromDatabase: the books keys (ids) whose checkpoints were
	// checked with the public key books_keys records, not with the one
	// given (keys rotated out; an insider could have added one).
	KeysFromDatabase []string
	Findings         []Finding
}

// VerifyOptions: Key is the books key's public key, held outside the
// database (nil: none given); a checkpoint of another key is checked with
// the public key books_keys recorded for its key id. Checkpoints are checkpoints held outside the database
// (farebox books verify --checkpoints FILE), checked with the stored ones.
type VerifyOptions struct {
	Key         ed25519.PublicKey
	Checkpoints []CheckpointJSON
}

// verifyPage is how many stored files Verify holds at once.
const verifyPage = 200

// Verify checks every number series for gaps (every number from 1 to the
// series' counter issued), every stored file against the SHA-256
// recorded when it was written, every chain and its records and the
// checkpoints (docs/books.md).
func (b *Books) Verify(ctx context.Context, o VerifyOptions) (Report, error) {
	var rep Report
	q := b.DB.Read()
	if err := b.verifyChains(ctx, q, o, &rep); err != nil {
		return rep, err
	}
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
