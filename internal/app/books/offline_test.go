package books

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/invoicing"
)

// offlineBed is what a partner holds of a chain of five entries:
// checkpoints at 3 and 5 entries, the key, an inclusion proof of entry 2
// at 3 and the consistency proof 3 → 5, made as the API makes them.
type offlineBed struct {
	signer  Signer
	entries []invoicing.ChainEntry
	lh      []hash
	x       Export
}

var offlineAt = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)

func newOfflineBed(t *testing.T) *offlineBed {
	t.Helper()
	s, err := FileSigner(filepath.Join(t.TempDir(), KeyFile), true)
	if err != nil {
		t.Fatal(err)
	}
	b := &offlineBed{signer: s}
	prev := genesis
	for i := int64(1); i <= 5; i++ {
		e := invoicing.ChainEntry{AccountID: "acc", Environment: account.Live, Seq: i, Kind: KindInvoice, RecordID: fmt.Sprint("inv-", i),
			RecordHash: strings.Repeat("ab", 32), PrevHash: prev, CreatedAt: offlineAt}
		e.EntryHash = entryHash(e)
		l, err := entryLeaf(e.EntryHash)
		if err != nil {
			t.Fatal(err)
		}
		b.entries, b.lh, prev = append(b.entries, e), append(b.lh, l), e.EntryHash
	}
	b.x.Checkpoints = []CheckpointJSON{b.sign(t, 3, 1, offlineAt), b.sign(t, 5, 2, offlineAt.Add(time.Hour))}
	b.x.Keys = []BooksKeyJSON{{Object: "books_key", KeyID: s.KeyID(), Algorithm: "Ed25519", PublicKey: base64.StdEncoding.EncodeToString(s.Public())}}
	b.x.Inclusion = []InclusionProofJSON{b.inclusion(1, 3)}
	fh, sh := treeHash(b.lh[:3]), treeHash(b.lh)
	b.x.Consistency = []ConsistencyProofJSON{{Object: "books_consistency_proof", AccountID: "acc", Environment: "live", First: 3, Second: 5,
		FirstTreeHash: hex.EncodeToString(fh[:]), SecondTreeHash: hex.EncodeToString(sh[:]), ConsistencyPath: hexHashes(consistencyPath(3, b.lh))}}
	return b
}

// sign is the checkpoint of the first size entries with counter n.
func (b *offlineBed) sign(t *testing.T, size, n int64, at time.Time) CheckpointJSON {
	t.Helper()
	root := treeHash(b.lh[:size])
	c := invoicing.Checkpoint{AccountID: "acc", Environment: account.Live, TreeSize: size, HeadHash: b.entries[size-1].EntryHash,
		TreeHash: hex.EncodeToString(root[:]), SignedAt: at, Counter: n, KeyID: b.signer.KeyID()}
	sig, err := b.signer.Sign(checkpointMessage(c))
	if err != nil {
		t.Fatal(err)
	}
	c.Signature = base64.StdEncoding.EncodeToString(sig)
	return checkpointView(c)
}

func (b *offlineBed) inclusion(index, size int64) InclusionProofJSON {
	root := treeHash(b.lh[:size])
	return InclusionProofJSON{Object: "books_inclusion_proof", AccountID: "acc", Environment: "live", TreeSize: size,
		TreeHash: hex.EncodeToString(root[:]), LeafIndex: index, Entry: entryView(b.entries[index]),
		AuditPath: hexHashes(inclusionPath(int(index), b.lh[:size]))}
}

