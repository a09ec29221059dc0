package books

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/farebox/farebox/internal/account"
)

// Export is what someone outside the database holds (docs/books.md
// "Proofs"): signed checkpoints, the public keys that signed them and
// proofs between and into them, as the API answers them.
type Export struct {
	Checkpoints []CheckpointJSON
	Keys        []BooksKeyJSON
	Inclusion   []InclusionProofJSON
	Consistency []ConsistencyProofJSON
}

// ReadExport reads JSON values one after the other (lines or not):
// checkpoints as farebox books checkpoints prints them, pages of GET
// /v1/books/checkpoints.json, and the answers of the two proof routes;
// each is told by its "object".
func ReadExport(r io.Reader) (Export, error) {
	var x Export
	dec := json.NewDecoder(r)
	for n := 1; ; n++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return x, nil
		} else if err != nil {
			return x, fmt.Errorf("value %d: %w", n, err)
		}
		var head struct{ Object string }
		if err := json.Unmarshal(raw, &head); err != nil {
			return x, fmt.Errorf("value %d: %w", n, err)
		}
		var err error
		switch head.Object {
		case "books_checkpoint":
			err = decodeTo(raw, &x.Checkpoints)
		case "list":
			var l CheckpointListJSON
			err = json.Unmarshal(raw, &l)
			for _, c := range l.Data {
				if c.Object != "books_checkpoint" && err == nil {
					err = fmt.Errorf("a list of %q, not of checkpoints", c.Object)
				}
			}
			x.Checkpoints, x.Keys = append(x.Checkpoints, l.Data...), append(x.Keys, l.Keys...)
		case "books_inclusion_proof":
			err = decodeTo(raw, &x.Inclusion)
		case "books_consistency_proof":
			err = decodeTo(raw, &x.Consistency)
		default:
			err = fmt.Errorf("object %q is no checkpoint, checkpoint list or proof of the books", head.Object)
		}
		if err != nil {
			return x, fmt.Errorf("value %d: %w", n, err)
		}
	}
}

// decodeTo decodes raw as one more element of *to.
func decodeTo[T any](raw json.RawMessage, to *[]T) error {
	var v T
	err := json.Unmarshal(raw, &v)
	*to = append(*to, v)
	return err
}

// VerifyExport checks an export without the database: every key is the
// key its id names, every checkpoint is signed by a key of the export,
// the checkpoints of a chain do not fork and each key's counter grows
// with its chains' sizes and times, and every proof holds and ends in a
// signed checkpoint of the export. Findings: key_mismatch,
// checkpoint_unknown_key, checkpoint_bad_signature, checkpoint_conflict,
// checkpoint_fork, checkpoint_order, entry_changed, proof_invalid,
// proof_unanchored.
func VerifyExport(x Export) Report {
	var rep Report
	keys := map[string]ed25519.PublicKey{}
	for _, k := range x.Keys {
		pub, ok := recordedKey(k.KeyID, k.PublicKey)
		if !ok {
			rep.add("key_mismatch", "books key %s: its public key is not the key that id names", k.KeyID)
			continue
		}
		keys[k.KeyID] = pub
	}
	cps := signedCheckpoints(x.Checkpoints, keys, &rep)
	for _, p := range x.Inclusion {
		rep.Proofs++
		checkInclusion(p, cps, &rep)
	}
	for _, p := range x.Consistency {
		rep.Proofs++
		checkConsistency(p, cps, &rep)
	}
	return rep
}

// treeAt names a chain's tree of one size.
type treeAt struct {
	chain chainKey
	size  int64
}

