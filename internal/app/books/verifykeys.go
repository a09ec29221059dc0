package books

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"sort"

	"github.com/farebox/farebox/internal/invoicing"
)

// recordedKey decodes a books key's public key as books_keys and the
// exports hold it (base64 of the raw Ed25519 key); ok is false unless it
// is the key that id names.
func recordedKey(id, public string) (ed25519.PublicKey, bool) {
	pub, err := base64.StdEncoding.DecodeString(public)
	if err != nil || len(pub) != ed25519.PublicKeySize || KeyID(pub) != id {
		return nil, false
	}
	return pub, true
}

// checkpointKeys are the public keys the checkpoints are checked with,
// by key id: the configured books key (o.Key, held outside the
// database), and for every other key id a checkpoint names the public
// key books_keys recorded when that key signed (a key rotated out). A
// recorded key that is not the key its id names (the given one's too) is
// a key_mismatch finding; the checkpoints of such a key, unless it is the
// given one, then have no key (checkpoint_unknown_key).
// rep.KeysFromDatabase lists the key ids checked with a recorded key
// alone, which an insider could have added (docs/books.md).
func (b *Books) checkpointKeys(ctx context.Context, q Queries, o VerifyOptions, cps map[chainKey][]invoicing.Checkpoint, rep *Report) (map[string]ed25519.PublicKey, error) {
	given := ""
	if o.Key != nil {
		given = KeyID(o.Key)
	}
	seen := map[string]bool{}
	var ids []string
	if given != "" {
		seen[given], ids = true, []string{given}
	}
	for _, list := range cps {
		for _, c := range list {
			if !seen[c.KeyID] {
				seen[c.KeyID] = true
				ids = append(ids, c.KeyID)
			}
		}
	}
	recorded, err := q.BooksKeys(ctx, ids)
	if err != nil {
		return nil, err
	}
	sort.Strings(ids)
	keys := map[string]ed25519.PublicKey{}
	for _, id := range ids {
		public, ok := recorded[id]
		pub, match := recordedKey(id, public)
		switch {
		case ok && !match:
			rep.add("key_mismatch", "books key %s: the public key books_keys records for it is not the key that id names (changed)", id)
		case id == given:
		case ok:
			keys[id] = pub
			rep.KeysFromDatabase = append(rep.KeysFromDatabase, id)
		}
	}
	if given != "" {
		keys[given] = o.Key
	}
	return keys, nil
}
