package books

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/keyref"
	"github.com/farebox/farebox/internal/pemkey"
)

// Signer signs the books' checkpoints with the books key. The key may
// live in a file (FileSigner) or in a hardware token (KeySigner with a
// `pkcs11:` URI): farebox only hands it the message and reads the public
// key.
type Signer interface {
	// KeyID names the key: the first 16 hex digits of the SHA-256 of its
	// public key.
	KeyID() string
	Public() ed25519.PublicKey
	Sign(msg []byte) ([]byte, error)
}

// KeyFile is the books key's file name under the data directory.
const KeyFile = "books-ed25519.pem"

// KeyID is the id of an Ed25519 books key by its public key.
func KeyID(pub ed25519.PublicKey) string {
	s := sha256.Sum256(pub)
	return hex.EncodeToString(s[:8])
}

type fileSigner struct {
	key ed25519.PrivateKey
	id  string
}

func (f fileSigner) KeyID() string                   { return f.id }
func (f fileSigner) Public() ed25519.PublicKey       { return f.key.Public().(ed25519.PublicKey) }
func (f fileSigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(f.key, msg), nil }

type tokenSigner struct {
	s   crypto.Signer
	pub ed25519.PublicKey
}

func (t tokenSigner) KeyID() string             { return KeyID(t.pub) }
func (t tokenSigner) Public() ed25519.PublicKey { return t.pub }
func (t tokenSigner) Sign(msg []byte) ([]byte, error) {
	return t.s.Sign(nil, msg, crypto.Hash(0))
}

// KeySigner opens the books key ref: a `pkcs11:` URI of an Ed25519 key
// in a token (never created here: the key ceremony generates it,
// docs/operations.md), else a file (FileSigner).
func KeySigner(ref string, create bool) (Signer, error) {
	if !keyref.IsToken(ref) {
		return FileSigner(ref, create)
	}
	s, err := keyref.Ed25519(ref)
	if err != nil {
		return nil, fmt.Errorf("books key %w", err)
	}
	return tokenSigner{s: s, pub: s.Public().(ed25519.PublicKey)}, nil
}

// FileSigner loads the Ed25519 books key from path (PKCS#8 PEM), creating
// it (mode 0600) when the file does not exist and create is set.
func FileSigner(path string, create bool) (Signer, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		return newKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("books key %s: %w", path, err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("books key %s: no PEM block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("books key %s: %w", path, err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("books key %s: not an Ed25519 key", path)
	}
	return fileSigner{key: key, id: KeyID(key.Public().(ed25519.PublicKey))}, nil
}

func newKeyFile(path string) (Signer, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	// An instance starting at the same time on the same directory reads
	// the complete key of whichever wrote it first (pemkey.WriteNew).
	won, err := pemkey.WriteNew(path, pem.EncodeToMemory(&pem.Block{Type: pemkey.PKCS8, Bytes: der}))
	if err != nil {
		return nil, fmt.Errorf("books key %s: %w", path, err)
	} else if !won {
		return FileSigner(path, false)
	}
	return fileSigner{key: key, id: KeyID(key.Public().(ed25519.PublicKey))}, nil
}

// checkpointMessage is what a checkpoint's signature covers: a fixed
// header and each field on its own line; v2 (migration 00038) adds the
// Merkle tree hash after the head hash, v1 is the message of the
// checkpoints signed before.
func checkpointMessage(c invoicing.Checkpoint) []byte {
	fields := []string{"farebox books checkpoint v1", c.AccountID, string(c.Environment), strconv.FormatInt(c.TreeSize, 10), c.HeadHash}
	if c.TreeHash != "" {
		fields[0] = "farebox books checkpoint v2"
		fields = append(fields, c.TreeHash)
	}
	return []byte(strings.Join(append(fields, c.SignedAt.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano),
		strconv.FormatInt(c.Counter, 10), c.KeyID), "\n") + "\n")
}

// checkSignature reports whether c is signed by pub.
func checkSignature(c invoicing.Checkpoint, pub ed25519.PublicKey) bool {
	sig, err := base64.StdEncoding.DecodeString(c.Signature)
	return err == nil && ed25519.Verify(pub, checkpointMessage(c), sig)
}

// Checkpoint signs, with s, a checkpoint of every chain that grew since
// its newest checkpoint, each with the next value of the key's signature
// counter and its Merkle tree hash, and stores them in one transaction;
// it returns them. It first takes the signers' lock, so that instances
// signing at the same time sign one after the other: the second sees
// what the first signed (no chain is signed twice at one size, the
// counter only grows), and no checkpoint is dated before an earlier one.
func (b *Books) Checkpoint(ctx context.Context, s Signer) ([]CheckpointJSON, error) {
	var out []CheckpointJSON
	err := b.DB.Write(ctx, func(q Queries) error {
		out = out[:0]
		last, err := q.LockCheckpointSigning(ctx)
		if err != nil {
			return err
		}
		if err := q.RegisterBooksKey(ctx, s.KeyID(), base64.StdEncoding.EncodeToString(s.Public())); err != nil {
			return err
		}
		heads, err := q.ChainHeads(ctx)
		if err != nil {
			return err
		}
		cps, _, err := q.Checkpoints(ctx)
		if err != nil {
			return err
		}
		signed := map[[2]string]int64{}
		for _, c := range cps {
			k := [2]string{c.AccountID, string(c.Environment)}
			signed[k] = max(signed[k], c.TreeSize)
		}
		now := b.Clock.Now().UTC().Truncate(time.Microsecond)
		if now.Before(last) {
			now = last
		}
		for _, h := range heads {
			if h.Size <= signed[[2]string{h.AccountID, string(h.Environment)}] {
				continue
			}
			c, err := signHead(ctx, q, s, h, now)
			if err != nil {
				return err
			}
			out = append(out, checkpointView(c))
		}
		return nil
	})
	return out, err
}

