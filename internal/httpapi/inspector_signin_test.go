package httpapi_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/barcode/dynamic"
	"github.com/farebox/farebox/internal/httpapi"
)

const signInPath = "/v1/inspection/sign-in.json"

// TestInspectorSignIn: the inspector app's sign-in (docs/inspect.md) gives
// a bearer token that posts inspection records like a device token and
// opens nothing else; a wrong password, an inspector without one, a
// revoked inspector and a changed password all refuse; failures are
// throttled; an Idempotency-Key is refused (the token must not replay).
func TestInspectorSignIn(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		inspector(t, e, "Kontrolle Nord")
		inspector(t, e, "Ohne Passwort")
		if err := e.WebUsers.SetInspectorPassword(ctx, "Kontrolle Nord", "short"); err == nil {
			t.Fatal("a short password was taken")
		}
		if err := e.WebUsers.SetInspectorPassword(ctx, "nobody", "correct horse battery"); err == nil {
			t.Fatal("a password for nobody was taken")
		}
		if err := e.WebUsers.SetInspectorPassword(ctx, "Kontrolle Nord", "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		wrong := e.Do(apitest.Req{Method: "POST", Path: signInPath, Body: map[string]any{"name": "Kontrolle Nord", "password": "wrong horse battery"}})
		wantRefusal(t, wrong, 401, "sign_in_failed", "")
		wantRefusal(t, e.Do(apitest.Req{Method: "POST", Path: signInPath, Body: map[string]any{"name": "Ohne Passwort", "password": ""}}), 401, "sign_in_failed", "")
		wantRefusal(t, e.Do(apitest.Req{Method: "POST", Path: signInPath, Body: map[string]any{"name": "x", "password": "y", "role": "admin"}}), 400, "unknown_field", "")
		wantRefusal(t, e.Do(apitest.Req{Method: "POST", Path: signInPath, Header: map[string]string{"Idempotency-Key": "k1"},
			Body: map[string]any{"name": "Kontrolle Nord", "password": "correct horse battery"}}), 400, "idempotency_key_not_allowed", "")

		ok := e.Must(200, apitest.Req{Method: "POST", Path: signInPath, Body: map[string]any{"name": " Kontrolle Nord ", "password": "correct horse battery"}}).Map(t)
		token, _ := ok["token"].(string)
		if !strings.HasPrefix(token, "fbis_") || ok["name"] != "Kontrolle Nord" || ok["max_data_age_seconds"] != float64(86400) || ok["window_tolerance_seconds"] != float64(30) {
			t.Fatalf("sign-in answered %v", ok)
		}
		// The token posts checks, idempotently, and reads no partner data.
		e.Must(200, apitest.Req{Method: "POST", Path: recordsPath, Key: token, Body: batch(check("app-1", "valid"))})
		again := e.Must(200, apitest.Req{Method: "POST", Path: recordsPath, Key: token, Body: batch(check("app-1", "valid"))}).Map(t)
		if r := again["records"].([]any)[0].(map[string]any); r["duplicate"] != true {
			t.Fatalf("a check posted twice: %v", again)
		}
		for _, p := range []string{"/v1/ticketing/orders.json", "/v9/ticketing/orders.json", "/v1/events.json"} {
			if r := e.Do(apitest.Req{Method: "GET", Path: p, Key: token, NoValidate: true}); r.Status != 401 && r.Status != 404 {
				t.Fatalf("%s with an inspector's token: %d %s", p, r.Status, r.Body)
			}
		}
		// An instance without a rotating-barcode secret has none to hand out.
		wantRefusal(t, e.Do(apitest.Req{Method: "GET", Path: rotatingSecretPath, Key: token}), 503, "rotating_secret_not_configured", "")
		// A new password ends the session; so does revoking the inspector.
		if err := e.WebUsers.SetInspectorPassword(ctx, "Kontrolle Nord", "another long password"); err != nil {
			t.Fatal(err)
		}
		wantRefusal(t, e.Do(apitest.Req{Method: "POST", Path: recordsPath, Key: token, Body: batch(check("app-2", "valid"))}), 401, "inspector_session_invalid", "")
		ok = e.Must(200, apitest.Req{Method: "POST", Path: signInPath, Body: map[string]any{"name": "Kontrolle Nord", "password": "another long password"}}).Map(t)
		token = ok["token"].(string)
		e.Must(200, apitest.Req{Method: "POST", Path: recordsPath, Key: token, Body: batch(check("app-3", "valid"))})
		if _, err := e.Records.RevokeInspector(ctx, "Kontrolle Nord"); err != nil {
			t.Fatal(err)
		}
		wantRefusal(t, e.Do(apitest.Req{Method: "POST", Path: recordsPath, Key: token, Body: batch(check("app-4", "valid"))}), 401, "inspector_session_invalid", "")
		wantRefusal(t, e.Do(apitest.Req{Method: "POST", Path: signInPath, Body: map[string]any{"name": "Kontrolle Nord", "password": "another long password"}}), 401, "sign_in_failed", "")
		// Throttled: after five failures for a name, the sixth try waits.
		var last *apitest.Resp
		for range 6 {
			last = e.Do(apitest.Req{Method: "POST", Path: signInPath, Body: map[string]any{"name": "Ohne Passwort", "password": "guess"}})
		}
		wantRefusal(t, last, 429, "rate_limited", "")
	})
}

