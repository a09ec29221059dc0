package books

import (
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
)

// The books for outsiders (docs/books.md "Export" and "Proofs"): a
// partner's key reads its own account's and environment's chain only.

// BooksKeyJSON is the public key of a books key that signed checkpoints.
type BooksKeyJSON struct {
	Object    string `json:"object"`
	KeyID     string `json:"key_id"`
	Algorithm string `json:"algorithm"`
	PublicKey string `json:"public_key"` // base64 of the raw 32-byte Ed25519 key
}

// CheckpointListJSON is GET /v1/books/checkpoints.json: a page of the
// checkpoints, newest first, and the public keys that signed them.
// farebox books verify --checkpoints takes it as it is.
type CheckpointListJSON struct {
	Object  string           `json:"object"`
	Data    []CheckpointJSON `json:"data"`
	HasMore bool             `json:"has_more"`
	Keys    []BooksKeyJSON   `json:"keys"`
}

// CheckpointsRequest is the list's query as sent (docs/lists.md): the
// cursors are checkpoint ids, created[…] bounds signed_at.
type CheckpointsRequest struct{ kit.ListRequest }

// ExportCheckpoints lists the signed checkpoints of p's chain, newest
// (largest) first, with the public keys of the keys that signed them.
func (b *Books) ExportCheckpoints(ctx context.Context, p account.Principal, req CheckpointsRequest) (CheckpointListJSON, error) {
	var l kit.ListParams
	q := b.DB.Read()
	f := invoicing.CheckpointFilter{Query: list.Query{AccountID: p.AccountID, Environment: p.Environment, Limit: l.Limit(req.Limit),
		CreatedGTE: l.Timestamp("created[gte]", req.CreatedGTE), CreatedLT: l.Timestamp("created[lt]", req.CreatedLT)}}
	err := l.Cursors(req.ListRequest, "checkpoint", " (a checkpoint id is <key id>.<counter>)", func(field, id string) (bool, error) {
		key, n, ok := strings.Cut(id, ".")
		counter, err := strconv.ParseInt(n, 10, 64)
		if !ok || err != nil || counter < 1 {
			return false, nil
		}
		c, ok, err := q.ChainCheckpoint(ctx, p.AccountID, p.Environment, key, counter)
		if field == "starting_after" {
			f.AfterSize = c.TreeSize
		} else {
			f.BeforeSize = c.TreeSize
		}
		return ok, err
	})
	if err != nil {
		return CheckpointListJSON{}, err
	}
	if err := l.Err("books.ExportCheckpoints"); err != nil {
		return CheckpointListJSON{}, err
	}
	page, err := q.ChainCheckpoints(ctx, f)
	if err != nil {
		return CheckpointListJSON{}, err
	}
	out := CheckpointListJSON{Object: "list", Data: make([]CheckpointJSON, len(page.Items)), HasMore: page.HasMore, Keys: []BooksKeyJSON{}}
	var ids []string
	for i, c := range page.Items {
		out.Data[i] = checkpointView(c)
		if !slices.Contains(ids, c.KeyID) {
			ids = append(ids, c.KeyID)
		}
	}
	keys, err := q.BooksKeys(ctx, ids)
	for _, id := range slices.Sorted(maps.Keys(keys)) {
		out.Keys = append(out.Keys, BooksKeyJSON{Object: "books_key", KeyID: id, Algorithm: "Ed25519", PublicKey: keys[id]})
	}
	return out, err
}

// ChainEntryJSON is a chain entry as an outsider recomputes its hash
// (docs/books.md "The chain").
type ChainEntryJSON struct {
	AccountID   string    `json:"account_id"`
	Environment string    `json:"environment"`
	Seq         int64     `json:"seq"`
	Kind        string    `json:"kind"`
	RecordID    string    `json:"record_id"`
	RecordHash  string    `json:"record_hash"`
	Commitment  string    `json:"commitment"`
	PrevHash    string    `json:"prev_hash"`
	EntryHash   string    `json:"entry_hash"`
	CreatedAt   time.Time `json:"created_at"` // RFC 3339 with the microseconds the hash covers
}

// InclusionProofJSON is GET /v1/books/proofs/inclusion.json: the audit
// path of a record's entry (leaf index seq-1) in the tree of tree_size
// entries (RFC 9162 §2.1.3).
type InclusionProofJSON struct {
	Object      string         `json:"object"`
	AccountID   string         `json:"account_id"`
	Environment string         `json:"environment"`
	TreeSize    int64          `json:"tree_size"`
	TreeHash    string         `json:"tree_hash"`
	LeafIndex   int64          `json:"leaf_index"`
	Entry       ChainEntryJSON `json:"entry"`
	AuditPath   []string       `json:"audit_path"`
}

// ConsistencyProofJSON is GET /v1/books/proofs/consistency.json: that the
// tree of second entries extends the tree of first (RFC 9162 §2.1.4).
type ConsistencyProofJSON struct {
	Object          string   `json:"object"`
	AccountID       string   `json:"account_id"`
	Environment     string   `json:"environment"`
	First           int64    `json:"first"`
	Second          int64    `json:"second"`
	FirstTreeHash   string   `json:"first_tree_hash"`
	SecondTreeHash  string   `json:"second_tree_hash"`
	ConsistencyPath []string `json:"consistency_path"`
}