// signedCheckpoints checks the checkpoints (each id once) and returns the
// tree hash of every size they sign, by chain.
func signedCheckpoints(in []CheckpointJSON, keys map[string]ed25519.PublicKey, rep *Report) map[treeAt]CheckpointJSON {
	byID := map[string]CheckpointJSON{}
	var cps []CheckpointJSON
	for _, c := range in {
		id := fmt.Sprintf("%s.%d", c.KeyID, c.Counter)
		if seen, ok := byID[id]; ok {
			if !sameCheckpoint(seen.checkpoint(), c.checkpoint()) {
				rep.add("checkpoint_conflict", "checkpoint %s is in the export twice, differently", id)
			}
			continue
		}
		byID[id] = c
		cps = append(cps, c)
		rep.Checkpoints++
		switch pub, ok := keys[c.KeyID]; {
		case !ok:
			rep.add("checkpoint_unknown_key", "checkpoint %s: books key %s is not in the export", id, c.KeyID)
		case !checkSignature(c.checkpoint(), pub):
			rep.add("checkpoint_bad_signature", "checkpoint %s: the signature does not verify (forged or changed)", id)
		}
	}
	sort.Slice(cps, func(i, j int) bool {
		if cps[i].KeyID != cps[j].KeyID {
			return cps[i].KeyID < cps[j].KeyID
		}
		return cps[i].Counter < cps[j].Counter
	})
	trees := map[treeAt]CheckpointJSON{}
	newest := map[chainKey]CheckpointJSON{}
	for i, c := range cps {
		k := chainKey{c.AccountID, account.Environment(c.Environment)}
		at := treeAt{k, c.TreeSize}
		if o, ok := trees[at]; ok && (o.HeadHash != c.HeadHash || o.TreeHash != c.TreeHash) {
			rep.add("checkpoint_fork", "chain %s: checkpoints %s and %s sign different trees of %d entries", k, o.ID, c.ID, c.TreeSize)
		}
		trees[at] = c
		if i > 0 && cps[i-1].KeyID == c.KeyID && c.SignedAt.Before(cps[i-1].SignedAt) {
			rep.add("checkpoint_order", "checkpoint %s is dated before %s, whose counter is lower", c.ID, cps[i-1].ID)
		}
		if o, ok := newest[k]; ok && o.KeyID == c.KeyID && c.TreeSize <= o.TreeSize {
			rep.add("checkpoint_order", "chain %s: checkpoint %s signs %d entries, %s with a lower counter signed %d", k, c.ID, c.TreeSize, o.ID, o.TreeSize)
		}
		newest[k] = c
	}
	return trees
}

// anchor checks that a proof's tree is a signed checkpoint's.
func anchor(what string, at treeAt, treeHash string, cps map[treeAt]CheckpointJSON, rep *Report) {
	c, ok := cps[at]
	switch {
	case !ok:
		rep.add("proof_unanchored", "%s: no checkpoint of the export signs chain %s at %d entries", what, at.chain, at.size)
	case c.TreeHash != treeHash:
		rep.add("proof_invalid", "%s: the tree of %d entries is not the one checkpoint %s signed", what, at.size, c.ID)
	}
}

func checkInclusion(p InclusionProofJSON, cps map[treeAt]CheckpointJSON, rep *Report) {
	e := p.Entry
	what := fmt.Sprintf("inclusion proof of %s %s", e.Kind, e.RecordID)
	entry := e.entry()
	if entryHash(entry) != e.EntryHash || e.AccountID != p.AccountID || e.Environment != p.Environment {
		rep.add("entry_changed", "%s: the entry's fields do not hash to its entry hash", what)
	}
	leaf, err1 := entryLeaf(e.EntryHash)
	root, err2 := parseHash(p.TreeHash)
	path, err3 := parseHashes(p.AuditPath)
	if errors.Join(err1, err2, err3) != nil || p.LeafIndex != e.Seq-1 || !verifyInclusion(p.LeafIndex, p.TreeSize, leaf, path, root) {
		rep.add("proof_invalid", "%s: the audit path does not lead to the tree hash", what)
		return
	}
	anchor(what, treeAt{chainKey{p.AccountID, account.Environment(p.Environment)}, p.TreeSize}, p.TreeHash, cps, rep)
}

func checkConsistency(p ConsistencyProofJSON, cps map[treeAt]CheckpointJSON, rep *Report) {
	what := fmt.Sprintf("consistency proof %d → %d", p.First, p.Second)
	fh, err1 := parseHash(p.FirstTreeHash)
	sh, err2 := parseHash(p.SecondTreeHash)
	path, err3 := parseHashes(p.ConsistencyPath)
	if errors.Join(err1, err2, err3) != nil || !verifyConsistency(p.First, p.Second, fh, sh, path) {
		rep.add("proof_invalid", "%s: the later tree does not extend the earlier one", what)
		return
	}
	k := chainKey{p.AccountID, account.Environment(p.Environment)}
	anchor(what, treeAt{k, p.First}, p.FirstTreeHash, cps, rep)
	anchor(what, treeAt{k, p.Second}, p.SecondTreeHash, cps, rep)
}
