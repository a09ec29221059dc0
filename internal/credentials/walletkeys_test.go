package credentials

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/smallstep/pkcs7"

	"github.com/farebox/farebox/internal/keyref"
	"github.com/farebox/farebox/internal/keyref/tokentest"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/wallet/google"
	"github.com/farebox/farebox/internal/wallet/google/googletest"
)

// TestApplePassKeyInToken: the pass certificate's key, imported into a
// SoftHSM2 token, signs the pass manifest (PKCS#7/CMS, RSA with SHA-256
// through CKM_RSA_PKCS); the signature verifies with openssl against the
// root and with the certificate, whose key is the one the token exports.
func TestApplePassKeyInToken(t *testing.T) {
	tk := tokentest.New(t)
	now := time.Now()
	c, err := apple.GenerateDevelopment("pass.com.example.tickets", "ABCDE12345", now)
	if err != nil {
		t.Fatal(err)
	}
	ref := tk.Import(t, "apple-pass", c.Key)
	if !c.Key.Public().(*rsa.PublicKey).Equal(c.Certificate.PublicKey) {
		t.Fatal("the imported key is not the certificate's")
	}
	dir := t.TempDir()
	write := func(name string, der []byte) string {
		p := filepath.Join(dir, name)
		_ = os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
		return p
	}
	cfg := Settings{ApplePassCert: write("pass.pem", c.Certificate.Raw), ApplePassKey: ref, AppleWWDRCert: write("wwdr.pem", c.WWDR.Raw)}
	b, _, err := LoadApple(cfg, now)
	if err != nil || b.Development() {
		t.Fatalf("configured with a token key: %v", err)
	}
	manifest := []byte(`{"pass.json":"0123456789abcdef0123456789abcdef01234567","note":"Fahrkarte 🚆 تذكرة"}`)
	sig, err := b.Sign(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := testtool.VerifyCMS(t, sig, manifest, c.Root.Raw); err != nil || !strings.Contains(out, "Verification successful") {
		t.Fatalf("openssl cms -verify: %v\n%s", err, out)
	}
	p7, err := pkcs7.Parse(sig)
	if err != nil {
		t.Fatal(err)
	}
	p7.Content = manifest
	if err := p7.Verify(); err != nil {
		t.Fatal(err)
	}
	// Another certificate's key in the token is refused at start.
	other, _ := apple.GenerateDevelopment("pass.com.example.tickets", "ABCDE12345", now)
	cfg.ApplePassCert = write("other.pem", other.Certificate.Raw)
	if _, _, err := LoadApple(cfg, now); err == nil || !strings.Contains(err.Error(), "does not belong") {
		t.Fatalf("a certificate of another key: %v", err)
	}
}

// TestAPNsKeyInToken: the APNs provider token (ES256) signed through a
// P-256 key generated in the token verifies with the token's public key.
func TestAPNsKeyInToken(t *testing.T) {
	tk := tokentest.New(t)
	ref := tk.URI(tokentest.Unique("apns"))
	if _, err := keyref.Generate(ref, "ec-p256"); err != nil {
		t.Fatal(err)
	}
	key, err := apple.LoadP8(ref)
	if err != nil {
		t.Fatal(err)
	}
	jwt, err := apple.SignProviderToken(key, "ABC123DEFG", "ABCDE12345", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(jwt, ".")
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		t.Fatalf("ES256 signature: %v (%d bytes)", err, len(sig))
	}
	d := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(key.Public().(*ecdsa.PublicKey), d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the provider token signed in the token does not verify")
	}
	rsaRef := tk.URI(tokentest.Unique("apns-rsa"))
	if _, err := keyref.Generate(rsaRef, "rsa-1024"); err != nil {
		t.Fatal(err)
	}
	if _, err := apple.LoadP8(rsaRef); err == nil {
		t.Fatal("an RSA key was accepted as the APNs key")
	}
}

// TestGoogleKeyInToken: a service-account file whose private_key is the
// `pkcs11:` URI of the key in the token; the OAuth2 JWT-bearer assertion
// (RS256) signed there is accepted by the stand-in of Google's token
// endpoint, which checks it with the public key alone.
func TestGoogleKeyInToken(t *testing.T) {
	tk := tokentest.New(t)
	ref := tk.URI(tokentest.Unique("google"))
	s, err := keyref.Generate(ref, "rsa-2048")
	if err != nil {
		t.Fatal(err)
	}
	const email = "wallet@partner.iam.gserviceaccount.com"
	srv := googletest.New(t, email, s.Public().(*rsa.PublicKey), nil)
	raw, _ := json.Marshal(map[string]string{"type": "service_account", "private_key_id": "0123abcd", "private_key": ref, "client_email": email})
	file := testtool.WriteFile(t, t.TempDir(), "sa.json", raw)
	set := Settings{DataDir: t.TempDir(), GoogleServiceAccount: file, GoogleIssuerID: "3388000000012345678", GoogleWalletAPI: true,
		GoogleAPIURL: srv.APIURL(), GoogleTokenURL: srv.TokenURL()}
	i, _, err := LoadGoogle(set)
	if err != nil {
		t.Fatal(err)
	}
	if !i.Account().PublicKey().Equal(s.Public()) {
		t.Fatal("the account's public key is not the token's")
	}
	c, err := LoadGoogleAPI(set, i)
	if err != nil || c == nil {
		t.Fatalf("API client: %v", err)
	}
	tok, err := c.Token(context.Background())
	if err != nil || tok == "" || srv.Exchanges() != 1 {
		t.Fatalf("token exchange with an assertion signed in the token: %q %v", tok, err)
	}
	bad, _ := json.Marshal(map[string]string{"type": "service_account", "private_key": tk.URI("no-such-key"), "client_email": email})
	if _, err := google.ParseServiceAccount(bad); err == nil || !strings.Contains(err.Error(), "no private key") {
		t.Fatalf("a missing token key: %v", err)
	}
}
