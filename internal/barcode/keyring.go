package barcode

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/farebox/farebox/internal/apperr"
)

// Key is one Ed25519 key with its key id. Private is nil for keys that may
// only verify; a key in a hardware token has no Private but a Signer
// (keyref: the token signs, the key never leaves it).
type Key struct {
	ID      uint16
	Public  ed25519.PublicKey
	Private ed25519.PrivateKey
	Signer  crypto.Signer
}

// CanSign reports whether k holds a private half (in memory or a token).
func (k Key) CanSign() bool { return len(k.Private) == ed25519.PrivateKeySize || k.Signer != nil }

// sign is the Ed25519 signature of msg by k.
func (k Key) sign(msg []byte) ([]byte, error) {
	if k.Signer != nil {
		sig, err := k.Signer.Sign(nil, msg, crypto.Hash(0))
		if err != nil {
			return nil, apperr.E("barcode.sign", apperr.Unavailable, CodeNoInspectionSigningKey, "inspection key "+k.Kid()+": "+err.Error())
		}
		return sig, nil
	}
	return ed25519.Sign(k.Private, msg), nil
}

// TokenKey is key id held in a token: s signs (Ed25519) and its public
// key is the token's.
func TokenKey(id uint16, s crypto.Signer) (Key, error) {
	pub, ok := s.Public().(ed25519.PublicKey)
	if !ok {
		return Key{}, apperr.E("barcode.TokenKey", apperr.Invalid, CodeInvalidInspectionKey, fmt.Sprintf("inspection key %d is %T, not Ed25519", id, s.Public()))
	}
	return Key{ID: id, Public: pub, Signer: s}, nil
}

// Kid is the key id as published in keys.json (decimal).
func (k Key) Kid() string { return strconv.Itoa(int(k.ID)) }

// TestKeyIDBase starts the key id range of test-environment keys: ids from
// 0x8000 on may only sign test tickets, so a test key (which may be handled
// less carefully, e.g. shared with partners' staging inspection apps) can
// never produce a payload that passes as live.
const TestKeyIDBase = 0x8000

// Environment is EnvTest for ids from TestKeyIDBase on, else EnvLive.
func (k Key) Environment() string { return keyEnv(k.ID) }

func keyEnv(id uint16) string {
	if id >= TestKeyIDBase {
		return EnvTest
	}
	return EnvLive
}

// GenerateKey creates a new signing key with id; rnd nil means crypto/rand.
func GenerateKey(id uint16, rnd io.Reader) (Key, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	pub, priv, err := ed25519.GenerateKey(rnd)
	if err != nil {
		return Key{}, apperr.Wrap("barcode.GenerateKey", err)
	}
	return Key{ID: id, Public: pub, Private: priv}, nil
}

// KeyFromSeed builds a signing key from a 32-byte Ed25519 seed.
func KeyFromSeed(id uint16, seed []byte) (Key, error) {
	if len(seed) != ed25519.SeedSize {
		return Key{}, apperr.E("barcode.KeyFromSeed", apperr.Invalid, CodeInvalidInspectionKey,
			fmt.Sprintf("an Ed25519 seed has %d bytes, got %d", ed25519.SeedSize, len(seed)))
	}
	priv := ed25519.NewKeyFromSeed(seed)
	return Key{ID: id, Public: priv.Public().(ed25519.PublicKey), Private: priv}, nil
}

// Keyring holds one active signing key, optionally an active test signing
// key, and the keys accepted for verification (the active ones included).
// It is immutable after creation and safe for concurrent use.
type Keyring struct {
	active     uint16
	signer     bool
	testActive uint16
	testSigner bool
	keys       map[uint16]Key
	// from holds the instant from which a rotated key signs (keys
	// published ahead, LoadFilesAt); keys without one sign from always.
	from map[uint16]time.Time
}

// SignsFrom returns the instant from which key id signs; ok is false for a
// key that has signed from always (no instant recorded).
func (kr *Keyring) SignsFrom(id uint16) (time.Time, bool) {
	t, ok := kr.from[id]
	return t, ok
}

// Pending reports whether key id is published ahead: it signs from an
// instant after now.
func (kr *Keyring) Pending(id uint16, now time.Time) bool {
	t, ok := kr.from[id]
	return ok && t.After(now)
}

