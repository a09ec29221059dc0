package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/keyref"
	"github.com/farebox/farebox/internal/keyref/tokentest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
)

// tokenStoreURI is the `pkcs11:` URI of the whole test token (no object):
// the inspection key store.
func tokenStoreURI(tk tokentest.Token) string {
	return "pkcs11:token=" + tk.Label + "?module-path=" + tokentest.Module + "&pin-value=" + tk.PIN
}

// TestServeKeysInToken runs the built binary with the inspection keys and
// the books key in a SoftHSM2 token: the first start generates the
// inspection keys inside the token, a ticket's barcode signed there is
// genuine by the published keys.json alone, a restart serves the same
// keys, and a books checkpoint signed in the token verifies with the
// token's public key. The token, not the database, holds the keys, so one
// engine (SQLite) is enough.
func TestServeKeysInToken(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Binary)
	tk := tokentest.New(t)
	booksRef := tk.URI(tokentest.Unique("books"))
	if _, err := keyref.Generate(booksRef, "ed25519"); err != nil {
		t.Fatal(err)
	}
	env, dataDir := engineEnv(t, store.SQLite, "FAREBOX_INSPECTION_KEYS", tokenStoreURI(tk), "FAREBOX_BOOKS_KEY", booksRef, "SOFTHSM2_CONF", tk.Conf)
	apiKey := createAccount(t, env, "Token GmbH")
	srv := startChild(t, env)
	if !strings.Contains(srv.logs.String(), `"source":"token"`) {
		t.Fatalf("the start-up log does not say the inspection keys come from the token:\n%s", srv.logs.String())
	}
	if _, err := os.Stat(dataDir + "/keys/inspection"); err == nil {
		t.Fatal("inspection key files were written to the data dir")
	}
	call := httpCaller(t, srv.addr)
	id := activateMonthly(t, call, apiKey, `{"photo_id_lite":{"first_name":"Ζωή","last_name":"محمد","birth_date":"1990-01-31"}}`)
	text := fetchTicket(t, call, id).Ticket.Properties.Barcode.Payload
	keysJSON := call("GET", "/v1/inspection/keys.json", "", "")
	srv.term()
	again := startChild(t, env)
	if got := httpCaller(t, again.addr)("GET", "/v1/inspection/keys.json", "", ""); string(got) != string(keysJSON) {
		t.Fatalf("a restart changed the published keys:\n%s\n%s", keysJSON, got)
	}
	again.term()
	payload, err := barcode.FromText(text)
	if err != nil {
		t.Fatal(err)
	}
	keysFile := testtool.WriteFile(t, t.TempDir(), "keys.json", keysJSON)
	out, err := inspectRun(env, payload, "--keys", keysFile, "-")
	if err != nil || !strings.Contains(out, "GENUINE: signed by inspection key 1") || !strings.Contains(out, "محمد") {
		t.Fatalf("inspect with keys.json: %v\n%s", err, out)
	}
	// The books: a checkpoint signed in the token, checked by verify
	// with the public key read from the token.
	cli(t, env, "books", "checkpoint")
	if out := cli(t, env, "books", "verify"); !strings.HasSuffix(out, "0 findings\n") {
		t.Fatalf("books verify: %s", out)
	}
}

// serveExit runs the built binary's serve with env and returns its log
// when it exits; it fails the test when serve starts listening instead.
func serveExit(t *testing.T, env map[string]string) string {
	t.Helper()
	cmd := serveCommand(t, env)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		var m struct{ Msg string }
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Msg == "farebox listening" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("serve started:\n%s", log.String())
		}
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("serve exited without error:\n%s", log.String())
	}
	return log.String()
}

// TestServeRefusesMissingOrLockedToken: a token that is missing, or that
// refuses the PIN, stops serve at start with an error naming the key; the
// PIN never shows in the log. Each case starts a fresh process, so the
// token really is asked (a process logs in to a token once).
func TestServeRefusesMissingOrLockedToken(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Binary)
	tk := tokentest.New(t)
	booksRef := tk.URI(tokentest.Unique("books"))
	if _, err := keyref.Generate(booksRef, "ed25519"); err != nil {
		t.Fatal(err)
	}
	wrongPIN := func(ref string) string { return strings.Replace(ref, "pin-value="+tk.PIN, "pin-value=0000", 1) }
	noToken := func(ref string) string { return strings.Replace(ref, "token="+tk.Label, "token=unplugged", 1) }
	cases := map[string]struct {
		key, ref string
		want     []string
	}{
		"books key, wrong PIN":       {"FAREBOX_BOOKS_KEY", wrongPIN(booksRef), []string{"books key", "refused the PIN (CKR_PIN_INCORRECT)"}},
		"books key, missing token":   {"FAREBOX_BOOKS_KEY", noToken(booksRef), []string{"books key", `no token labelled "unplugged"`}},
		"books key, missing key":     {"FAREBOX_BOOKS_KEY", tk.URI("no-such-key"), []string{"books key", `no private key labelled "no-such-key"`}},
		"inspection keys, wrong PIN": {"FAREBOX_INSPECTION_KEYS", wrongPIN(tokenStoreURI(tk)), []string{"--inspection-keys", "refused the PIN"}},
		"inspection keys, no token":  {"FAREBOX_INSPECTION_KEYS", noToken(tokenStoreURI(tk)), []string{"--inspection-keys", `no token labelled "unplugged"`}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			env, _ := engineEnv(t, store.SQLite, c.key, c.ref, "SOFTHSM2_CONF", tk.Conf)
			cli(t, env, "migrate", "--create")
			log := serveExit(t, env)
			for _, w := range c.want {
				if !strings.Contains(log, w) {
					t.Errorf("the start-up error lacks %q:\n%s", w, log)
				}
			}
			if strings.Contains(log, "pin-value=0000") || strings.Contains(log, "pin-value="+tk.PIN) {
				t.Errorf("the log shows the PIN:\n%s", log)
			}
		})
	}
}
