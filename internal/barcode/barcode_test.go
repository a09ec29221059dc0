package barcode

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/farebox/farebox/internal/apperr"
)

// detRand is a deterministic byte source for key generation in tests.
type detRand struct{ r *rand.ChaCha8 }

func (d detRand) Read(p []byte) (int, error) { return d.r.Read(p) }

func newRand(seed byte) detRand {
	var s [32]byte
	s[0] = seed
	return detRand{rand.NewChaCha8(s)}
}

func testKeyring(t testing.TB, id uint16, seed byte) *Keyring {
	t.Helper()
	k, err := GenerateKey(id, newRand(seed))
	if err != nil {
		t.Fatal(err)
	}
	kr, err := NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func sampleClaims() Claims {
	return Claims{
		TicketID:    "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f",
		ProductID:   "farebox-product-0a1b2c3d-4e5f-4a6b-9c8d-7e6f5a4b3c2d",
		ProductName: "Deutschlandticket Monatsabo",
		ValidFrom:   time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		ValidUntil:  time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		FirstName:   "Jürgen",
		LastName:    "Müller-Lüdenscheidt",
		BirthDate:   "1990-02-28",
		Environment: EnvLive,
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	kr := testKeyring(t, 7, 1)
	for _, c := range []Claims{
		sampleClaims(),
		func() Claims { c := sampleClaims(); c.Environment = EnvTest; c.BirthDate = ""; return c }(),
		func() Claims {
			c := sampleClaims()
			c.TicketID, c.ProductID, c.FirstName, c.LastName = "legacy id 42", "", "", ""
			return c
		}(),
		func() Claims {
			c := sampleClaims()
			c.TicketID = "my-org-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f"
			return c
		}(),
		func() Claims {
			c := sampleClaims()
			c.TicketID = "x-ticket-3F2B8C1E-9D4A-4E6B-8F00-1A2B3C4D5E6F"
			return c
		}(),
	} {
		p, _, err := SignWith(c, kr, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Verify(p, kr)
		if err != nil {
			t.Fatalf("verify %q: %v", c.TicketID, err)
		}
		want := c
		want.Version, want.KeyID = 1, 7
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("claims differ (-want +got):\n%s", diff)
		}
		if got.Test() != (c.Environment == EnvTest) {
			t.Errorf("Test() = %v for %s", got.Test(), c.Environment)
		}
	}
}

func TestPayloadIsCompact(t *testing.T) {
	p, _, err := SignWith(sampleClaims(), testKeyring(t, 1, 1), 0)
	if err != nil {
		t.Fatal(err)
	}
	// header 18; ids: tag + "farebox" + kind + 16 uuid bytes; three strings; signature 64.
	want := 18 + (1 + 8 + 7 + 16) + (1 + 8 + 8 + 16) + (1 + 27) + (1 + 7) + (1 + 21) + 64
	if len(p) != want {
		t.Errorf("payload length %d, want %d", len(p), want)
	}
	if p[0] != 'F' || p[1] != 'B' || p[2] != 1 || p[3] != 0 || p[4] != 1 || p[5] != 0 {
		t.Errorf("header % x", p[:6])
	}
}

func TestEveryFlippedBitFails(t *testing.T) {
	kr := testKeyring(t, 1, 1)
	p, _, err := SignWith(sampleClaims(), kr, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range len(p) * 8 {
		q := bytes.Clone(p)
		q[i/8] ^= 1 << (i % 8)
		if c, err := Verify(q, kr); err == nil {
			t.Fatalf("bit %d flipped still verifies: %+v", i, c)
		} else if apperr.KindOf(err) != apperr.Invalid {
			t.Fatalf("bit %d: kind %v", i, apperr.KindOf(err))
		}
	}
	if _, err := Verify(p[:len(p)-1], kr); err == nil {
		t.Error("truncated payload verifies")
	}
	if _, err := Verify(append(bytes.Clone(p), 0), kr); err == nil {
		t.Error("payload with a trailing byte verifies")
	}
}

func TestVerifyErrors(t *testing.T) {
	kr := testKeyring(t, 1, 1)
	other := testKeyring(t, 2, 2)
	p, _, _ := SignWith(sampleClaims(), other, 0)
	if _, err := Verify(p, kr); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key: %v", err)
	}
	// same key id, different key: the signature fails.
	impostor := testKeyring(t, 1, 3)
	p, _, _ = SignWith(sampleClaims(), impostor, 0)
	if _, err := Verify(p, kr); !errors.Is(err, ErrSignature) {
		t.Errorf("impostor: %v", err)
	}
	if _, err := Verify([]byte("hello"), kr); !errors.Is(err, ErrMalformed) {
		t.Errorf("garbage: %v", err)
	}
}

func TestSignRejectsBadClaims(t *testing.T) {
	kr := testKeyring(t, 1, 1)
	for name, mod := range map[string]func(*Claims){
		"environment":  func(c *Claims) { c.Environment = "prod" },
		"until<from":   func(c *Claims) { c.ValidUntil = c.ValidFrom.Add(-time.Second) },
		"zero from":    func(c *Claims) { c.ValidFrom = time.Time{} },
		"after 2106":   func(c *Claims) { c.ValidUntil = time.Date(2107, 1, 1, 0, 0, 0, 0, time.UTC) },
		"birth date":   func(c *Claims) { c.BirthDate = "1990-02-30" },
		"long name":    func(c *Claims) { c.FirstName = strings.Repeat("a", MaxTextBytes+1) },
		"long product": func(c *Claims) { c.ProductName = strings.Repeat("ü", MaxTextBytes/2) + "x" },
		"bad utf8":     func(c *Claims) { c.LastName = "\xff" },
		"no ticket id": func(c *Claims) { c.TicketID = "" },
	} {
		c := sampleClaims()
		mod(&c)
		if _, _, err := SignWith(c, kr, 0); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%s: err %v", name, err)
		}
	}
	verifyOnly, _ := NewVerifyKeyring(Key{ID: 1, Public: make(ed25519.PublicKey, 32)})
	if _, _, err := SignWith(sampleClaims(), verifyOnly, 0); apperr.KindOf(err) != apperr.Unavailable {
		t.Errorf("verify-only keyring signs: %v", err)
	}
}

func TestKeySetJSONAndRotation(t *testing.T) {
	dir := t.TempDir()
	kr, created, err := LoadOrCreateDir(dir, newRand(9))
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if a, _ := kr.ActiveFor(EnvLive); a.ID != 1 {
		t.Fatalf("live signer %d", a.ID)
	}
	if a, _ := kr.ActiveFor(EnvTest); a.ID != TestKeyIDBase+1 {
		t.Fatalf("test signer %d", a.ID)
	}
	old, _, _ := SignWith(sampleClaims(), kr, 0)
	kr2, created, err := LoadOrCreateDir(dir, nil)
	if err != nil || created {
		t.Fatalf("reload: %v %v", created, err)
	}
	if a, _ := kr.Active(); !a.Private.Equal(mustActive(t, kr2).Private) {
		t.Fatal("reloaded keyring has another key")
	}
	if k, err := RotateDirFrom(dir, EnvLive, time.Time{}, newRand(10)); err != nil || k.ID != 2 {
		t.Fatalf("rotate live: %v %v", k.ID, err)
	}
	if k, err := RotateDirFrom(dir, EnvTest, time.Time{}, newRand(11)); err != nil || k.ID != TestKeyIDBase+2 {
		t.Fatalf("rotate test: %v %v", k.ID, err)
	}
	if _, err := RotateDirFrom(dir, "prod", time.Time{}, nil); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("rotate unknown environment: %v", err)
	}
	kr3, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustActive(t, kr3).ID; got != 2 {
		t.Fatalf("active after rotation = %d, want 2", got)
	}
	if c, err := Verify(old, kr3); err != nil || c.KeyID != 1 {
		t.Fatalf("old payload after rotation: %v %v", c.KeyID, err)
	}
	// retire key 1: keep only its public half.
	k1, _ := kr3.Lookup(1)
	if err := os.WriteFile(filepath.Join(dir, "inspection-1.pub"), publicPEM(t, k1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "inspection-1.key")); err != nil {
		t.Fatal(err)
	}
	kr4, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := kr4.Lookup(1); k.Private != nil {
		t.Error("retired key still has a private half")
	}
	if _, err := Verify(old, kr4); err != nil {
		t.Errorf("retired key no longer verifies: %v", err)
	}

	body, err := kr4.MarshalKeySet()
	if err != nil {
		t.Fatal(err)
	}
	var ks struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(body, &ks); err != nil {
		t.Fatal(err)
	}
	pubOf := func(id uint16) string { k, _ := kr4.Lookup(id); return base64.RawURLEncoding.EncodeToString(k.Public) }
	want := []map[string]any{
		{"kid": "1", "alg": "Ed25519", "public_key": pubOf(1), "active": false, "environment": "live"},
		{"kid": "2", "alg": "Ed25519", "public_key": pubOf(2), "active": true, "environment": "live"},
		{"kid": "32769", "alg": "Ed25519", "public_key": pubOf(32769), "active": false, "environment": "test"},
		{"kid": "32770", "alg": "Ed25519", "public_key": pubOf(32770), "active": true, "environment": "test"},
	}
	if diff := cmp.Diff(want, ks.Keys); diff != "" {
		t.Errorf("keys.json (-want +got):\n%s", diff)
	}
	pub, err := ParseKeySet(body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(old, pub); err != nil {
		t.Errorf("verify with parsed keys.json: %v", err)
	}
	if _, ok := pub.Active(); ok {
		t.Error("a keyring from keys.json must not sign")
	}
}

func TestTestKeysSignOnlyTestTickets(t *testing.T) {
	live, _ := GenerateKey(3, newRand(1))
	test, _ := GenerateKey(TestKeyIDBase+7, newRand(2))
	kr, err := NewKeyring(live, test)
	if err != nil {
		t.Fatal(err)
	}
	tc := sampleClaims()
	tc.Environment = EnvTest
	tp, _, _ := SignWith(tc, kr, 0)
	lp, _, _ := SignWith(sampleClaims(), kr, 0)
	if c, err := Verify(tp, kr); err != nil || c.KeyID != TestKeyIDBase+7 || !c.Test() {
		t.Errorf("test ticket: %v %+v", err, c)
	}
	if c, err := Verify(lp, kr); err != nil || c.KeyID != 3 || c.Test() {
		t.Errorf("live ticket: %v %+v", err, c)
	}
	// A leaked test key forging a live ticket is caught.
	body, _ := encodeBody(sampleClaims(), test.ID)
	forged := append(body, ed25519.Sign(test.Private, signedMessage(body))...)
	if _, err := Verify(forged, kr); !errors.Is(err, ErrKeyEnvironment) {
		t.Errorf("live ticket signed by a test key: %v", err)
	}
	if r := Inspect(forged, kr, tc.ValidFrom); r.Genuine || r.Reason != "a test key signed a live ticket" {
		t.Errorf("inspect forged: %+v", r)
	}
	if _, err := NewKeyring(test); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("test-range key accepted as active: %v", err)
	}
	// Without a test key the live key signs test tickets (still flagged as test).
	only, _ := NewKeyring(live)
	p, _, _ := SignWith(tc, only, 0)
	if c, err := Verify(p, only); err != nil || c.KeyID != 3 || !c.Test() {
		t.Errorf("test ticket without test key: %v %+v", err, c)
	}
}