// SignerAt returns the key that signed new tickets of env at instant t:
// among the signing keys of env's range whose signing had started at t
// (keys without an instant count as started always), the highest id; else
// ActiveFor(env). A ticket without a stamped key is signed with the key of
// its issue, so a key that starts signing later never changes its barcode.
func (kr *Keyring) SignerAt(env string, t time.Time) (Key, bool) {
	var best Key
	found := false
	for id, k := range kr.keys {
		if !k.CanSign() || keyEnv(id) != env {
			continue
		}
		if f, ok := kr.from[id]; ok && f.After(t) {
			continue
		}
		if !found || id > best.ID {
			best, found = k, true
		}
	}
	if found {
		return best, true
	}
	return kr.ActiveFor(env)
}

// NewKeyring returns a keyring signing with active (a live-range id) and
// verifying with active and every key of verify. The test-range key
// (TestKeyIDBase and up) with the highest id and a private half among verify
// signs test tickets; without one, active signs them too. Duplicate ids must
// carry the same public key.
func NewKeyring(active Key, verify ...Key) (*Keyring, error) {
	const op = "barcode.NewKeyring"
	if !active.CanSign() {
		return nil, apperr.E(op, apperr.Invalid, CodeInvalidInspectionKey, "the active key has no private half")
	}
	if active.Environment() != EnvLive {
		return nil, apperr.E(op, apperr.Invalid, CodeInvalidInspectionKey, "the active key id must be below 32768 (test-range ids sign test tickets only)")
	}
	if active.Signer == nil {
		active.Public = active.Private.Public().(ed25519.PublicKey)
	}
	kr, err := newVerifyKeyring(append([]Key{active}, verify...))
	if err != nil {
		return nil, err
	}
	kr.active, kr.signer = active.ID, true
	for id, k := range kr.keys {
		if k.Environment() == EnvTest && k.CanSign() && (!kr.testSigner || id > kr.testActive) {
			kr.testActive, kr.testSigner = id, true
		}
	}
	return kr, nil
}

// NewVerifyKeyring returns a keyring that verifies only (no active key), as
// an inspection client builds from published keys.
func NewVerifyKeyring(keys ...Key) (*Keyring, error) { return newVerifyKeyring(keys) }

func newVerifyKeyring(keys []Key) (*Keyring, error) {
	const op = "barcode.NewKeyring"
	kr := &Keyring{keys: make(map[uint16]Key, len(keys))}
	for _, k := range keys {
		if len(k.Public) != ed25519.PublicKeySize {
			return nil, apperr.E(op, apperr.Invalid, CodeInvalidInspectionKey, "key "+k.Kid()+" has no valid public key")
		}
		if old, ok := kr.keys[k.ID]; ok {
			if !old.Public.Equal(k.Public) {
				return nil, apperr.E(op, apperr.Conflict, CodeDuplicateInspectionKeyID, "two different keys share key id "+k.Kid())
			}
			if old.CanSign() {
				continue
			}
		}
		kr.keys[k.ID] = k
	}
	return kr, nil
}

// Active returns the signing key of live tickets; ok is false for a
// verify-only keyring.
func (kr *Keyring) Active() (Key, bool) {
	if !kr.signer {
		return Key{}, false
	}
	return kr.keys[kr.active], true
}

// ActiveFor returns the key that signs tickets of environment env.
func (kr *Keyring) ActiveFor(env string) (Key, bool) {
	if env == EnvTest && kr.testSigner {
		return kr.keys[kr.testActive], true
	}
	return kr.Active()
}

// Lookup returns the key with id.
func (kr *Keyring) Lookup(id uint16) (Key, bool) {
	k, ok := kr.keys[id]
	return k, ok
}

