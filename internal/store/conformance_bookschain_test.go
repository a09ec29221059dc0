package store_test

import (
	"fmt"
	"testing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/store"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceBooksChain(t *testing.T) { booksChainConformance.run(t) }

// chainEntry is the n-th entry of fxAccount's live chain naming record
// (kind, id).
func chainEntry(n int64, kind, id string) invoicing.ChainEntry {
	return invoicing.ChainEntry{AccountID: fxAccount, Environment: account.Live, Seq: n, Kind: kind, RecordID: id,
		RecordHash: fmt.Sprintf("r%d", n), Commitment: "", PrevHash: fmt.Sprintf("e%d", n-1), EntryHash: fmt.Sprintf("e%d", n), CreatedAt: fxAt}
}

// booksChainConformance: bookschain.go (the books' hash chain, its heads
// and signed checkpoints).
var booksChainConformance = conformanceCases{
	"LockChainHead": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var got invoicing.ChainHead
		f.write(func(q store.Q) (err error) { got, err = q.LockChainHead(f.ctx, fxAccount, account.Live); return err })
		if got != (invoicing.ChainHead{AccountID: fxAccount, Environment: account.Live}) {
			t.Errorf("a new chain's head = %+v", got)
		}
		f.write(func(q store.Q) error {
			for n := int64(1); n <= 3; n++ {
				if err := q.InsertChainEntry(f.ctx, chainEntry(n, "audit", fmt.Sprintf("audit-%d", n)), ""); err != nil {
					return err
				}
			}
			return nil
		})
		f.write(func(q store.Q) (err error) { got, err = q.LockChainHead(f.ctx, fxAccount, account.Live); return err })
		if got.Size != 3 || got.HeadHash != "e3" {
			t.Errorf("head after three entries = %+v", got)
		}
		f.write(func(q store.Q) (err error) { got, err = q.LockChainHead(f.ctx, fxAccount, account.Test); return err })
		if got.Size != 0 {
			t.Errorf("the test environment's chain shares the live head: %+v", got)
		}
	},
	"InsertChainEntry": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		e := chainEntry(1, "audit", "audit-1")
		e.Commitment = "c1"
		f.write(func(q store.Q) error {
			if _, err := q.LockChainHead(f.ctx, fxAccount, account.Live); err != nil {
				return err
			}
			return q.InsertChainEntry(f.ctx, e, "salt-1")
		})
		if got, err := f.read().ChainHeads(f.ctx); err != nil || len(got) != 1 || got[0].Size != 1 || got[0].HeadHash != e.EntryHash {
			t.Errorf("the entry did not move the head: %+v, %v", got, err)
		}
		if got, err := f.read().ChainEntries(f.ctx, fxAccount, account.Live, 0, 10); err != nil || !cmp.Equal(got, []invoicing.ChainEntry{e}) {
			t.Errorf("entries = %+v, %v; want %+v", got, err, e)
		}
		if rs, err := f.read().ChainRecords(f.ctx, []invoicing.ChainEntry{e}); err != nil || rs.Salts[invoicing.ChainRef{Kind: "audit", RecordID: "audit-1"}] != "salt-1" {
			t.Errorf("salt = %+v, %v", rs.Salts, err)
		}
		if err := s.Write(f.ctx, func(q store.Q) error { return q.InsertChainEntry(f.ctx, chainEntry(1, "audit", "audit-2"), "") }); err == nil {
			t.Error("a second entry at position 1 was written")
		}
		for _, stmt := range []string{`UPDATE books_chain SET record_hash = 'x'`, `DELETE FROM books_chain`} {
			if _, err := s.DB().ExecContext(f.ctx, stmt); err == nil {
				t.Errorf("%s was not refused", stmt)
			}
		}
	},
	"ChainHeads": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			if _, err := q.LockChainHead(f.ctx, fxAccount, account.Live); err != nil {
				return err
			}
			// An entry of a chain without a head row (deleted).
			e := chainEntry(1, "audit", "audit-1")
			e.AccountID = fxOther
			return q.InsertChainEntry(f.ctx, e, "")
		})
		want := []invoicing.ChainHead{{AccountID: fxAccount, Environment: account.Live}, {AccountID: fxOther, Environment: account.Live, Size: -1}}
		if got, err := f.read().ChainHeads(f.ctx); err != nil || !cmp.Equal(got, want) {
			t.Errorf("heads = %+v, %v; want %+v", got, err, want)
		}
	},
	"ChainEntries": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []invoicing.ChainEntry
		f.write(func(q store.Q) error {
			for n := int64(1); n <= 5; n++ {
				e := chainEntry(n, "audit", fmt.Sprintf("audit-%d", n))
				want = append(want, e)
				if err := q.InsertChainEntry(f.ctx, e, ""); err != nil {
					return err
				}
			}
			other := chainEntry(1, "audit", "audit-test")
			other.Environment = account.Test
			return q.InsertChainEntry(f.ctx, other, "")
		})
		if got, err := f.read().ChainEntries(f.ctx, fxAccount, account.Live, 2, 2); err != nil || !cmp.Equal(got, want[2:4]) {
			t.Errorf("entries after 2, 2 of them = %+v, %v; want %+v", got, err, want[2:4])
		}
	},
	"ChainRecords": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, nil)
		sub := f.subscription(fxAccount, account.Live, "sub-1", fxAt, 0)
		a, r := auditEntry("audit-1", "item-1", fxAt), receiptOf(sub, "rcpt-1")
		f.write(func(q store.Q) error {
			if _, err := q.InsertFile(f.ctx, inv.ID, invoicing.File{Format: "pdf", ContentType: "application/pdf", Body: []byte("%PDF")}, fxAt); err != nil {
				return err
			}
			if err := q.InsertAudit(f.ctx, a); err != nil {
				return err
			}
			return q.InsertReceipt(f.ctx, r)
		})
		entries := []invoicing.ChainEntry{chainEntry(1, "invoice", inv.ID), chainEntry(2, "file", inv.ID+"/pdf"),
			chainEntry(3, "audit", a.ID), chainEntry(4, "receipt", r.ID), chainEntry(5, "audit", "audit-gone")}
		rs, err := f.read().ChainRecords(f.ctx, entries)
		if err != nil || !cmp.Equal(rs.Invoices[inv.ID], inv) || string(rs.Files[inv.ID+"/pdf"].Body) != "%PDF" || rs.Files[inv.ID+"/pdf"].Number != "R-1" ||
			!cmp.Equal(rs.Audit[a.ID], a) || rs.Receipts[r.ID] != r || len(rs.Audit) != 1 {
			t.Errorf("records = %+v, %v", rs, err)
		}
	},
	"UnchainedRecords": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, nil)
		f.invoice(fxAccount, account.Live, "inv-2", "R-2", fxAt, nil)
		f.write(func(q store.Q) error { return q.InsertChainEntry(f.ctx, chainEntry(1, "invoice", "inv-2"), "") })
		refs, before, err := f.read().UnchainedRecords(f.ctx, 10)
		if err != nil || before != 0 || !cmp.Equal(refs, []invoicing.ChainRef{{Kind: "invoice", RecordID: "inv-1"}}) {
			t.Errorf("unchained = %+v, %d, %v", refs, before, err)
		}
	},
	"NextSignatureCounter": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var got []int64
		f.write(func(q store.Q) error {
			for _, key := range []string{"k1", "k1", "k2", "k1"} {
				n, err := q.NextSignatureCounter(f.ctx, key)
				if err != nil {
					return err
				}
				got = append(got, n)
			}
			return nil
		})
		if fmt.Sprint(got) != "[1 2 1 3]" {
			t.Errorf("counters %v", got)
		}
	},
	"InsertCheckpoint": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := invoicing.Checkpoint{AccountID: fxAccount, Environment: account.Live, TreeSize: 4, HeadHash: "e4", SignedAt: fxAt, Counter: 1, KeyID: "k1", Signature: "sig"}
		f.write(func(q store.Q) error { return q.InsertCheckpoint(f.ctx, c) })
		if err := s.Write(f.ctx, func(q store.Q) error { return q.InsertCheckpoint(f.ctx, c) }); err == nil {
			t.Error("a second checkpoint with the same key and counter was stored")
		}
		if _, err := s.DB().ExecContext(f.ctx, `DELETE FROM books_checkpoints`); err == nil {
			t.Error("deleting a checkpoint was not refused")
		}
		if got, _, err := f.read().Checkpoints(f.ctx); err != nil || !cmp.Equal(got, []invoicing.Checkpoint{c}) {
			t.Errorf("checkpoints = %+v, %v", got, err)
		}
	},
	"Checkpoints": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []invoicing.Checkpoint
		f.write(func(q store.Q) error {
			for i := range 3 {
				n, err := q.NextSignatureCounter(f.ctx, "k1")
				if err != nil {
					return err
				}
				c := invoicing.Checkpoint{AccountID: fxAccount, Environment: account.Live, TreeSize: int64(3 - i), HeadHash: "h", SignedAt: fxAt,
					Counter: n, KeyID: "k1", Signature: "s"}
				want = append(want, c)
				if err := q.InsertCheckpoint(f.ctx, c); err != nil {
					return err
				}
			}
			return nil
		})
		got, last, err := f.read().Checkpoints(f.ctx)
		if err != nil || !cmp.Equal(got, want) || last["k1"] != 3 || len(last) != 1 {
			t.Errorf("checkpoints = %+v %v, %v; want %+v", got, last, err, want)
		}
	},
}
