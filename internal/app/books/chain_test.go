package books_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/money"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// chainBed is a books database holding each kind of record, chained
// (invoice, its PDF, audit entries 0 and 1, a cancellation receipt, an
// invoice without personal fields, its PDF, audit entries 2 and 3), and a
// signed checkpoint of it.
type chainBed struct {
	*testBooks
	signer  books.Signer
	inv     invoicing.Invoice // 380 cents, with a buyer and a split line
	plain   invoicing.Invoice // without personal fields
	audit   []string          // the audit entries' ids, oldest first
	size    int64             // entries in the chain
	exports []books.CheckpointJSON
}

func newChainBed(t testing.TB, engine store.Engine) *chainBed {
	t.Helper()
	b := &chainBed{testBooks: setup(t, engine)}
	var err error
	if b.signer, err = books.FileSigner(filepath.Join(t.TempDir(), books.KeyFile), true); err != nil {
		t.Fatal(err)
	}
	b.inv = b.issue(t, 380, true)
	for i := range 2 {
		b.audit = append(b.audit, b.change(t, i))
	}
	sub := b.subscription(t, "farebox-subscription-1")
	if err := b.store.Write(b.ctx, func(q store.Q) error {
		return b.books.Append(b.ctx, q, books.Cancellation(b.live, sub, "Deutschlandticket", start, start.AddDate(0, 1, 0), start))
	}); err != nil {
		t.Fatal(err)
	}
	b.plain = b.issue(t, 500, false)
	for i := 2; i < 4; i++ {
		b.audit = append(b.audit, b.change(t, i))
	}
	b.size = 9 // two documents with a PDF each, four audit entries, a receipt
	b.checkpoint(t)
	return b
}

