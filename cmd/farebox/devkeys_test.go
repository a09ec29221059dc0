package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode/uic"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
)

// serveOutcome starts serve with env and reports whether it came up (then
// it is stopped at once) or the error it ended with, and its log.
func serveOutcome(t *testing.T, env map[string]string) (err error, logs string) {
	t.Helper()
	var buf syncBuffer
	cancel, ready, done := goServe(env, &buf)
	defer cancel()
	select {
	case <-ready:
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("serve ended with %v after starting\n%s", err, buf.String())
		}
		return nil, buf.String()
	case err := <-done:
		if err == nil {
			t.Fatal("serve ended without error before it was ready")
		}
		return err, buf.String()
	case <-time.After(120 * time.Second):
		t.Fatal("serve neither started nor failed")
	}
	return nil, ""
}

// TestDevelopmentBarcodeKeysRefusedInLive: a service that can issue live
// tickets (a live API key exists) refuses to start while a product with the
// UIC or VDV profile would be signed with a development key, naming each
// such product and the flag; --allow-development-barcode-keys starts it with
// a warning; a service with only test keys, or with the profile's issuer
// configured, starts without it. Both engines.
func TestDevelopmentBarcodeKeysRefusedInLive(t *testing.T) {
	t.Parallel()
	var errb bytes.Buffer
	_ = run(context.Background(), []string{"serve", "--help"}, envFrom(nil), nil, io.Discard, &errb)
	for _, want := range []string{"-allow-development-barcode-keys", "FAREBOX_ALLOW_DEVELOPMENT_BARCODE_KEYS", "development UIC/VDV key"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
	// A configured UIC issuer (a DSA-1024 key as the UIC would register it).
	keyDir := t.TempDir()
	iss, err := uic.GenerateDevIssuer(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	pemKey, err := uic.MarshalKeyPEM(iss.Key)
	if err != nil {
		t.Fatal(err)
	}
	uicKey := testtool.WriteFile(t, keyDir, "uic.pem", pemKey)

	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		env, _ := engineEnv(t, engine)
		if err, logs := serveOutcome(t, env); err != nil { // a fresh install: the default catalog
			t.Fatalf("fresh install: %v\n%s", err, logs)
		}
		f := exportCatalog(t, env)
		var monthly, day []string
		for i := range f.Products {
			switch p := &f.Products[i]; p.TicketType {
			case catalog.TicketMonth:
				p.BarcodeProfile, p.BarcodeProductNumber = catalog.BarcodeUIC, 9999
				monthly = append(monthly, p.ID)
			case catalog.TicketDay:
				if len(day) == 0 {
					p.BarcodeProfile, p.BarcodeProductNumber = catalog.BarcodeVDV, 4711
					day = append(day, p.ID)
				}
			}
		}
		if len(monthly) == 0 || len(day) == 0 {
			t.Fatal("the default catalog has no monthly or day product")
		}
		b, _ := json.Marshal(f)
		cli(t, env, "catalog", "import", testtool.WriteFile(t, t.TempDir(), "catalog.json", b))

		// No account yet, then only a test key: nothing live to sign.
		if err, logs := serveOutcome(t, env); err != nil {
			t.Fatalf("no live key: %v\n%s", err, logs)
		}
		cli(t, env, "accounts", "create", "--create", "--name", "Probe", "--test")
		if err, logs := serveOutcome(t, env); err != nil {
			t.Fatalf("only a test key: %v\n%s", err, logs)
		}

		// A live key: refused, naming every product and the way out.
		createAccount(t, env, "Live GmbH")
		err, _ := serveOutcome(t, env)
		if err == nil {
			t.Fatal("a live service started with development UIC and VDV keys")
		}
		for _, want := range append(append([]string{"refusing to start", "--allow-development-barcode-keys", "--uic-issuer", "--vdv-issuer",
			catalog.BarcodeUIC, catalog.BarcodeVDV}, monthly...), day...) {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("refusal %q does not name %q", err, want)
			}
		}

		// The explicit flag starts it, with a warning naming the products.
		flagged := withEnv(env, "FAREBOX_ALLOW_DEVELOPMENT_BARCODE_KEYS", "true")
		err, logs := serveOutcome(t, flagged)
		if err != nil {
			t.Fatalf("with the flag: %v", err)
		}
		if !strings.Contains(logs, "live tickets are signed with development barcode keys") || !strings.Contains(logs, monthly[0]) {
			t.Errorf("no warning with the flag:\n%s", logs)
		}
		if err, _ := serveOutcome(t, withEnv(env, "FAREBOX_ALLOW_DEVELOPMENT_BARCODE_KEYS", "yes please")); err == nil ||
			!strings.Contains(err.Error(), "--allow-development-barcode-keys") {
			t.Errorf("a malformed flag value: %v", err)
		}

		// The UIC issuer configured: only the VDV product is refused.
		withUIC := withEnv(env, "FAREBOX_UIC_ISSUER", "1080:42:"+uicKey)
		err, _ = serveOutcome(t, withUIC)
		if err == nil || !strings.Contains(err.Error(), day[0]) || strings.Contains(err.Error(), monthly[0]) {
			t.Errorf("UIC configured, VDV development: %v", err)
		}
		// With the VDV product back on farebox's barcode the configured UIC issuer suffices.
		for i := range f.Products {
			if f.Products[i].Barcode() == catalog.BarcodeVDV {
				f.Products[i].BarcodeProfile, f.Products[i].BarcodeProductNumber = "", 0
			}
		}
		b, _ = json.Marshal(f)
		cli(t, env, "catalog", "import", testtool.WriteFile(t, t.TempDir(), "catalog.json", b))
		if err, logs := serveOutcome(t, withUIC); err != nil {
			t.Fatalf("configured UIC issuer and no VDV product: %v\n%s", err, logs)
		}
	})
}

func withEnv(env map[string]string, kv ...string) map[string]string {
	e := map[string]string{}
	for k, v := range env {
		e[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		e[kv[i]] = kv[i+1]
	}
	return e
}