// InclusionRequest names a record of the books (Kind: invoice, file,
// audit or receipt; "" is invoice) and the tree size of the proof, as
// sent.
type InclusionRequest struct{ Kind, RecordID, TreeSize string }

// ConsistencyRequest are the two tree sizes, as sent.
type ConsistencyRequest struct{ First, Second string }

// size reads tree size parameter field (a whole number from 1).
func size(l *kit.ListParams, field, v string) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != v {
		l.Bad(field, field+" must be a whole number from 1 (a tree size: the number of entries of a checkpoint)")
	}
	return n
}

// proofLeaves are the leaf hashes of the first n entries of p's chain;
// a chain shorter than n is a problem of field.
func proofLeaves(ctx context.Context, q Queries, p account.Principal, l *kit.ListParams, field string, n int64) ([]hash, error) {
	lh, _, err := chainLeaves(ctx, q, chainKey{p.AccountID, p.Environment}, n)
	if err == nil && int64(len(lh)) < n {
		l.Bad(field, fmt.Sprintf("%s: the chain of this account and environment has %d entries", field, len(lh)))
	}
	return lh, err
}

// InclusionProof proves that a record's entry is in p's chain at a tree
// size.
func (b *Books) InclusionProof(ctx context.Context, p account.Principal, req InclusionRequest) (InclusionProofJSON, error) {
	const op = "books.InclusionProof"
	var l kit.ListParams
	kind := req.Kind
	if kind == "" {
		kind = KindInvoice
	}
	if !slices.Contains([]string{KindInvoice, KindFile, KindAudit, KindReceipt}, kind) {
		l.Bad("kind", "kind must be invoice, file, audit or receipt")
	}
	if req.RecordID == "" {
		l.Bad("record_id", "record_id is required: the id of a record of the books (a file: <invoice id>/<format>)")
	}
	n := size(&l, "tree_size", req.TreeSize)
	if err := l.Err(op); err != nil {
		return InclusionProofJSON{}, err
	}
	q := b.DB.Read()
	e, err := q.ChainEntryOf(ctx, p.AccountID, p.Environment, kind, req.RecordID)
	if err != nil {
		return InclusionProofJSON{}, err
	}
	if e.Seq > n {
		l.Bad("tree_size", fmt.Sprintf("tree_size: the record entered the chain as entry %d, after a tree of %d entries", e.Seq, n))
		return InclusionProofJSON{}, l.Err(op)
	}
	lh, err := proofLeaves(ctx, q, p, &l, "tree_size", n)
	if err != nil {
		return InclusionProofJSON{}, err
	}
	if err := l.Err(op); err != nil {
		return InclusionProofJSON{}, err
	}
	root := treeHash(lh)
	return InclusionProofJSON{Object: "books_inclusion_proof", AccountID: p.AccountID, Environment: string(p.Environment), TreeSize: n,
		TreeHash: hex.EncodeToString(root[:]), LeafIndex: e.Seq - 1, Entry: entryView(e),
		AuditPath: hexHashes(inclusionPath(int(e.Seq-1), lh))}, nil
}

// ConsistencyProof proves that p's chain at size second extends the chain
// at size first.
func (b *Books) ConsistencyProof(ctx context.Context, p account.Principal, req ConsistencyRequest) (ConsistencyProofJSON, error) {
	const op = "books.ConsistencyProof"
	var l kit.ListParams
	first, second := size(&l, "first", req.First), size(&l, "second", req.Second)
	if err := l.Err(op); err != nil {
		return ConsistencyProofJSON{}, err
	}
	if first > second {
		l.Bad("first", "first must not be larger than second")
		return ConsistencyProofJSON{}, l.Err(op)
	}
	lh, err := proofLeaves(ctx, b.DB.Read(), p, &l, "second", second)
	if err != nil {
		return ConsistencyProofJSON{}, err
	}
	if err := l.Err(op); err != nil {
		return ConsistencyProofJSON{}, err
	}
	fh, sh := treeHash(lh[:first]), treeHash(lh)
	return ConsistencyProofJSON{Object: "books_consistency_proof", AccountID: p.AccountID, Environment: string(p.Environment),
		First: first, Second: second, FirstTreeHash: hex.EncodeToString(fh[:]), SecondTreeHash: hex.EncodeToString(sh[:]),
		ConsistencyPath: hexHashes(consistencyPath(int(first), lh))}, nil
}

// entry is the chain entry an outsider was shown.
func (e ChainEntryJSON) entry() invoicing.ChainEntry {
	return invoicing.ChainEntry{AccountID: e.AccountID, Environment: account.Environment(e.Environment), Seq: e.Seq, Kind: e.Kind,
		RecordID: e.RecordID, RecordHash: e.RecordHash, Commitment: e.Commitment, PrevHash: e.PrevHash, EntryHash: e.EntryHash,
		CreatedAt: e.CreatedAt.UTC()}
}

func entryView(e invoicing.ChainEntry) ChainEntryJSON {
	return ChainEntryJSON{AccountID: e.AccountID, Environment: string(e.Environment), Seq: e.Seq, Kind: e.Kind, RecordID: e.RecordID,
		RecordHash: e.RecordHash, Commitment: e.Commitment, PrevHash: e.PrevHash, EntryHash: e.EntryHash, CreatedAt: e.CreatedAt.UTC()}
}