// issue appends an issued invoice of gross cents and its PDF, the way
// invoicing does.
func (b *chainBed) issue(t testing.TB, gross int64, personal bool) invoicing.Invoice {
	t.Helper()
	var inv invoicing.Invoice
	err := b.store.Write(b.ctx, func(q store.Q) error {
		var err error
		if inv, err = newInvoice(b.ctx, q, b.testBooks, gross, personal); err != nil {
			return err
		}
		d := inv.Document
		pdf := invoicing.File{Format: "pdf", ContentType: "application/pdf", Body: []byte("%PDF-1.7 " + d.Number)}
		return b.books.Append(b.ctx, q, books.Issued(inv), books.StoredFile(inv, pdf, start))
	})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// change appends an audit entry and returns its id.
func (b *chainBed) change(t testing.TB, i int) string {
	t.Helper()
	err := b.store.Write(b.ctx, func(q store.Q) error {
		return b.books.Append(b.ctx, q, books.ItemChange(b.live, fmt.Sprintf("item-%d", i), invoicing.AuditAssignmentChanged,
			map[string]any{"before": map[string]any{"customer_id": nil}, "after": map[string]any{"customer_id": "cus_1", "n": i}},
			start.Add(time.Duration(i)*time.Minute)))
	})
	if err != nil {
		t.Fatal(err)
	}
	var id string
	if err := b.store.DB().QueryRowContext(b.ctx, `SELECT record_id FROM books_chain WHERE kind = 'audit' ORDER BY seq DESC LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// checkpoint signs a checkpoint and keeps the export, as an operator's
// archive would.
func (b *chainBed) checkpoint(t testing.TB) {
	t.Helper()
	if _, err := b.books.Checkpoint(b.ctx, b.signer); err != nil {
		t.Fatal(err)
	}
	cps, err := b.books.Checkpoints(b.ctx)
	if err != nil || len(cps) == 0 {
		t.Fatalf("checkpoints %+v %v", cps, err)
	}
	b.exports = cps
}

// insider runs statements the way someone with the database's
// credentials would, with the books' triggers out of the way: dropped
// on SQLite, replica mode for the session on PostgreSQL.
func (b *chainBed) insider(t testing.TB, stmts ...string) {
	t.Helper()
	conn, err := b.store.DB().Conn(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pre := []string{`SET session_replication_role = replica`}
	if b.store.Engine() == store.SQLite {
		pre = nil
		for _, tbl := range []string{"invoices", "invoice_files", "audit_log", "cancellation_receipts", "books_chain", "books_checkpoints", "books_salts", "books_keys"} {
			pre = append(pre, `DROP TRIGGER IF EXISTS `+tbl+`_update`, `DROP TRIGGER IF EXISTS `+tbl+`_delete`)
		}
	}
	for _, s := range append(pre, stmts...) {
		if _, err := conn.ExecContext(b.ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if b.store.Engine() == store.Postgres {
		if _, err := conn.ExecContext(b.ctx, `RESET session_replication_role`); err != nil {
			t.Fatal(err)
		}
	}
}

func (b *chainBed) verify(t testing.TB, file bool) books.Report {
	t.Helper()
	o := books.VerifyOptions{Key: b.signer.Public()}
	if file {
		o.Checkpoints = b.exports
	}
	rep, err := b.books.Verify(b.ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// expect fails unless the findings are exactly want's kinds (kind →
// count), each with a text containing every substring of texts.
func expect(t *testing.T, rep books.Report, want map[string]int, texts ...string) {
	t.Helper()
	got := map[string]int{}
	var all []string
	for _, f := range rep.Findings {
		got[f.Kind]++
		all = append(all, f.Kind+": "+f.Text)
	}
	sort.Strings(all)
	joined := strings.Join(all, "\n")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("findings %v, want %v:\n%s", got, want, joined)
	}
	for _, s := range texts {
		if !strings.Contains(joined, s) {
			t.Errorf("no finding names %q:\n%s", s, joined)
		}
	}
}

func sha(b string) string {
	s := sha256.Sum256([]byte(b))
	return hex.EncodeToString(s[:])
}

// TestChainVerifiesClean: untouched books verify clean on both engines,
// with the stored checkpoints and the exported ones, and a signed
// checkpoint covers every chain that grew.
func TestChainVerifiesClean(t *testing.T) {
	storetest.EachEngineWith(t, newChainBed, func(t *testing.T, b *chainBed) {
		rep := b.verify(t, true)
		expect(t, rep, map[string]int{})
		if rep.Chains != 1 || rep.Entries != int(b.size) || rep.Checkpoints != 1 || rep.BeforeChain != 0 {
			t.Errorf("report %+v", rep)
		}
		if cps, err := b.books.Checkpoint(b.ctx, b.signer); err != nil || len(cps) != 0 {
			t.Errorf("a checkpoint of an unchanged chain: %+v %v", cps, err)
		}
		b.change(t, 9)
		cps, err := b.books.Checkpoint(b.ctx, b.signer)
		if err != nil || len(cps) != 1 || cps[0].TreeSize != b.size+1 || cps[0].Counter != 2 || cps[0].KeyID != b.signer.KeyID() {
			t.Fatalf("checkpoint after a change: %+v %v", cps, err)
		}
		expect(t, b.verify(t, true), map[string]int{})
		// Without the key given, the signatures are checked with the
		// public key books_keys recorded, and the report says so.
		rep, err = b.books.Verify(b.ctx, books.VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		expect(t, rep, map[string]int{})
		if fmt.Sprint(rep.KeysFromDatabase) != fmt.Sprint([]string{b.signer.KeyID()}) {
			t.Errorf("keys checked from the database: %v", rep.KeysFromDatabase)
		}
	})
}

// TestVerifyFindsTampering makes each change an insider could make behind
// the triggers (issue 30's table, and the chain's own rows) on both
// engines and expects farebox books verify to name it.
func TestVerifyFindsTampering(t *testing.T) {
	cases := []struct {
		name  string
		do    func(t *testing.T, b *chainBed) []string // statements
		file  bool                                     // verify with the exported checkpoints
		want  map[string]int
		texts func(b *chainBed) []string
	}{
		{name: "amount and document 380 to 38", want: map[string]int{"record_changed": 1},
			do: func(t *testing.T, b *chainBed) []string {
				return []string{`UPDATE invoices SET gross_cents = 38, document = REPLACE(document, '380', '38') WHERE id = '` + b.inv.ID + `'`}
			},
			texts: func(b *chainBed) []string {
				return []string{"invoice " + b.inv.Number + " (" + b.inv.ID + ") differs from the record chained"}
			}},
		{name: "PDF replaced with its sha256", want: map[string]int{"record_changed": 1},
			do: func(t *testing.T, b *chainBed) []string {
				return []string{`UPDATE invoice_files SET body = '%PDF-1.7 forged', sha256 = '` + sha("%PDF-1.7 forged") + `' WHERE invoice_id = '` + b.inv.ID + `'`}
			},
			texts: func(b *chainBed) []string { return []string{"pdf file of " + b.inv.Number} }},
		{name: "audit row edited, another deleted", want: map[string]int{"record_changed": 1, "record_missing": 1},
			do: func(t *testing.T, b *chainBed) []string {
				return []string{`UPDATE audit_log SET detail = '{"after":{"customer_id":"cus_2"}}' WHERE id = '` + b.audit[0] + `'`,
					`DELETE FROM audit_log WHERE id = '` + b.audit[2] + `'`}
			},
			texts: func(b *chainBed) []string {
				return []string{"audit entry " + b.audit[0] + " differs", "audit " + b.audit[2] + " was deleted"}
			}},
		{name: "buyer changed", want: map[string]int{"record_changed": 1},
			do: func(t *testing.T, b *chainBed) []string {
				return []string{`UPDATE invoices SET document = REPLACE(document, 'Erika Mustermann', 'Erika Musterfrau') WHERE id = '` + b.inv.ID + `'`}
			},
			texts: func(b *chainBed) []string {
				return []string{"invoice " + b.inv.Number + " (" + b.inv.ID + "): its buyer or split names differ"}
			}},
		{name: "entry deleted", want: map[string]int{"entry_missing": 1, "record_not_chained": 1, "checkpoint_mismatch": 1},
			do: func(t *testing.T, b *chainBed) []string {
				return []string{`DELETE FROM books_chain WHERE seq = 3`}
			},
			texts: func(b *chainBed) []string {
				return []string{"entries 3 to 3 are missing", "audit " + b.audit[0] + " is in the books but in no chain",
					"the Merkle tree of its first"}
			}},
		{name: "entries reordered", want: map[string]int{"chain_broken": 3, "entry_changed": 2, "checkpoint_mismatch": 1},
			do: func(t *testing.T, b *chainBed) []string {
				return []string{`UPDATE books_chain SET seq = -1 WHERE seq = 3`, `UPDATE books_chain SET seq = 3 WHERE seq = 4`,
					`UPDATE books_chain SET seq = 4 WHERE seq = -1`}
			},
			texts: func(b *chainBed) []string {
				return []string{"entry 3 (audit " + b.audit[1] + ") does not follow entry 2", "the Merkle tree of its first"}
			}},
		{name: "tail truncated, given an older checkpoint", file: true, want: map[string]int{"chain_truncated": 1, "checkpoint_missing": 1},
			do: func(t *testing.T, b *chainBed) []string { return b.truncate(t) },
			texts: func(b *chainBed) []string {
				return []string{fmt.Sprintf("has %d entries, checkpoint #1", b.size-2), fmt.Sprintf("entries %d to %d were removed", b.size-1, b.size)}
			}},
		{name: "checkpoint changed", want: map[string]int{"checkpoint_bad_signature": 1, "checkpoint_mismatch": 1},
			do: func(t *testing.T, b *chainBed) []string {
				return []string{`UPDATE books_checkpoints SET head_hash = '` + sha("x") + `'`}
			},
			texts: func(b *chainBed) []string { return []string{"the signature does not verify"} }},
		{name: "checkpoint tree hash changed", want: map[string]int{"checkpoint_bad_signature": 1, "checkpoint_mismatch": 1},
			do: func(t *testing.T, b *chainBed) []string {
				return []string{`UPDATE books_checkpoints SET tree_hash = '` + sha("x") + `'`}
			},
			texts: func(b *chainBed) []string {
				return []string{"the signature does not verify", "the Merkle tree of its first"}
			}},
		{name: "cancelled_by set without a cancellation", want: map[string]int{"cancellation_mismatch": 1},
			do: func(t *testing.T, b *chainBed) []string {
				return []string{`UPDATE invoices SET cancelled_by = '` + b.plain.ID + `' WHERE id = '` + b.inv.ID + `'`}
			},
			texts: func(b *chainBed) []string {
				return []string{"invoice " + b.inv.ID + ": cancelled_by is \"" + b.plain.ID + "\""}
			}},
		{name: "salt deleted, personal fields kept", want: map[string]int{"salt_missing": 1},
			do: func(t *testing.T, b *chainBed) []string {
				return []string{`DELETE FROM books_salts WHERE record_id = '` + b.inv.ID + `'`}
			},
			texts: func(b *chainBed) []string { return []string{"invoice " + b.inv.Number} }},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			storetest.EachEngineWith(t, newChainBed, func(t *testing.T, b *chainBed) {
				b.insider(t, c.do(t, b)...)
				expect(t, b.verify(t, c.file), c.want, c.texts(b)...)
			})
		})
	}
}

// truncate removes the chain's newest two entries with their audit
// entries and covers the tracks in the database: the head moved back, the
// stored checkpoints and the signature counter gone. Only a checkpoint
// held outside shows it.
func (b *chainBed) truncate(t *testing.T) []string {
	var prev string
	if err := b.store.DB().QueryRowContext(b.ctx, `SELECT entry_hash FROM books_chain WHERE seq = $1`, b.size-2).Scan(&prev); err != nil {
		t.Fatal(err)
	}
	stmts := []string{
		fmt.Sprintf(`DELETE FROM books_chain WHERE seq > %d`, b.size-2),
		`DELETE FROM audit_log WHERE id IN ('` + b.audit[2] + `', '` + b.audit[3] + `')`,
		fmt.Sprintf(`UPDATE books_chain_heads SET size = %d, head_hash = '%s'`, b.size-2, prev),
		`DELETE FROM books_checkpoints`, `DELETE FROM books_signature_counters`,
	}
	return stmts
}

// TestTruncationNeedsAnOutsideCheckpoint: the covered truncation leaves
// nothing in the database to see; that is why checkpoints are exported.
func TestTruncationNeedsAnOutsideCheckpoint(t *testing.T) {
	storetest.EachEngineWith(t, newChainBed, func(t *testing.T, b *chainBed) {
		b.insider(t, b.truncate(t)...)
		expect(t, b.verify(t, false), map[string]int{})
		expect(t, b.verify(t, true), map[string]int{"chain_truncated": 1, "checkpoint_missing": 1})
	})
}

// TestErasedPersonalFieldsVerify: erasing an issued document's personal
// fields (its buyer and split names) together with the salt of their
// commitment, as the end of their retention will, keeps the chain valid.
func TestErasedPersonalFieldsVerify(t *testing.T) {
	storetest.EachEngineWith(t, newChainBed, func(t *testing.T, b *chainBed) {
		d := b.inv.Document
		d.Buyer = nil
		d.Lines = append([]invoicedoc.Line(nil), d.Lines...)
		d.Lines[0].Split = append([]invoicedoc.Share(nil), d.Lines[0].Split...)
		for i := range d.Lines[0].Split {
			d.Lines[0].Split[i].Name = ""
		}
		doc, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		b.insider(t, `DELETE FROM books_salts WHERE record_id = '`+b.inv.ID+`'`,
			`UPDATE invoices SET document = '`+strings.ReplaceAll(string(doc), "'", "''")+`' WHERE id = '`+b.inv.ID+`'`)
		rep := b.verify(t, true)
		expect(t, rep, map[string]int{})
		if rep.Erased != 1 {
			t.Errorf("erased %d, want 1", rep.Erased)
		}
	})
}