// TestVerifyExport: what a partner holds verifies clean, and each change
// an attacker without the books key could make to it is named.
func TestVerifyExport(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, b *offlineBed)
		want   map[string]int
	}{
		{"clean", func(*testing.T, *offlineBed) {}, map[string]int{}},
		{"another key under the key id", func(t *testing.T, b *offlineBed) {
			other, _ := FileSigner(filepath.Join(t.TempDir(), KeyFile), true)
			b.x.Keys[0].PublicKey = base64.StdEncoding.EncodeToString(other.Public())
		}, map[string]int{"key_mismatch": 1, "checkpoint_unknown_key": 2}},
		{"a checkpoint's tree hash changed", func(t *testing.T, b *offlineBed) {
			b.x.Checkpoints[1].TreeHash = strings.Repeat("0", 64)
		}, map[string]int{"checkpoint_bad_signature": 1, "proof_invalid": 1}},
		{"a forked checkpoint signed with the key", func(t *testing.T, b *offlineBed) {
			b.entries[2].RecordHash = strings.Repeat("cd", 32)
			b.entries[2].EntryHash = entryHash(b.entries[2])
			b.lh[2], _ = entryLeaf(b.entries[2].EntryHash)
			b.x.Checkpoints = append(b.x.Checkpoints, b.sign(t, 3, 3, offlineAt.Add(2*time.Hour)))
		}, map[string]int{"checkpoint_fork": 1, "checkpoint_order": 1, "proof_invalid": 2}}, // both proofs end in the forked tree of 3
		{"a later counter dated earlier", func(t *testing.T, b *offlineBed) {
			b.x.Checkpoints[1] = b.sign(t, 5, 2, offlineAt.Add(-time.Hour))
		}, map[string]int{"checkpoint_order": 1}},
		{"the same checkpoint id twice, differently", func(t *testing.T, b *offlineBed) {
			b.x.Checkpoints = append(b.x.Checkpoints, b.sign(t, 4, 2, offlineAt.Add(time.Hour)))
		}, map[string]int{"checkpoint_conflict": 1}},
		{"a proof at a size no checkpoint signed", func(t *testing.T, b *offlineBed) {
			b.x.Inclusion = append(b.x.Inclusion, b.inclusion(3, 4))
		}, map[string]int{"proof_unanchored": 1}},
		{"the proven entry changed", func(t *testing.T, b *offlineBed) {
			b.x.Inclusion[0].Entry.RecordID = "inv-forged"
		}, map[string]int{"entry_changed": 1}},
		{"the audit path changed", func(t *testing.T, b *offlineBed) {
			b.x.Inclusion[0].AuditPath[0] = strings.Repeat("1", 64)
		}, map[string]int{"proof_invalid": 1}},
		{"a consistency proof cut short", func(t *testing.T, b *offlineBed) {
			b.x.Consistency[0].ConsistencyPath = b.x.Consistency[0].ConsistencyPath[1:]
		}, map[string]int{"proof_invalid": 1}},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			b := newOfflineBed(t)
			c.change(t, b)
			rep := VerifyExport(b.x)
			got := map[string]int{}
			for _, f := range rep.Findings {
				got[f.Kind]++
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("findings %v, want %v: %+v", got, c.want, rep.Findings)
			}
		})
	}
}

// TestReadExport: the values of a file are told by their object; a value
// of another kind, a list of other objects or broken JSON is an error
// naming the value.
func TestReadExport(t *testing.T) {
	x, err := ReadExport(strings.NewReader(`{"object":"books_checkpoint","id":"k.1"}` + "\n" +
		`{"object":"list","data":[{"object":"books_checkpoint","id":"k.2"}],"has_more":false,"keys":[{"object":"books_key","key_id":"k"}]}` +
		`{"object":"books_consistency_proof","first":1,"second":2}`))
	if err != nil || len(x.Checkpoints) != 2 || len(x.Keys) != 1 || len(x.Consistency) != 1 || len(x.Inclusion) != 0 {
		t.Errorf("read %+v %v", x, err)
	}
	for in, want := range map[string]string{
		`{"object":"audit_entry"}`:                            "value 1: object \"audit_entry\"",
		`{"object":"list","data":[{"object":"audit_entry"}]}`: "value 1: a list of \"audit_entry\"",
		`{"object":"books_checkpoint"} {"object":`:            "value 2:",
	} {
		if _, err := ReadExport(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}
