package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
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
		c := invoicing.Checkpoint{AccountID: fxAccount, Environment: account.Live, TreeSize: 4, HeadHash: "e4", SignedAt: fxAt, Counter: 1, KeyID: "k1",
			Signature: "sig", TreeHash: "t4"}
		f.write(func(q store.Q) error { return q.InsertCheckpoint(f.ctx, c) })
		if err := s.Write(f.ctx, func(q store.Q) error { return q.InsertCheckpoint(f.ctx, c) }); err == nil {
			t.Error("a second checkpoint with the same key and counter was stored")
		}
		fork := c
		fork.Counter, fork.KeyID, fork.HeadHash = 1, "k2", "e4'"
		if err := s.Write(f.ctx, func(q store.Q) error { return q.InsertCheckpoint(f.ctx, fork) }); apperr.KindOf(err) != apperr.Conflict {
			t.Errorf("a second checkpoint of the chain at size 4 (another key): %v, want a conflict", err)
		}
		if _, err := s.DB().ExecContext(f.ctx, `DELETE FROM books_checkpoints`); err == nil {
			t.Error("deleting a checkpoint was not refused")
		}
		if got, _, err := f.read().Checkpoints(f.ctx); err != nil || !cmp.Equal(got, []invoicing.Checkpoint{c}) {
			t.Errorf("checkpoints = %+v, %v", got, err)
		}
	},
	"LockCheckpointSigning": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var first, after time.Time
		f.write(func(q store.Q) (err error) { first, err = q.LockCheckpointSigning(f.ctx); return err })
		if !first.IsZero() {
			t.Errorf("signing time before any checkpoint = %s", first)
		}
		at := fxAt.Add(1234 * time.Microsecond)
		f.write(func(q store.Q) error {
			if _, err := q.LockCheckpointSigning(f.ctx); err != nil {
				return err
			}
			return q.InsertCheckpoint(f.ctx, invoicing.Checkpoint{AccountID: fxAccount, Environment: account.Live, TreeSize: 1, HeadHash: "e1",
				SignedAt: at, Counter: 1, KeyID: "k1", Signature: "s"})
		})
		f.write(func(q store.Q) (err error) { after, err = q.LockCheckpointSigning(f.ctx); return err })
		if !after.Equal(at) {
			t.Errorf("signing time after a checkpoint = %s, want %s", after, at)
		}
	},
	"RegisterBooksKey": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error { return q.RegisterBooksKey(f.ctx, "k1", "pub1") })
		f.write(func(q store.Q) error { return q.RegisterBooksKey(f.ctx, "k1", "other") })
		if got, err := f.read().BooksKeys(f.ctx, []string{"k1"}); err != nil || got["k1"] != "pub1" {
			t.Errorf("keys %v %v: the first registration must stay", got, err)
		}
		if _, err := s.DB().ExecContext(f.ctx, `DELETE FROM books_keys`); err == nil {
			t.Error("deleting a books key was not refused")
		}
	},
	"BooksKeys": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			return errors.Join(q.RegisterBooksKey(f.ctx, "k1", "pub1"), q.RegisterBooksKey(f.ctx, "k2", "pub2"))
		})
		got, err := f.read().BooksKeys(f.ctx, []string{"k2", "unknown"})
		if err != nil || !cmp.Equal(got, map[string]string{"k2": "pub2"}) {
			t.Errorf("keys %v %v", got, err)
		}
		if got, err := f.read().BooksKeys(f.ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("no keys asked: %v %v", got, err)
		}
	},
	"ChainCheckpoint": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := invoicing.Checkpoint{AccountID: fxAccount, Environment: account.Live, TreeSize: 2, HeadHash: "e2", SignedAt: fxAt, Counter: 5,
			KeyID: "k1", Signature: "s", TreeHash: "t2"}
		f.write(func(q store.Q) error { return q.InsertCheckpoint(f.ctx, c) })
		if got, ok, err := f.read().ChainCheckpoint(f.ctx, fxAccount, account.Live, "k1", 5); err != nil || !ok || !cmp.Equal(got, c) {
			t.Errorf("checkpoint %+v %v %v", got, ok, err)
		}
		for _, other := range []struct {
			acct string
			env  account.Environment
			n    int64
		}{{fxAccount, account.Test, 5}, {fxOther, account.Live, 5}, {fxAccount, account.Live, 6}} {
			if _, ok, err := f.read().ChainCheckpoint(f.ctx, other.acct, other.env, "k1", other.n); err != nil || ok {
				t.Errorf("%+v: found %v %v", other, ok, err)
			}
		}
	},
	"ChainCheckpoints": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var all []invoicing.Checkpoint
		f.write(func(q store.Q) error {
			for i := int64(1); i <= 5; i++ {
				c := invoicing.Checkpoint{AccountID: fxAccount, Environment: account.Live, TreeSize: 10 * i, HeadHash: "h", SignedAt: fxAt.Add(time.Duration(i) * time.Hour),
					Counter: i, KeyID: "k1", Signature: "s", TreeHash: "t"}
				all = append(all, c)
				if err := q.InsertCheckpoint(f.ctx, c); err != nil {
					return err
				}
			}
			other := all[0]
			other.Environment, other.Counter = account.Test, 6
			return q.InsertCheckpoint(f.ctx, other)
		})
		page := func(fl invoicing.CheckpointFilter) ([]int64, bool) {
			fl.AccountID, fl.Environment = fxAccount, account.Live
			p, err := f.read().ChainCheckpoints(f.ctx, fl)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int64
			for _, c := range p.Items {
				sizes = append(sizes, c.TreeSize)
			}
			return sizes, p.HasMore
		}
		q := func(limit int) invoicing.CheckpointFilter {
			return invoicing.CheckpointFilter{Query: list.Query{Limit: limit}}
		}
		if got, more := page(q(2)); fmt.Sprint(got) != "[50 40]" || !more {
			t.Errorf("first page %v %v", got, more)
		}
		after := q(2)
		after.AfterSize = 40
		if got, more := page(after); fmt.Sprint(got) != "[30 20]" || !more {
			t.Errorf("after 40: %v %v", got, more)
		}
		before := q(2)
		before.BeforeSize = 10
		if got, more := page(before); fmt.Sprint(got) != "[30 20]" || !more {
			t.Errorf("before 10: %v %v", got, more)
		}
		lo, hi := fxAt.Add(2*time.Hour), fxAt.Add(4*time.Hour)
		ranged := q(10)
		ranged.CreatedGTE, ranged.CreatedLT = &lo, &hi
		if got, more := page(ranged); fmt.Sprint(got) != "[30 20]" || more {
			t.Errorf("signed in [2h, 4h): %v %v", got, more)
		}
		if got, _ := page(q(10)); len(got) != 5 {
			t.Errorf("the test environment's checkpoint is listed with the live ones: %v", got)
		}
	},
	"ChainEntryOf": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		e := chainEntry(1, "invoice", "inv-1")
		f.write(func(q store.Q) error {
			if _, err := q.LockChainHead(f.ctx, fxAccount, account.Live); err != nil {
				return err
			}
			return q.InsertChainEntry(f.ctx, e, "")
		})
		if got, err := f.read().ChainEntryOf(f.ctx, fxAccount, account.Live, "invoice", "inv-1"); err != nil || !cmp.Equal(got, e) {
			t.Errorf("entry %+v %v", got, err)
		}
		for _, miss := range [][3]string{{fxAccount, "test", "inv-1"}, {fxOther, "live", "inv-1"}, {fxAccount, "live", "inv-2"}} {
			_, err := f.read().ChainEntryOf(f.ctx, miss[0], account.Environment(miss[1]), "invoice", miss[2])
			if e := apperr.As(err); e == nil || e.Kind != apperr.NotFound || e.Code != store.CodeChainEntryNotFound {
				t.Errorf("%v: %v, want chain_entry_not_found", miss, err)
			}
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