// TestConcurrentAppends: two writers appending to one chain at once are
// serialised by the chain's head: every entry follows the one before.
func TestConcurrentAppends(t *testing.T) {
	storetest.EachEngineWith(t, newChainBed, func(t *testing.T, b *chainBed) {
		const each = 15
		var wg sync.WaitGroup
		errs := make(chan error, 2*each)
		for w := range 2 {
			wg.Go(func() {
				for i := range each {
					errs <- b.store.Write(b.ctx, func(q store.Q) error {
						return b.books.Append(b.ctx, q, books.ItemChange(b.live, fmt.Sprintf("twin-%d-%d", w, i), invoicing.AuditAssignmentChanged, nil, start))
					})
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		rep := b.verify(t, true)
		expect(t, rep, map[string]int{})
		if rep.Entries != int(b.size)+2*each {
			t.Errorf("%d entries, want %d", rep.Entries, int(b.size)+2*each)
		}
	})
}

// newInvoice takes the next number of the account's invoice series in q
// and makes an invoice of gross cents for one single ticket: with a buyer
// and the line split with a second passenger when personal is set.
func newInvoice(ctx context.Context, q store.Q, tb *testBooks, gross int64, personal bool) (invoicing.Invoice, error) {
	series := invoicing.Series(tb.live.Environment, invoicedoc.KindInvoice, start)
	n, err := q.NextNumber(ctx, series)
	if err != nil {
		return invoicing.Invoice{}, err
	}
	line := invoicedoc.Line{BillableItemID: fmt.Sprintf("item-%d", n), Name: "Einzelfahrt AB", Quantity: 1, Gross: money.Cents(gross), RateBP: 700, OrderedAt: start}
	d := invoicedoc.Document{Kind: invoicedoc.KindInvoice, Number: invoicing.Number(series, n), IssueDate: start, Lines: []invoicedoc.Line{line}}
	if personal {
		d.Buyer = &invoicedoc.Buyer{AddressLines: []string{"Erika Mustermann", "Hauptstraße 1", "10115 Berlin"}}
		d.Lines[0].Split = []invoicedoc.Share{{Name: "Max Mustermann", Amount: money.Cents(gross / 2)},
			{Name: "Erika Mustermann", Amount: money.Cents(gross - gross/2), Invoiced: true}}
	}
	return invoicing.Invoice{ID: fmt.Sprintf("farebox-invoice-%d", n), AccountID: tb.live.AccountID, Environment: tb.live.Environment,
		Kind: invoicedoc.KindInvoice, Number: d.Number, Identifier: "secret", GrossCents: money.Cents(gross), Document: d, CreatedAt: start}, nil
}
