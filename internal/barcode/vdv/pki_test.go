package vdv

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

var (
	devOnce sync.Once
	devPKI  *DevPKI
	devErr  error
)

// sharedDev is one generated development PKI for the package's tests.
func sharedDev(t testing.TB) *DevPKI {
	devOnce.Do(func() { devPKI, devErr = GenerateDevPKI(rand.Reader, now) })
	if devErr != nil {
		t.Fatal(devErr)
	}
	return devPKI
}

func TestCertBodyRoundTrip(t *testing.T) {
	p := sharedDev(t)
	c := p.Issuer.Info
	body, err := c.Body()
	if err != nil {
		t.Fatal(err)
	}
	if len(body) != 1+8+12+7+4+7+128+4 {
		t.Fatalf("body %d bytes", len(body))
	}
	back, err := ParseCertBody(body)
	if err != nil || back.CHR != DevOrgRef || back.CAR != DevCARef || back.Key.N.Cmp(c.Key.N) != 0 || !back.Expires.Equal(c.Expires) {
		t.Fatalf("%+v %v", back, err)
	}
	for name, mut := range map[string]func([]byte) []byte{
		"profile":    func(b []byte) []byte { b[0] = 9; return b },
		"filler":     func(b []byte) []byte { b[10] = 1; return b },
		"bcd":        func(b []byte) []byte { b[29] = 0x1A; return b },
		"month 13":   func(b []byte) []byte { b[30] = 0x13; return b },
		"short":      func(b []byte) []byte { return b[:len(b)-1] },
		"even e":     func(b []byte) []byte { b[len(b)-1] = 0; return b },
		"9-byte oid": func(b []byte) []byte { b[32] = 0x2A; return b },
	} {
		if _, err := ParseCertBody(mut(bytes.Clone(body))); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestChain(t *testing.T) {
	p := sharedDev(t)
	var tr Trust
	if _, err := tr.AddRoot(p.Root, true); err != nil {
		t.Fatal(err)
	}
	ca, err := tr.AddCA(p.CA, now)
	if err != nil || ca.CHR != DevCARef {
		t.Fatal(ca, err)
	}
	iss, err := NewIssuer(DevOrg, DevOrg, p.Issuer.Key, p.Issuer.Cert, &tr, now)
	if err != nil || !iss.Development || iss.Info.CAR != DevCARef {
		t.Fatal(iss, err)
	}
	// A CA certificate verifies only under its root.
	other, err := GenerateDevPKI(rand.Reader, now)
	if err != nil {
		t.Fatal(err)
	}
	var tr2 Trust
	if _, err := tr2.AddRoot(other.Root, false); err != nil {
		t.Fatal(err)
	}
	if _, err := tr2.AddCA(p.CA, now); err == nil {
		t.Fatal("a CA certificate verified under another root")
	}
	// The organisation certificate must verify under a trusted CA and
	// certify the configured key.
	if _, err := NewIssuer(DevOrg, DevOrg, p.Issuer.Key, p.Issuer.Cert, &tr2, now); err == nil {
		t.Fatal("organisation certificate accepted without its CA")
	}
	if _, err := NewIssuer(DevOrg, DevOrg, other.Issuer.Key, p.Issuer.Cert, &tr, now); err == nil || !strings.Contains(err.Error(), "does not certify") {
		t.Fatalf("another key: %v", err)
	}
	// Tampering with any byte of the signed CA certificate breaks it.
	for i := 6; i < len(p.CA); i += 17 {
		b := bytes.Clone(p.CA)
		b[i] ^= 0x40
		var tr3 Trust
		tr3.AddRoot(p.Root, true)
		if _, err := tr3.AddCA(b, now); err == nil {
			t.Fatalf("CA certificate altered at %d verifies", i)
		}
	}
	// Expiry: the last day counts, the day after does not.
	exp := ca.Expires
	var tr4 Trust
	tr4.AddRoot(p.Root, true)
	if _, err := tr4.AddCA(p.CA, time.Date(exp.Year(), exp.Month(), exp.Day(), 22, 59, 0, 0, time.UTC)); err != nil {
		t.Fatalf("on its last day: %v", err)
	}
	if _, err := tr4.AddCA(p.CA, exp.AddDate(0, 0, 1).Add(time.Hour)); err == nil {
		t.Fatal("expired CA accepted")
	}
	// A root must be unsigned and self-referencing.
	if _, err := tr4.AddRoot(p.CA, false); err == nil {
		t.Fatal("a signed certificate was accepted as a root")
	}
}

func TestDevPKIFilesAndConcurrentStarters(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	isss := make([]*Issuer, 3)
	errs := make([]error, 3)
	for i := range isss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tr Trust
			isss[i], _, errs[i] = LoadOrCreateDevPKI(dir, &tr, now)
		}()
	}
	wg.Wait()
	for i := range isss {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if isss[i].Key.N.Cmp(isss[0].Key.N) != 0 || !isss[i].Development {
			t.Fatal("starters disagree on the development key")
		}
	}
	var tr Trust
	iss, created, err := LoadOrCreateDevPKI(dir, &tr, now)
	if err != nil || created || iss.Key.N.Cmp(isss[0].Key.N) != 0 {
		t.Fatal(created, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
}

func TestLoadConfiguredIssuer(t *testing.T) {
	// A configured PKI is laid out like the development one but loaded as
	// the operator's: root file, CA file, ORG:PRODUCTORG:KEY:CERT.
	p := sharedDev(t)
	dir := t.TempDir()
	w := func(n string, b []byte) string {
		f := filepath.Join(dir, n)
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	root, ca, cert := w("root.cvc", p.Root), w("ca.cvc", p.CA), w("org.cvc", p.Issuer.Cert)
	key := w("key.pem", pemKey(p.Issuer.Key))
	var tr Trust
	if err := LoadTrust(&tr, root, []string{ca}, now); err != nil {
		t.Fatal(err)
	}
	iss, err := LoadIssuer("6310:6262:"+key+":"+cert, &tr, now)
	if err != nil || iss.Org != 6310 || iss.ProductOrg != 6262 || iss.Development {
		t.Fatal(iss, err)
	}
	for _, bad := range []string{"6310:" + key + ":" + cert, "x:1:" + key + ":" + cert, "0:1:" + key + ":" + cert,
		"6310:6262:" + key + ":" + ca, "6310:6262:" + cert + ":" + cert, "65000:1:" + key + ":" + cert} {
		if _, err := LoadIssuer(bad, &tr, now); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	var empty Trust
	if _, err := LoadIssuer("6310:6262:"+key+":"+cert, &empty, now); err == nil {
		t.Error("issuer accepted without a trusted CA")
	}
	if err := LoadTrust(&empty, ca, nil, now); err == nil {
		t.Error("a signed CA accepted as the root")
	}
	if _, err := LoadDevPKI(dir, &empty, now); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no dev PKI: %v", err)
	}
}