// IDs lists the key ids in ascending order.
func (kr *Keyring) IDs() []uint16 {
	ids := make([]uint16, 0, len(kr.keys))
	for id := range kr.keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// SignWith signs c with the key kid when the keyring holds its private half
// and kid is of the range that signs c's environment (a ticket keeps the
// key it was first signed with across rotations: docs/wallet.md, "Key
// rotation"); otherwise, and for kid 0, with the active key for c.Environment
// (ActiveFor); c.KeyID and c.Version are ignored. It
// returns the payload and the id of the key that signed.
func SignWith(c Claims, kr *Keyring, kid uint16) ([]byte, uint16, error) {
	active, ok := kr.ActiveFor(c.Environment)
	if !ok {
		return nil, 0, apperr.E("barcode.SignWith", apperr.Unavailable, CodeNoInspectionSigningKey, "no active inspection signing key")
	}
	k, ok := kr.keys[kid]
	if !ok || !k.CanSign() || k.Environment() != active.Environment() {
		k = active
	}
	body, err := encodeBody(c, k.ID)
	if err != nil {
		return nil, 0, err
	}
	sig, err := k.sign(signedMessage(body))
	if err != nil {
		return nil, 0, err
	}
	return append(body, sig...), k.ID, nil
}

func signedMessage(body []byte) []byte {
	return append([]byte(signContext), body...)
}

// Verification failures, distinguishable with errors.Is.
var (
	ErrMalformed      = errMalformed
	ErrUnknownKey     = errors.New("inspection payload signed with an unknown key")
	ErrSignature      = errors.New("inspection payload signature does not verify")
	ErrKeyEnvironment = errors.New("a test key signed a live ticket")
)

// Verify parses payload and checks its signature against the key its key id
// names. It returns the claims only when the payload is genuine. Errors are
// apperr Invalid and wrap ErrMalformed, ErrUnknownKey, ErrSignature or
// ErrKeyEnvironment (a test-range key vouching for a live ticket).
func Verify(payload []byte, kr *Keyring) (Claims, error) {
	const op = "barcode.Verify"
	c, n, err := parse(payload)
	if err != nil {
		return Claims{}, &apperr.Error{Op: op, Kind: apperr.Invalid, Code: CodeMalformedBarcode, Msg: err.Error(), Err: ErrMalformed}
	}
	k, ok := kr.Lookup(c.KeyID)
	if !ok {
		return Claims{}, &apperr.Error{Op: op, Kind: apperr.Invalid, Code: CodeUnknownBarcodeKey,
			Msg: "signed with unknown key id " + strconv.Itoa(int(c.KeyID)), Err: ErrUnknownKey}
	}
	if !ed25519.Verify(k.Public, signedMessage(payload[:n]), payload[n:]) {
		return Claims{}, &apperr.Error{Op: op, Kind: apperr.Invalid, Code: CodeBadBarcodeSignature,
			Msg: "signature does not verify", Err: ErrSignature}
	}
	if k.Environment() == EnvTest && c.Environment != EnvTest {
		return Claims{}, &apperr.Error{Op: op, Kind: apperr.Invalid, Code: CodeTestKeySignedLiveBarcode,
			Msg: "a test key signed a live ticket", Err: ErrKeyEnvironment}
	}
	return c, nil
}

// PublicKeyJSON is one entry of keys.json.
type PublicKeyJSON struct {
	Kid       string `json:"kid"`
	Alg       string `json:"alg"`
	PublicKey string `json:"public_key"` // base64url, no padding, 32 bytes
	Active    bool   `json:"active"`     // the key currently signing new payloads of its environment
	// Environment is "test" for test-range keys (they sign test tickets only), else "live".
	Environment string `json:"environment"`
}

// KeySetJSON is the body of GET /v1/inspection/keys.json.
type KeySetJSON struct {
	Keys []PublicKeyJSON `json:"keys"`
}

// KeySet returns the public keys, ascending by id, for publication.
func (kr *Keyring) KeySet() KeySetJSON {
	ks := KeySetJSON{Keys: []PublicKeyJSON{}}
	for _, id := range kr.IDs() {
		k := kr.keys[id]
		ks.Keys = append(ks.Keys, PublicKeyJSON{Kid: k.Kid(), Alg: "Ed25519",
			PublicKey: base64.RawURLEncoding.EncodeToString(k.Public), Environment: k.Environment(),
			Active: (kr.signer && id == kr.active) || (kr.testSigner && id == kr.testActive)})
	}
	return ks
}

// MarshalKeySet is the JSON body of GET /v1/inspection/keys.json.
func (kr *Keyring) MarshalKeySet() ([]byte, error) { return json.Marshal(kr.KeySet()) }

// ParseKeySet builds a verify-only keyring from a keys.json body.
func ParseKeySet(data []byte) (*Keyring, error) {
	const op = "barcode.ParseKeySet"
	var ks KeySetJSON
	if err := json.Unmarshal(data, &ks); err != nil {
		return nil, apperr.E(op, apperr.Invalid, CodeInvalidKeySet, "keys.json is not valid JSON: "+err.Error())
	}
	keys := make([]Key, 0, len(ks.Keys))
	for _, j := range ks.Keys {
		id, err := strconv.ParseUint(j.Kid, 10, 16)
		if err != nil || j.Alg != "Ed25519" {
			return nil, apperr.E(op, apperr.Invalid, CodeInvalidKeySet, "unsupported key "+strconv.Quote(j.Kid))
		}
		pub, err := base64.RawURLEncoding.DecodeString(j.PublicKey)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return nil, apperr.E(op, apperr.Invalid, CodeInvalidKeySet, "bad public key for kid "+j.Kid)
		}
		keys = append(keys, Key{ID: uint16(id), Public: pub})
	}
	return NewVerifyKeyring(keys...)
}

