package uic

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/testtool"
)

// TestOpenSSLRecipeKeys runs the recipes docs/barcodes.md gives with the
// real openssl binary (OpenSSL 3's gendsa writes PKCS#8 "PRIVATE KEY"),
// loads each key as the service does (LoadIssuer) and signs and verifies
// a container with it; the old "DSA PRIVATE KEY" form keeps loading.
func TestOpenSSLRecipeKeys(t *testing.T) {
	openssl := testtool.Need(t, "openssl", "openssl")
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(openssl, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	recipes := []struct {
		name    string
		version int
		steps   [][]string
	}{
		{"container 02", 2, [][]string{
			{"dsaparam", "-out", "params.pem", "2048"},
			{"gendsa", "-out", "key.pem", "params.pem"},
		}},
		{"container 01", 1, [][]string{
			{"genpkey", "-genparam", "-algorithm", "DSA", "-pkeyopt", "dsa_paramgen_bits:1024",
				"-pkeyopt", "dsa_paramgen_q_bits:160", "-out", "params.pem"},
			{"gendsa", "-out", "key.pem", "params.pem"},
		}},
	}
	for _, r := range recipes {
		t.Run(r.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, s := range r.steps {
				run(dir, s...)
			}
			keyFile := filepath.Join(dir, "key.pem")
			b, err := os.ReadFile(keyFile)
			if err != nil {
				t.Fatal(err)
			}
			if blk, _ := pem.Decode(b); blk == nil || blk.Type != "PRIVATE KEY" {
				t.Logf("openssl wrote %q (not PKCS#8): the PKCS#8 path is not exercised by this openssl", blk.Type)
			}
			iss, err := LoadIssuer("1080:00042:"+keyFile, "Test Bahn")
			if err != nil {
				t.Fatalf("documented key refused: %v", err)
			}
			if iss.Version != r.version || iss.RICS != 1080 || iss.KeyID != 42 || iss.Development {
				t.Fatalf("issuer %+v", iss)
			}
			// openssl's own view of the key agrees with ours.
			cmd := exec.Command(openssl, "pkey", "-in", keyFile, "-pubout", "-outform", "DER")
			der, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			pub, err := ParsePublicKey(der)
			if err != nil {
				t.Fatal(err)
			}
			if pub.Y.Cmp(iss.Key.Y) != 0 || pub.P.Cmp(iss.Key.P) != 0 || pub.Q.Cmp(iss.Key.Q) != 0 || pub.G.Cmp(iss.Key.G) != 0 {
				t.Fatal("the public key openssl derives differs from ours")
			}
			bc, err := Issue(sampleClaims(), Product{}, iss, issued)
			if err != nil {
				t.Fatal(err)
			}
			var trust Trust
			trust.Add(1080, 42, pub, false)
			rep := Inspect(bc, &trust, issued.AddDate(0, 0, 10))
			if !rep.Genuine || rep.Test {
				t.Fatalf("barcode signed with the openssl key: %+v", rep)
			}
			// The same key in the traditional form loads to the same key.
			trad, err := MarshalKeyPEM(iss.Key)
			if err != nil {
				t.Fatal(err)
			}
			k2, v2, err := ParseKeyPEM(trad)
			if err != nil || v2 != r.version || k2.X.Cmp(iss.Key.X) != 0 || k2.Y.Cmp(iss.Key.Y) != 0 {
				t.Fatalf("traditional form: v%d %v", v2, err)
			}
		})
	}
}

// TestPKCS8Refusals: PKCS#8 keys that are no usable DSA key are refused
// with a reason, never loaded.
func TestPKCS8Refusals(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	k := devIssuer(t, 1).Key
	good := func(x any, params any) []byte {
		xb, pb := testtool.Must(asn1.Marshal(x))(t), testtool.Must(asn1.Marshal(params))(t)
		return testtool.Must(asn1.Marshal(pkcs8{Version: 0, Algorithm: pkixAlg(pb), PrivateKey: xb}))(t)
	}
	type dss struct{ P, Q, G any }
	pemOf := func(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}) }

	// Our own PKCS#8 encoding of a good key loads (the positive control).
	if got, v, err := ParseKeyPEM(pemOf(good(k.X, dss{k.P, k.Q, k.G}))); err != nil || v != 1 || got.Y.Cmp(k.Y) != 0 {
		t.Fatalf("hand-made PKCS#8 DSA key: v%d %v", v, err)
	}
	cases := map[string]struct {
		der  []byte
		want string
	}{
		"ECDSA key":          {ecDER, "use DSA"},
		"x not below q":      {good(k.Q, dss{k.P, k.Q, k.G}), "inconsistent"},
		"x as text":          {good("12345", dss{k.P, k.Q, k.G}), "private value"},
		"parameters missing": {good(k.X, asn1.NullRawValue), "parameters"},
		"trailing bytes":     {append(good(k.X, dss{k.P, k.Q, k.G}), 0), "malformed PKCS#8"},
		"not DER":            {[]byte{0x30, 0x03, 0x02}, "malformed PKCS#8"},
	}
	for name, c := range cases {
		_, _, err := ParseKeyPEM(pemOf(c.der))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, c.want)
		}
	}
}

func pkixAlg(params []byte) pkix.AlgorithmIdentifier {
	return pkix.AlgorithmIdentifier{Algorithm: oidDSA, Parameters: asn1.RawValue{FullBytes: params}}
}