const rotatingSecretPath = "/v1/inspection/rotating-secret.json"

// withInspectorApp configures the wallets with a Google issuer holding
// testRotatingSecret (dynamic tickets' passes get rotating codes) and the
// inspector app's window tolerance.
func withInspectorApp(t testing.TB, tolerance time.Duration) func(d *httpapi.Deps) {
	t.Helper()
	o := rotatingWalletOptions(t)
	return func(d *httpapi.Deps) {
		d.Wallets = apitest.Wallets(d, o)
		d.InspectWindowTolerance = tolerance
	}
}

// TestInspectorRotatingSecret: GET /v1/inspection/rotating-secret.json
// hands the rotating-barcode secret to an inspector's token (the app's
// session token and a device token), with the parameters that make a
// ticket's TOTP key as the service does; API keys of either environment,
// another account's key, no key and an ended session get 401 and never
// the secret. The sign-in hands over the configured window tolerance.
// Both engines.
func TestInspectorRotatingSecret(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withInspectorApp(t, 45*time.Second)}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		device := inspector(t, e, "Kontrolle Geheim")
		if err := e.WebUsers.SetInspectorPassword(ctx, "Kontrolle Geheim", "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		in := e.Must(200, apitest.Req{Method: "POST", Path: signInPath, Body: map[string]any{"name": "Kontrolle Geheim", "password": "correct horse battery"}}).Map(t)
		if in["window_tolerance_seconds"] != float64(45) {
			t.Errorf("sign-in: window tolerance %v, want the configured 45 s", in["window_tolerance_seconds"])
		}
		session := str(in["token"])
		want := hex.EncodeToString(testRotatingSecret)
		for _, tok := range []string{session, device} {
			r := e.Must(200, apitest.Req{Method: "GET", Path: rotatingSecretPath, Key: tok})
			var got struct {
				Secret     string `json:"secret"`
				KeyContext string `json:"key_context"`
				KeyLength  int    `json:"key_length"`
				Algorithm  string `json:"algorithm"`
				Digits     int    `json:"digits"`
			}
			if err := json.Unmarshal(r.Body, &got); err != nil {
				t.Fatal(err)
			}
			if got.Secret != want || r.Header.Get("Cache-Control") != "no-store" || got.Algorithm != "TOTP_SHA1" || got.Digits != dynamic.TOTPDigits {
				t.Fatalf("%s…: %s (Cache-Control %q)", tok[:5], r.Body, r.Header.Get("Cache-Control"))
			}
			// The parameters make the ticket's key as the service does.
			secret, _ := hex.DecodeString(got.Secret)
			m := hmac.New(sha256.New, secret)
			m.Write([]byte(got.KeyContext + "farebox-ticket-9d1c"))
			if k := m.Sum(nil)[:got.KeyLength]; !bytes.Equal(k, dynamic.TicketKey(testRotatingSecret, "farebox-ticket-9d1c")) {
				t.Errorf("the answer's derivation gives %x, the service's key is %x", k, dynamic.TicketKey(testRotatingSecret, "farebox-ticket-9d1c"))
			}
		}
		_, otherKey := e.NewAccount("Fremd AG", account.Live)
		for _, c := range []struct{ name, key, code string }{{"live API key", e.LiveKey, "invalid_inspector_token"}, {"test API key", e.TestKey, "invalid_inspector_token"},
			{"another account's key", otherKey, "invalid_inspector_token"}, {"no key", "", "invalid_authorization_header"}} {
			r := e.Do(apitest.Req{Method: "GET", Path: rotatingSecretPath, Key: c.key})
			if r.Status != 401 || r.Map(t)["code"] != c.code || bytes.Contains(r.Body, []byte(want)) {
				t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
			}
		}
		if _, err := e.Records.RevokeInspector(ctx, "Kontrolle Geheim"); err != nil {
			t.Fatal(err)
		}
		wantRefusal(t, e.Do(apitest.Req{Method: "GET", Path: rotatingSecretPath, Key: session}), 401, "inspector_session_invalid", "")
		wantRefusal(t, e.Do(apitest.Req{Method: "GET", Path: rotatingSecretPath, Key: device}), 401, "inspector_revoked", "")
	})
}
