package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/wallet/google"
	"github.com/farebox/farebox/internal/wallet/google/googletest"
)

// TestKeysRotateRevokeEndToEnd runs the operator's runbook against a
// running service with the Google Wallet API configured (a local
// stand-in): the traveller's pass is saved through a short link; `farebox
// keys rotate`, then `farebox keys revoke 1` after a compromise. The
// running service picks the keys up by itself, the traveller's ticket GET
// returns a barcode signed with the new key that `farebox inspect` accepts,
// the old barcode is rejected with the reason by `inspect --revocations`,
// and the saved Google object carries the new barcode.
func TestKeysRotateRevokeEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		opts := storetest.Options(t, engine)
		dir := t.TempDir()
		write := func(name string, b []byte) string { return testtool.WriteFile(t, dir, name, b) }
		raw, err := google.GenerateDevServiceAccount()
		if err != nil {
			t.Fatal(err)
		}
		sa0, _ := google.ParseServiceAccount(raw)
		const email = "wallet@farebox-e2e.iam.gserviceaccount.com"
		gs := googletest.New(t, email, sa0.PublicKey(), nil)
		raw = googletest.PartnerAccount(t, raw, email, gs.TokenURL())
		env := map[string]string{"FAREBOX_DATA_DIR": t.TempDir(), "FAREBOX_ADDR": "127.0.0.1:0",
			"FAREBOX_GOOGLE_SERVICE_ACCOUNT": write("sa.json", raw), "FAREBOX_GOOGLE_ISSUER_ID": "3388000000022000009",
			"FAREBOX_GOOGLE_API_URL": gs.APIURL(), "FAREBOX_GOOGLE_LOGO_URL": "https://tickets.example.org/logo.png"}
		if engine == store.Postgres {
			env["FAREBOX_DATABASE_URL"] = opts.URL + "&search_path=" + opts.Schema
		}
		var created struct {
			APIKey string `json:"api_key"`
		}
		_ = json.Unmarshal([]byte(cli(t, env, "accounts", "create", "--create", "--name", "Keys GmbH", "--json")), &created)
		in := startServe(t, env)
		call := httpCaller(t, in.addr)
		tid := activateMonthly(t, call, created.APIKey, `{"photo_id_lite":{"first_name":"Jürgen","last_name":"Müller","birth_date":"1980-02-29"}}`)
		payloadOf := func() []byte {
			var tk struct {
				Ticket struct {
					Properties struct {
						Barcode struct{ Payload string } `json:"inspection_barcode"`
					} `json:"properties"`
				} `json:"ticket"`
			}
			_ = json.Unmarshal(call("PATCH", "/v9/ticketing/tickets/"+tid+".json", "", ""), &tk)
			p, err := barcode.FromText(tk.Ticket.Properties.Barcode.Payload)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		oldPayload := payloadOf()
		link := string(call("GET", "/v9/ticketing/passes/google_wallet/"+tid+".json", "", ""))
		objectID := "3388000000022000009." + tid
		if len(link) >= 1800 || gs.Object(objectID) == nil || !strings.Contains(in.logs.String(), "kept current through the REST API") {
			t.Fatalf("short link %d characters, object %v", len(link), gs.Object(objectID) != nil)
		}
		waitFor := func(what string, ok func() bool) {
			t.Helper()
			for deadline := time.Now().Add(60 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("waiting for %s", what)
				}
			}
		}
		fails := func(want string, args ...string) {
			t.Helper()
			var out, errb bytes.Buffer
			err := run(context.Background(), args, envFrom(env), nil, &out, &errb)
			if err == nil || !strings.Contains(err.Error()+errb.String(), want) {
				t.Errorf("farebox %s: %v %s, want %q", strings.Join(args, " "), err, errb.String(), want)
			}
		}
		fails("run `farebox keys rotate --publish-ahead 0` first", "keys", "revoke", "1", "--reason", "kompromittiert")
		fails("usage", "keys", "revoke", "--reason", "kompromittiert")
		fails("usage", "keys", "rotate", "1")
		fails("usage", "keys", "burn")
		fails("environment must be", "keys", "rotate", "--environment", "staging")

		out := cli(t, env, "keys", "rotate", "--publish-ahead", "0") // the compromise below needs a signing successor
		if !strings.Contains(out, "new live inspection key 2 signs new tickets; 1 valid tickets keep key 1") {
			t.Errorf("keys rotate: %q", out)
		}
		var rotated []byte
		waitFor("keys.json with key 2", func() bool {
			rotated = call("GET", "/v1/inspection/keys.json", "", "")
			kr, err := barcode.ParseKeySet(rotated)
			_, has := kr.Lookup(2)
			return err == nil && has
		})
		deviceKeys := write("keys-after-rotation.json", rotated)
		if !bytes.Equal(payloadOf(), oldPayload) {
			t.Error("rotation changed the issued ticket's barcode")
		}
		if out := cli(t, env, "keys", "list"); !strings.Contains(out, "ACTIVE") || !strings.Contains(out, "1 valid tickets") {
			t.Errorf("keys list: %s", out)
		}
		fails("is not an inspection key id", "keys", "revoke", "abc", "--reason", "kompromittiert")
		fails("no inspection key 999", "keys", "revoke", "999", "--reason", "kompromittiert")
		fails("reason", "keys", "revoke", "1")

		out = cli(t, env, "keys", "revoke", "1", "--reason", "Schlüssel kompromittiert")
		if !strings.Contains(out, "revoked inspection key 1: 1 valid tickets are signed with key 2") || !strings.Contains(out, "deleted from the key store") {
			t.Errorf("keys revoke: %q", out)
		}
		var newPayload []byte
		waitFor("the re-signed barcode", func() bool {
			newPayload = payloadOf()
			c, err := barcode.Verify(newPayload, mustKeySet(t, rotated))
			return err == nil && c.KeyID == 2
		})
		feedURL := "http://" + in.addr + "/v1/inspection/revocations.json"
		inspect := func(payload []byte, args ...string) (string, error) {
			return inspectRun(env, nil, append(args, write("payload.txt", []byte(barcode.Text(payload))))...)
		}
		// The traveller's ticket now: accepted, with the feed and with the service's keys.
		for _, args := range [][]string{{"--keys", deviceKeys, "--revocations", feedURL}, {"--revocations", feedURL}} {
			if out, err := inspect(newPayload, args...); err != nil || !strings.Contains(out, "ACCEPTED") || !strings.Contains(out, "Passenger:   Jürgen Müller") {
				t.Errorf("re-signed ticket %v: %v\n%s", args, err, out)
			}
		}
		// The old barcode: rejected, saying why.
		out, err = inspect(oldPayload, "--keys", deviceKeys, "--revocations", feedURL)
		if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "REVOKED KEY: signed with inspection key 1, revoked: Schlüssel kompromittiert") ||
			!strings.Contains(out, "REJECTED: signed with revoked inspection key 1: Schlüssel kompromittiert") {
			t.Errorf("old barcode with the feed: %v\n%s", err, out)
		}
		out, err = inspect(oldPayload, "--revocations", feedURL)
		if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "NOT GENUINE: it is signed with an unknown key") || !strings.Contains(out, "REVOKED KEY") {
			t.Errorf("old barcode with the service's keys: %v\n%s", err, out)
		}
		// The saved Google pass follows through the job queue.
		waitFor("the Google object's new barcode", func() bool {
			o := gs.Object(objectID)
			return o != nil && o["barcode"].(map[string]any)["value"] == barcode.Text(newPayload)
		})
		// Revoking it again: the key is gone.
		fails("no inspection key 1", "keys", "revoke", "1", "--reason", "kompromittiert")
		var errb bytes.Buffer
		if err := run(context.Background(), []string{"keys", "prune"}, envFrom(env), nil, io.Discard, &errb); err != nil {
			t.Errorf("keys prune: %v %s", err, errb.String())
		}
	})
}

func mustKeySet(t *testing.T, b []byte) *barcode.Keyring {
	t.Helper()
	kr, err := barcode.ParseKeySet(b)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}