func mustActive(t *testing.T, kr *Keyring) Key {
	t.Helper()
	k, ok := kr.Active()
	if !ok {
		t.Fatal("no active key")
	}
	return k
}

func TestParsePrivateKeyForms(t *testing.T) {
	seed := bytes.Repeat([]byte{0x42}, 32)
	want, _ := KeyFromSeed(3, seed)
	pemBytes, _ := MarshalPrivatePEM(want)
	for name, in := range map[string][]byte{
		"pem":    pemBytes,
		"raw":    seed,
		"hex":    []byte(strings.Repeat("42", 32) + "\n"),
		"b64":    []byte(base64.StdEncoding.EncodeToString(seed)),
		"b64url": []byte(base64.RawURLEncoding.EncodeToString(seed)),
	} {
		k, err := ParsePrivateKey(3, in)
		if err != nil || !k.Private.Equal(want.Private) || k.ID != 3 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ParsePrivateKey(1, []byte("short")); err == nil {
		t.Error("short seed accepted")
	}
	pubPEM := publicPEM(t, want)
	if _, err := ParsePrivateKey(1, pubPEM); err == nil {
		t.Error("public PEM accepted as private key")
	}
	k, err := ParsePublicKey(3, pubPEM)
	if err != nil || !k.Public.Equal(want.Public) {
		t.Errorf("public: %v", err)
	}
}

func TestDuplicateKeyIDs(t *testing.T) {
	a, _ := GenerateKey(1, newRand(1))
	b, _ := GenerateKey(1, newRand(2))
	if _, err := NewKeyring(a, b); apperr.KindOf(err) != apperr.Conflict {
		t.Errorf("two keys with id 1: %v", err)
	}
	if _, err := NewKeyring(Key{ID: 1, Public: a.Public}); err == nil {
		t.Error("active key without private half accepted")
	}
}

// publicPEM is k's public half as PKIX PEM, the form of a retired key's
// .pub file.
func publicPEM(t testing.TB, k Key) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.Public)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}
