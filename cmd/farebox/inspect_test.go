package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/barcodetest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
)

// inspectRun runs `farebox inspect` and returns its stdout and error.
func inspectRun(env map[string]string, stdin []byte, args ...string) (string, error) {
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"inspect"}, args...), envFrom(env), bytes.NewReader(stdin), &out, &errb)
	return out.String() + errb.String(), err
}

// TestServeWalletsAndInspect starts the service with nothing configured on
// both engines: it generates inspection keys (data dir / database) and
// development wallet credentials, says so in the log, serves keys.json and
// passes; `farebox inspect` verifies a real ticket's payload and a PNG of
// its code with the service's keys and with the published keys.json.
func TestServeWalletsAndInspect(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		env, dataDir := engineEnv(t, engine, "FAREBOX_ADDR", "127.0.0.1:0")
		apiKey := createAccount(t, env, "Inspect GmbH")
		in := startServe(t, env)
		addr, logs := in.addr, in.logs
		for _, want := range []string{"passes will not install on real devices", "generated inspection barcode keys", "Google rejects its save links",
			"show the development brand"} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("startup log lacks %q", want)
			}
		}
		_, inDataDir := os.Stat(filepath.Join(dataDir, "keys", "inspection", "inspection-1.key"))
		if (engine == store.SQLite) != (inDataDir == nil) {
			t.Errorf("%s: inspection key file in the data dir: %v", engine, inDataDir)
		}
		call := httpCaller(t, addr)
		var act struct{ TicketID string }
		act.TicketID = activateMonthly(t, call, apiKey,
			`{"photo_id_lite":{"first_name":"Jürgen","last_name":"Müller","birth_date":"1980-02-29"}}`)
		ticket := fetchTicket(t, call, act.TicketID)
		text := ticket.Ticket.Properties.Barcode.Payload
		payload, err := barcode.FromText(text)
		if err != nil {
			t.Fatalf("ticket payload %q: %v", text, err)
		}
		keysJSON := call("GET", "/v1/inspection/keys.json", "", "")
		if err := in.stop(); err != nil {
			t.Fatalf("serve: %v", err)
		}

		dir := t.TempDir()
		write := func(name string, b []byte) string { return testtool.WriteFile(t, dir, name, b) }
		png, err := barcode.PNG(payload, 4, 4)
		if err != nil {
			t.Fatal(err)
		}
		keysFile := write("keys.json", keysJSON)
		// The image served in ticket.properties, as it is (4 px per module, quiet zone).
		servedFile := write("served.png", ticket.png(t))
		for name, args := range map[string][]string{
			"text, service keys": {write("payload.txt", []byte(text+"\n"))},
			"png, service keys":  {write("code.png", png)},
			"binary via stdin":   {"-"},
			"png, keys.json":     {"--keys", keysFile, filepath.Join(dir, "code.png")},
			"served png":         {"--keys", keysFile, servedFile},
		} {
			out, err := inspectRun(env, payload, args...)
			if err != nil {
				t.Errorf("%s: %v\n%s", name, err, out)
			}
			for _, want := range []string{"GENUINE: signed by inspection key 1", "VALID NOW", "Passenger:   Jürgen Müller", "Born:        1980-02-29",
				"Ticket:      " + act.TicketID, "ACCEPTED"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s: output lacks %q:\n%s", name, want, out)
				}
			}
		}
		// Tampered: one flipped bit.
		bad := append([]byte(nil), payload...)
		bad[30] ^= 0x04
		out, err := inspectRun(env, bad, "-")
		if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "NOT GENUINE") || exitCode(err) == 0 {
			t.Errorf("tampered payload: %v\n%s", err, out)
		}
		// Expired at a later instant.
		out, err = inspectRun(env, payload, "--at", "2030-01-01T00:00:00Z", "-")
		if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "EXPIRED") {
			t.Errorf("expired: %v\n%s", err, out)
		}
		// The end is inclusive (docs/rules.md): valid in its last
		// second, expired one second later.
		end, err := time.Parse(time.RFC3339, ticket.ValidUntil)
		if err != nil {
			t.Fatalf("valid_until %q: %v", ticket.ValidUntil, err)
		}
		for _, at := range []time.Time{end, end.Add(999 * time.Millisecond)} {
			out, err = inspectRun(env, payload, "--at", at.Format(time.RFC3339Nano), "-")
			if err != nil || !strings.Contains(out, "VALID NOW") || !strings.Contains(out, "ACCEPTED") {
				t.Errorf("--at %s (valid_until %s): %v\n%s", at.Format(time.RFC3339Nano), ticket.ValidUntil, err, out)
			}
		}
		out, err = inspectRun(env, payload, "--at", end.Add(time.Second).Format(time.RFC3339), "-")
		if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "EXPIRED") {
			t.Errorf("--at valid_until + 1 s: %v\n%s", err, out)
		}
		// A valid Aztec code with ECI 899 (binary) is reported, not a crash.
		eci, err := barcodetest.AztecPNG([]byte("farebox ECI 899"), 899, 4)
		if err != nil {
			t.Fatal(err)
		}
		out, err = inspectRun(env, nil, "--keys", keysFile, write("eci899.png", eci))
		if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "NOT GENUINE: the input is no inspection barcode") ||
			!strings.Contains(out, "ECI") {
			t.Errorf("ECI 899 code: %v\n%s", err, out)
		}
		// Garbage input.
		if out, err = inspectRun(env, []byte("hello"), "-"); !errors.Is(err, errNotAcceptable) {
			t.Errorf("garbage: %v\n%s", err, out)
		}

		// The operator revokes the ticket; an inspection with the revocation
		// feed (a saved file or its URL) rejects it and says why.
		var errb bytes.Buffer
		if err := run(context.Background(), []string{"tickets", "revoke", act.TicketID}, envFrom(env), nil, io.Discard, &errb); err == nil {
			t.Error("tickets revoke without --reason succeeded")
		}
		if got := cli(t, env, "tickets", "revoke", act.TicketID, "--reason", "Fahrgeld erstattet"); !strings.Contains(got, "revoked "+act.TicketID) {
			t.Errorf("tickets revoke: %q", got)
		}
		ctx2, cancel2 := context.WithCancel(context.Background())
		defer cancel2()
		ready2, done2 := make(chan string, 1), make(chan error, 1)
		go func() { done2 <- serve(ctx2, nil, envFrom(env), io.Discard, logs, ready2) }()
		select {
		case addr = <-ready2:
		case err := <-done2:
			t.Fatalf("second serve ended: %v\n%s", err, logs.String())
		case <-time.After(60 * time.Second):
			t.Fatal("second server did not start")
		}
		call = httpCaller(t, addr) // the second instance
		feedURL := "http://" + addr + "/v1/inspection/revocations.json"
		feedFile := write("revocations.json", call("GET", "/v1/inspection/revocations.json", "", ""))
		for _, src := range []string{feedFile, feedURL} {
			out, err := inspectRun(env, nil, "--keys", keysFile, "--revocations", src, servedFile)
			if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "REVOKED: Fahrgeld erstattet (revoked at ") ||
				!strings.Contains(out, "REJECTED: the ticket was revoked: Fahrgeld erstattet") || strings.Contains(out, "ACCEPTED") {
				t.Errorf("--revocations %s: %v\n%s", src, err, out)
			}
		}
		cancel2()
		if err := <-done2; err != nil {
			t.Fatalf("second serve: %v", err)
		}
		// A feed that does not verify is an error, not a silent pass.
		forged := write("forged.json", bytes.Replace(mustRead(t, feedFile), []byte("Fahrgeld"), []byte("Fahrgelt"), 1))
		if out, err := inspectRun(env, nil, "--keys", keysFile, "--revocations", forged, servedFile); err == nil || errors.Is(err, errNotAcceptable) ||
			!strings.Contains(err.Error(), "signature does not verify") {
			t.Errorf("forged feed: %v\n%s", err, out)
		}
	})
}

