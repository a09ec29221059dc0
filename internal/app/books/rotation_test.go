package books_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/keyref"
	"github.com/farebox/farebox/internal/keyref/tokentest"
	"github.com/farebox/farebox/internal/store/storetest"
)

// rotate signs a checkpoint of a grown chain with s and keeps the export.
func (b *chainBed) rotate(t *testing.T, s books.Signer, change int) {
	t.Helper()
	b.change(t, change)
	b.size++
	cps, err := b.books.Checkpoint(b.ctx, s)
	if err != nil || len(cps) != 1 || cps[0].KeyID != s.KeyID() || cps[0].Counter != 1 || cps[0].TreeSize != b.size {
		t.Fatalf("checkpoint with books key %s: %+v %v", s.KeyID(), cps, err)
	}
	if b.exports, err = b.books.Checkpoints(b.ctx); err != nil {
		t.Fatal(err)
	}
}

// verifyWith verifies with key given (nil: none) and the exports.
func (b *chainBed) verifyWith(t *testing.T, key ed25519.PublicKey) books.Report {
	t.Helper()
	rep, err := b.books.Verify(b.ctx, books.VerifyOptions{Key: key, Checkpoints: b.exports})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestBooksKeyRotation: checkpoints signed with key A (a file), then,
// after rotations, with key B (another file) and key C (generated in a
// SoftHSM2 token) verify clean whichever key is given: each checkpoint is
// checked with the public key books_keys recorded for its key id, and
// the report names the keys taken from the database. An insider's
// changes to books_keys are found: a recorded key replaced (key_mismatch,
// its checkpoints checkpoint_unknown_key), a key row deleted
// (checkpoint_unknown_key), and the chain signed with a key the insider
// added shows as a key only the database vouches for. Both engines.
func TestBooksKeyRotation(t *testing.T) {
	tk := tokentest.New(t)
	storetest.EachEngineWith(t, newChainBed, func(t *testing.T, b *chainBed) {
		a := b.signer
		bKey, err := books.FileSigner(filepath.Join(t.TempDir(), books.KeyFile), true)
		if err != nil {
			t.Fatal(err)
		}
		ref := tk.URI(tokentest.Unique("books"))
		if _, err := keyref.Generate(ref, "ed25519"); err != nil {
			t.Fatal(err)
		}
		c, err := books.KeySigner(ref, false)
		if err != nil {
			t.Fatal(err)
		}
		b.rotate(t, bKey, 20)
		b.rotate(t, c, 21)
		for name, key := range map[string]ed25519.PublicKey{"C": c.Public(), "A": a.Public(), "none": nil} {
			rep := b.verifyWith(t, key)
			expect(t, rep, map[string]int{})
			if rep.Checkpoints != 3 {
				t.Errorf("given %s: %d checkpoints checked", name, rep.Checkpoints)
			}
			if want := len(keysBut(key, a, bKey, c)); len(rep.KeysFromDatabase) != want {
				t.Errorf("given %s: keys from the database %v, want %d", name, rep.KeysFromDatabase, want)
			}
		}
		// A tampered checkpoint of the rotated-out key A is still found.
		b.insider(t, fmt.Sprintf(`UPDATE books_checkpoints SET signature = '%s' WHERE key_id = '%s'`,
			base64.StdEncoding.EncodeToString(make([]byte, 64)), a.KeyID()))
		expect(t, b.verifyWith(t, c.Public()), map[string]int{"checkpoint_bad_signature": 1, "checkpoint_conflict": 1}, a.KeyID())
		b.insider(t, `DELETE FROM books_checkpoints WHERE key_id = '`+a.KeyID()+`'`)
		b.exports = slices.DeleteFunc(b.exports, func(c books.CheckpointJSON) bool { return c.KeyID == a.KeyID() })
		if len(b.exports) != 2 {
			t.Fatalf("exports %+v", b.exports)
		}
		expect(t, b.verifyWith(t, c.Public()), map[string]int{"checkpoint_missing": 1}, a.KeyID())
		b.insider(t, `DELETE FROM books_signature_counters WHERE key_id = '`+a.KeyID()+`'`)
		expect(t, b.verifyWith(t, c.Public()), map[string]int{})

		// B's recorded public key replaced by another key.
		other, _, _ := ed25519.GenerateKey(nil)
		b.insider(t, fmt.Sprintf(`UPDATE books_keys SET public_key = '%s' WHERE key_id = '%s'`,
			base64.StdEncoding.EncodeToString(other), bKey.KeyID()))
		expect(t, b.verifyWith(t, c.Public()), map[string]int{"key_mismatch": 1, "checkpoint_unknown_key": 1}, bKey.KeyID())
		// The given key's own row changed is found too, its checkpoints
		// still check with the key given.
		b.insider(t, fmt.Sprintf(`UPDATE books_keys SET public_key = '%s' WHERE key_id = '%s'`,
			base64.StdEncoding.EncodeToString(other), c.KeyID()))
		expect(t, b.verifyWith(t, c.Public()), map[string]int{"key_mismatch": 2, "checkpoint_unknown_key": 1}, c.KeyID())
		// B's row deleted.
		b.insider(t, `DELETE FROM books_keys WHERE key_id = '`+bKey.KeyID()+`'`)
		expect(t, b.verifyWith(t, c.Public()), map[string]int{"key_mismatch": 1, "checkpoint_unknown_key": 1}, "neither the books key given nor books_keys")
		b.insider(t, fmt.Sprintf(`UPDATE books_keys SET public_key = '%s' WHERE key_id = '%s'`,
			base64.StdEncoding.EncodeToString(c.Public()), c.KeyID()))
		b.insider(t, fmt.Sprintf(`INSERT INTO books_keys (key_id, public_key) VALUES ('%s', '%s')`,
			bKey.KeyID(), base64.StdEncoding.EncodeToString(bKey.Public())))
		expect(t, b.verifyWith(t, c.Public()), map[string]int{})

		// An insider with a key of their own (D) signs the grown chain
		// with it (its row enters books_keys as any signing run's does)
		// and deletes C's checkpoints and counter: the database alone then
		// holds no contradiction, but verify names D as a key only the
		// database vouches for, and C's checkpoint held outside is missing.
		d, err := books.FileSigner(filepath.Join(t.TempDir(), books.KeyFile), true)
		if err != nil {
			t.Fatal(err)
		}
		b.change(t, 22)
		if _, err := b.books.Checkpoint(b.ctx, d); err != nil {
			t.Fatal(err)
		}
		b.insider(t, `DELETE FROM books_checkpoints WHERE key_id = '`+c.KeyID()+`'`,
			`DELETE FROM books_signature_counters WHERE key_id = '`+c.KeyID()+`'`)
		rep, err := b.books.Verify(b.ctx, books.VerifyOptions{Key: c.Public()})
		if err != nil {
			t.Fatal(err)
		}
		expect(t, rep, map[string]int{})
		if !strings.Contains(fmt.Sprint(rep.KeysFromDatabase), d.KeyID()) {
			t.Errorf("the insider's key %s is not named: %v", d.KeyID(), rep.KeysFromDatabase)
		}
		expect(t, b.verifyWith(t, c.Public()), map[string]int{"checkpoint_missing": 1}, c.KeyID())
	})
}

// keysBut are the key ids of signers other than the one whose public key
// is given.
func keysBut(given ed25519.PublicKey, signers ...books.Signer) []string {
	var out []string
	for _, s := range signers {
		if given == nil || !s.Public().Equal(given) {
			out = append(out, s.KeyID())
		}
	}
	return out
}