// MarshalPrivatePEM encodes a signing key as PKCS#8 PEM.
func MarshalPrivatePEM(k Key) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.Private)
	if err != nil {
		return nil, apperr.Wrap("barcode.MarshalPrivatePEM", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParsePrivateKey reads a signing key: PKCS#8 PEM, or a 32-byte seed given
// raw, as hex or as base64 (standard or URL alphabet, padded or not).
func ParsePrivateKey(id uint16, data []byte) (Key, error) {
	const op = "barcode.ParsePrivateKey"
	if blk, _ := pem.Decode(data); blk != nil {
		if blk.Type != "PRIVATE KEY" {
			return Key{}, apperr.E(op, apperr.Invalid, CodeInvalidInspectionKey, "PEM block "+blk.Type+" is not a PKCS#8 PRIVATE KEY")
		}
		priv, err := parseEd25519[ed25519.PrivateKey](op, blk.Bytes, x509.ParsePKCS8PrivateKey)
		if err != nil {
			return Key{}, err
		}
		return Key{ID: id, Public: priv.Public().(ed25519.PublicKey), Private: priv}, nil
	}
	if len(data) == ed25519.SeedSize {
		return KeyFromSeed(id, data)
	}
	if seed, ok := decodeText(bytes.TrimSpace(data)); ok && len(seed) == ed25519.SeedSize {
		return KeyFromSeed(id, seed)
	}
	return Key{}, apperr.E(op, apperr.Invalid, CodeInvalidInspectionKey, "neither a PKCS#8 PEM key nor a 32-byte seed")
}

// ParsePublicKey reads a PKIX PEM Ed25519 public key.
func ParsePublicKey(id uint16, data []byte) (Key, error) {
	const op = "barcode.ParsePublicKey"
	blk, _ := pem.Decode(data)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return Key{}, apperr.E(op, apperr.Invalid, CodeInvalidInspectionKey, "not a PEM PUBLIC KEY")
	}
	pub, err := parseEd25519[ed25519.PublicKey](op, blk.Bytes, x509.ParsePKIXPublicKey)
	if err != nil {
		return Key{}, err
	}
	return Key{ID: id, Public: pub}, nil
}

// parseEd25519 parses der with parse (PKCS#8 or PKIX) and wants an Ed25519
// key of type K; anything else is an invalid inspection key.
func parseEd25519[K ed25519.PrivateKey | ed25519.PublicKey](op string, der []byte, parse func([]byte) (any, error)) (K, error) {
	k, err := parse(der)
	if err != nil {
		return nil, apperr.E(op, apperr.Invalid, CodeInvalidInspectionKey, err.Error())
	}
	key, ok := k.(K)
	if !ok {
		return nil, apperr.E(op, apperr.Invalid, CodeInvalidInspectionKey, fmt.Sprintf("key is %T, not Ed25519", k))
	}
	return key, nil
}

func decodeText(s []byte) ([]byte, bool) {
	if b, err := hex.DecodeString(string(s)); err == nil {
		return b, true
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(string(s)); err == nil {
			return b, true
		}
	}
	return nil, false
}