// signHead signs and stores the checkpoint of head h at now; a chain
// whose entries disagree with its head is refused (farebox books verify
// names why).
func signHead(ctx context.Context, q Queries, s Signer, h invoicing.ChainHead, now time.Time) (invoicing.Checkpoint, error) {
	k := chainKey{h.AccountID, h.Environment}
	lh, last, err := chainLeaves(ctx, q, k, h.Size)
	if err != nil {
		return invoicing.Checkpoint{}, err
	}
	if int64(len(lh)) != h.Size || last != h.HeadHash {
		// Signing it would vouch for a chain its head disagrees with.
		return invoicing.Checkpoint{}, fmt.Errorf("books: chain %s holds %d entries, its head says %d (run farebox books verify)", k, len(lh), h.Size)
	}
	n, err := q.NextSignatureCounter(ctx, s.KeyID())
	if err != nil {
		return invoicing.Checkpoint{}, err
	}
	root := treeHash(lh)
	c := invoicing.Checkpoint{AccountID: h.AccountID, Environment: h.Environment, TreeSize: h.Size, HeadHash: h.HeadHash,
		TreeHash: hex.EncodeToString(root[:]), SignedAt: now, Counter: n, KeyID: s.KeyID()}
	sig, err := s.Sign(checkpointMessage(c))
	if err != nil {
		return c, fmt.Errorf("books key %s: %w", s.KeyID(), err)
	}
	c.Signature = base64.StdEncoding.EncodeToString(sig)
	return c, q.InsertCheckpoint(ctx, c)
}

// chainLeaves are the Merkle leaf hashes of a chain's first size entries,
// read from the stored entry hashes, and the last entry's hash; fewer
// leaves when the chain holds fewer entries.
func chainLeaves(ctx context.Context, q Queries, k chainKey, size int64) ([]hash, string, error) {
	lh := make([]hash, 0, min(size, chainPage)) // size is a caller's: grow with what is read
	last := ""
	for int64(len(lh)) < size {
		entries, err := q.ChainEntries(ctx, k.accountID, k.env, int64(len(lh)), int(min(size-int64(len(lh)), chainPage)))
		if err != nil {
			return nil, "", err
		}
		if len(entries) == 0 {
			break
		}
		for _, e := range entries {
			if e.Seq != int64(len(lh))+1 {
				return nil, "", fmt.Errorf("books: chain %s: entry %d is missing (run farebox books verify)", k, len(lh)+1)
			}
			l, err := entryLeaf(e.EntryHash)
			if err != nil {
				return nil, "", fmt.Errorf("books: chain %s entry %d: %w", k, e.Seq, err)
			}
			lh, last = append(lh, l), e.EntryHash
		}
	}
	return lh, last, nil
}

// CheckpointJSON is one exported checkpoint (a line of farebox books
// checkpoints).
type CheckpointJSON struct {
	// ID names the checkpoint: its key id and counter, "<key id>.<counter>".
	ID          string    `json:"id"`
	Object      string    `json:"object"`
	AccountID   string    `json:"account_id"`
	Environment string    `json:"environment"`
	TreeSize    int64     `json:"tree_size"`
	HeadHash    string    `json:"head_hash"`
	TreeHash    string    `json:"tree_hash,omitempty"` // RFC 9162 Merkle tree hash (none before migration 00038)
	SignedAt    time.Time `json:"signed_at"`           // RFC 3339, microseconds: the signed value
	Counter     int64     `json:"counter"`
	KeyID       string    `json:"key_id"`
	Signature   string    `json:"signature"`
}

// Checkpoints are the stored checkpoints for export, in the order they
// were signed.
func (b *Books) Checkpoints(ctx context.Context) ([]CheckpointJSON, error) {
	cps, _, err := b.DB.Read().Checkpoints(ctx)
	out := make([]CheckpointJSON, len(cps))
	for i, c := range cps {
		out[i] = checkpointView(c)
	}
	return out, err
}

func checkpointView(c invoicing.Checkpoint) CheckpointJSON {
	return CheckpointJSON{ID: c.KeyID + "." + strconv.FormatInt(c.Counter, 10), Object: "books_checkpoint", TreeHash: c.TreeHash, AccountID: c.AccountID, Environment: string(c.Environment),
		TreeSize: c.TreeSize, HeadHash: c.HeadHash, SignedAt: c.SignedAt, Counter: c.Counter, KeyID: c.KeyID,
		Signature: c.Signature}
}

// checkpoint is the stored form of an exported checkpoint.
func (c CheckpointJSON) checkpoint() invoicing.Checkpoint {
	return invoicing.Checkpoint{AccountID: c.AccountID, Environment: account.Environment(c.Environment), TreeSize: c.TreeSize,
		HeadHash: c.HeadHash, TreeHash: c.TreeHash, SignedAt: c.SignedAt.UTC(), Counter: c.Counter, KeyID: c.KeyID, Signature: c.Signature}
}
