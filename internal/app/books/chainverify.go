package books

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
)

// chainPage is how many entries (and their records) verify holds at once.
const chainPage = 500

// unchainedLimit caps the record_not_chained findings of one run.
const unchainedLimit = 1000

type chainKey struct {
	accountID string
	env       account.Environment
}

func (k chainKey) String() string { return k.accountID + "/" + string(k.env) }

// verifyChains walks every chain (entries, links, records, head), then
// checks the checkpoints, stored and given, against what it walked, and
// lists the records missing from every chain.
func (b *Books) verifyChains(ctx context.Context, q Queries, o VerifyOptions, rep *Report) error {
	heads, err := q.ChainHeads(ctx)
	if err != nil {
		return err
	}
	cps, err := b.gatherCheckpoints(ctx, q, o, rep)
	if err != nil {
		return err
	}
	pubs, err := b.checkpointKeys(ctx, q, o, cps, rep)
	if err != nil {
		return err
	}
	chains := map[chainKey]*invoicing.ChainHead{}
	for i := range heads {
		chains[chainKey{heads[i].AccountID, heads[i].Environment}] = &heads[i]
	}
	for k := range cps {
		if chains[k] == nil {
			chains[k] = &invoicing.ChainHead{AccountID: k.accountID, Environment: k.env, Size: -1}
		}
	}
	keys := make([]chainKey, 0, len(chains))
	for k := range chains {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	links := cancellations{}
	for _, k := range keys {
		w := chainWalk{key: k, need: map[int64]string{}, trees: map[int64]string{}, links: links}
		for _, c := range cps[k] {
			w.need[c.TreeSize] = ""
		}
		if err := w.run(ctx, q, rep); err != nil {
			return err
		}
		w.checkHead(*chains[k], rep)
		for _, c := range cps[k] {
			w.checkCheckpoint(c, pubs[c.KeyID], rep)
		}
	}
	links.check(rep)
	refs, before, err := q.UnchainedRecords(ctx, unchainedLimit)
	rep.BeforeChain = before
	for _, r := range refs {
		rep.add("record_not_chained", "%s %s is in the books but in no chain (inserted past Append, or its entry was deleted)", r.Kind, r.RecordID)
	}
	return err
}

func (rep *Report) add(kind, format string, args ...any) {
	rep.Findings = append(rep.Findings, Finding{Kind: kind, Text: fmt.Sprintf(format, args...)})
}

// gatherCheckpoints are the stored and the given checkpoints by chain
// (each once), after checking the signature counters: every counter of a
// key from 1 to its last value must be stored, a given checkpoint must be
// stored, and a given one must equal the stored one of its counter.
func (b *Books) gatherCheckpoints(ctx context.Context, q Queries, o VerifyOptions, rep *Report) (map[chainKey][]invoicing.Checkpoint, error) {
	stored, last, err := q.Checkpoints(ctx)
	if err != nil {
		return nil, err
	}
	type id struct {
		key     string
		counter int64
	}
	byID := map[id]invoicing.Checkpoint{}
	out := map[chainKey][]invoicing.Checkpoint{}
	for _, c := range stored {
		byID[id{c.KeyID, c.Counter}] = c
		out[chainKey{c.AccountID, c.Environment}] = append(out[chainKey{c.AccountID, c.Environment}], c)
	}
	for key, n := range last {
		for i := int64(1); i <= n; i++ {
			if _, ok := byID[id{key, i}]; !ok {
				rep.add("checkpoint_missing", "checkpoint #%d of books key %s was signed but is not stored (deleted)", i, key)
			}
		}
	}
	for _, j := range o.Checkpoints {
		c := j.checkpoint()
		s, ok := byID[id{c.KeyID, c.Counter}]
		switch {
		case !ok:
			rep.add("checkpoint_missing", "checkpoint #%d of books key %s (%s, size %d) from the file is not stored (deleted)",
				c.Counter, c.KeyID, chainKey{c.AccountID, c.Environment}, c.TreeSize)
		case !sameCheckpoint(s, c):
			rep.add("checkpoint_conflict", "checkpoint #%d of books key %s differs from the stored one (the file's: %s size %d head %s; stored: %s size %d head %s)",
				c.Counter, c.KeyID, chainKey{c.AccountID, c.Environment}, c.TreeSize, c.HeadHash, chainKey{s.AccountID, s.Environment}, s.TreeSize, s.HeadHash)
		default:
			continue
		}
		out[chainKey{c.AccountID, c.Environment}] = append(out[chainKey{c.AccountID, c.Environment}], c)
	}
	return out, nil
}

// chainWalk walks one chain in position order.
type chainWalk struct {
	key   chainKey
	links cancellations
	need  map[int64]string // the entry hash at each checkpointed size
	trees map[int64]string // the Merkle tree hash at each checkpointed size
	tree  frontier         // the Merkle tree of the entries seen
	size  int64            // the last position seen
	prev  string           // the stored hash of the last entry seen
}

func (w *chainWalk) run(ctx context.Context, q Queries, rep *Report) error {
	rep.Chains++
	w.prev = genesis
	for {
		entries, err := q.ChainEntries(ctx, w.key.accountID, w.key.env, w.size, chainPage)
		if err != nil {
			return err
		}
		recs, err := q.ChainRecords(ctx, entries)
		if err != nil {
			return err
		}
		for _, e := range entries {
			w.entry(e, recs, rep)
		}
		if len(entries) < chainPage {
			return nil
		}
	}
}

// entry checks one entry: its position, its link to the one before, its
// own hash and its record.
func (w *chainWalk) entry(e invoicing.ChainEntry, recs invoicing.ChainRecords, rep *Report) {
	rep.Entries++
	switch {
	case e.Seq != w.size+1:
		rep.add("entry_missing", "chain %s: entries %d to %d are missing (deleted)", w.key, w.size+1, e.Seq-1)
	case e.PrevHash != w.prev:
		rep.add("chain_broken", "chain %s: entry %d (%s %s) does not follow entry %d (deleted, inserted or reordered entries)",
			w.key, e.Seq, e.Kind, e.RecordID, e.Seq-1)
	}
	if entryHash(e) != e.EntryHash {
		rep.add("entry_changed", "chain %s: entry %d (%s %s) was changed after it was written", w.key, e.Seq, e.Kind, e.RecordID)
	}
	w.size, w.prev = e.Seq, e.EntryHash
	if l, err := entryLeaf(e.EntryHash); err == nil {
		w.tree.push(l)
	}
	if _, ok := w.need[e.Seq]; ok {
		w.need[e.Seq] = e.EntryHash
		r := w.tree.root()
		w.trees[e.Seq] = hex.EncodeToString(r[:])
	}
	checkRecord(w.key, e, recs, rep)
	if inv, ok := recs.Invoices[e.RecordID]; ok && e.Kind == KindInvoice {
		w.links.add(inv)
	}
}

// cancellations pair the one mutable column of the books, an invoice's
// cancelled_by (outside its record hash), with the chained cancellation
// that refers to it, by invoice id.
type cancellations map[string]*cancelPair

type cancelPair struct {
	chained      bool   // the invoice is chained (not from before the chain)
	cancelledBy  string // its cancelled_by
	cancellation string // the chained cancellation referring to it
}

func (c cancellations) add(inv invoicing.Invoice) {
	pair := func(id string) *cancelPair {
		if c[id] == nil {
			c[id] = &cancelPair{}
		}
		return c[id]
	}
	p := pair(inv.ID)
	p.chained = true
	if inv.CancelledBy != nil {
		p.cancelledBy = *inv.CancelledBy
	}
	if inv.Kind == invoicedoc.KindCancellation && inv.RefersTo != nil {
		pair(*inv.RefersTo).cancellation = inv.ID
	}
}

// check reports every chained invoice whose cancelled_by is not the
// chained cancellation that refers to it.
func (c cancellations) check(rep *Report) {
	ids := make([]string, 0, len(c))
	for id := range c {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if p := c[id]; p.chained && p.cancelledBy != p.cancellation {
			rep.add("cancellation_mismatch", "invoice %s: cancelled_by is %q, the chained cancellation referring to it is %q", id, p.cancelledBy, p.cancellation)
		}
	}
}

// checkRecord recomputes the record hash (and the commitment) of an
// entry's record as it is stored now.
func checkRecord(k chainKey, e invoicing.ChainEntry, recs invoicing.ChainRecords, rep *Report) {
	var got, name string
	var present bool
	switch e.Kind {
	case KindInvoice:
		inv, ok := recs.Invoices[e.RecordID]
		present, name = ok, "invoice "+inv.Number+" ("+e.RecordID+")"
		if ok {
			got, _ = invoiceHash(inv)
			checkCommitment(name, e, inv, recs, rep)
		}
	case KindFile:
		f, ok := recs.Files[e.RecordID]
		present, name = ok, f.Format+" file of "+f.Number+" ("+e.RecordID+")"
		if ok {
			sum := sha256.Sum256(f.Body)
			got = fileHash(f.InvoiceID, f.Format, hex.EncodeToString(sum[:]))
		}
	case KindAudit:
		a, ok := recs.Audit[e.RecordID]
		present, name = ok, "audit entry "+e.RecordID
		if ok {
			got, _ = auditHash(a)
		}
	case KindReceipt:
		r, ok := recs.Receipts[e.RecordID]
		present, name = ok, "cancellation receipt "+e.RecordID
		if ok {
			got = receiptHash(r)
		}
	default:
		rep.add("entry_changed", "chain %s: entry %d has an unknown kind %q", k, e.Seq, e.Kind)
		return
	}
	switch {
	case !present:
		rep.add("record_missing", "chain %s: entry %d: %s %s was deleted", k, e.Seq, e.Kind, e.RecordID)
	case got != e.RecordHash:
		rep.add("record_changed", "chain %s: entry %d: %s differs from the record chained at %s", k, e.Seq, name,
			e.CreatedAt.Format("2006-01-02T15:04:05Z07:00"))
	}
}

// checkCommitment checks an invoice's personal fields against the
// entry's commitment: with its salt, they must hash to it; without
// (erased), they must be gone too.
func checkCommitment(name string, e invoicing.ChainEntry, inv invoicing.Invoice, recs invoicing.ChainRecords, rep *Report) {
	salt, has := recs.Salts[invoicing.ChainRef{Kind: e.Kind, RecordID: e.RecordID}]
	p := personal(inv.Document)
	switch {
	case e.Commitment == "" && p != nil:
		rep.add("record_changed", "%s: personal fields (buyer, split names) were added after it was chained", name)
	case e.Commitment == "":
	case !has && p != nil:
		rep.add("salt_missing", "%s: the salt of its personal fields' commitment was deleted, the fields were not erased", name)
	case !has:
		rep.Erased++
	default:
		if c, _ := commitment(inv.Document, salt); c != e.Commitment {
			rep.add("record_changed", "%s: its buyer or split names differ from the ones chained", name)
		}
	}
}

// checkHead compares the stored head with the walked chain.
func (w *chainWalk) checkHead(h invoicing.ChainHead, rep *Report) {
	switch {
	case h.Size < 0 && w.size > 0:
		rep.add("head_mismatch", "chain %s has %d entries but no head (deleted)", w.key, w.size)
	case h.Size >= 0 && (h.Size != w.size || (w.size > 0 && h.HeadHash != w.prev)):
		rep.add("head_mismatch", "chain %s: the head says %d entries, the chain has %d (entries deleted or added past Append)",
			w.key, h.Size, w.size)
	}
}

// checkCheckpoint checks a checkpoint's signature with pub, the public
// key of its key id (nil: none known), and that the chain still holds
// its size and head.
func (w *chainWalk) checkCheckpoint(c invoicing.Checkpoint, pub ed25519.PublicKey, rep *Report) {
	rep.Checkpoints++
	switch {
	case pub == nil:
		rep.add("checkpoint_unknown_key", "checkpoint #%d of chain %s is signed by books key %s, which neither the books key given nor books_keys holds",
			c.Counter, w.key, c.KeyID)
	case !checkSignature(c, pub):
		rep.add("checkpoint_bad_signature", "checkpoint #%d of chain %s: the signature does not verify (forged or changed)", c.Counter, w.key)
	}
	switch {
	case w.size < c.TreeSize:
		rep.add("chain_truncated", "chain %s has %d entries, checkpoint #%d signed at %s holds %d: entries %d to %d were removed",
			w.key, w.size, c.Counter, c.SignedAt.Format("2006-01-02T15:04:05Z07:00"), c.TreeSize, w.size+1, c.TreeSize)
	case w.need[c.TreeSize] != c.HeadHash:
		rep.add("checkpoint_mismatch", "chain %s: entry %d is not the one checkpoint #%d signed (the chain up to it was rewritten)",
			w.key, c.TreeSize, c.Counter)
	case c.TreeHash != "" && w.trees[c.TreeSize] != c.TreeHash:
		rep.add("checkpoint_mismatch", "chain %s: the Merkle tree of its first %d entries is not the one checkpoint #%d signed",
			w.key, c.TreeSize, c.Counter)
	}
}

func sameCheckpoint(a, b invoicing.Checkpoint) bool {
	return a.AccountID == b.AccountID && a.Environment == b.Environment && a.TreeSize == b.TreeSize && a.HeadHash == b.HeadHash &&
		a.TreeHash == b.TreeHash &&
		a.SignedAt.Equal(b.SignedAt) && a.Signature == b.Signature
}