// TestInspectTestTicket: a test ticket is genuine but rejected unless --allow-test.
func TestInspectTestTicket(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kr, _, err := barcode.LoadOrCreateDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	payload, _, err := barcode.SignWith(barcode.Claims{TicketID: "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f", ProductID: "p", ProductName: "Deutschlandticket",
		ValidFrom: now.Add(-time.Hour), ValidUntil: now.Add(time.Hour), FirstName: "Erika", LastName: "Test", Environment: barcode.EnvTest}, kr, 0)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FAREBOX_INSPECTION_KEYS": dir}
	out, err := inspectRun(env, payload, "-")
	if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "TEST TICKET") || !strings.Contains(out, "REJECTED") {
		t.Errorf("test ticket without --allow-test: %v\n%s", err, out)
	}
	if out, err = inspectRun(env, payload, "--allow-test", "-"); err != nil || !strings.Contains(out, "ACCEPTED") {
		t.Errorf("test ticket with --allow-test: %v\n%s", err, out)
	}
	// No keys anywhere: a clear error, nothing generated.
	empty := t.TempDir()
	if _, err := inspectRun(map[string]string{"FAREBOX_DATA_DIR": empty}, payload, "-"); err == nil || !strings.Contains(err.Error(), "inspection keys") {
		t.Errorf("no keys: %v", err)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("inspect created files: %v", ents)
	}
}

// TestServeWalletSettings: the wallet settings are listed, and a partial
// Apple configuration stops the start with a clear message.
func TestServeWalletSettings(t *testing.T) {
	t.Parallel()
	var errb bytes.Buffer
	_ = run(context.Background(), []string{"serve", "--help"}, envFrom(nil), nil, io.Discard, &errb)
	for _, want := range []string{"-inspection-keys", "FAREBOX_INSPECTION_KEYS", "FAREBOX_APPLE_PASS_CERT", "FAREBOX_APPLE_WWDR_CERT",
		"FAREBOX_GOOGLE_SERVICE_ACCOUNT", "FAREBOX_GOOGLE_ISSUER_ID", "FAREBOX_GOOGLE_WALLET_ORIGINS", "FAREBOX_ADVERTISE_DEVELOPMENT_WALLETS"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
	serveStops(t, "partial Apple configuration", map[string]string{"FAREBOX_APPLE_PASS_CERT": "/nonexistent/pass.pem"}, "--apple-pass-key")
	serveStops(t, "bad boolean", map[string]string{"FAREBOX_ADVERTISE_DEVELOPMENT_WALLETS": "maybe"}, "advertise-development-wallets")
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
