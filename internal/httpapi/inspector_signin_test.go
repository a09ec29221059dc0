package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
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
		if !strings.HasPrefix(token, "fbis_") || ok["name"] != "Kontrolle Nord" || ok["max_data_age_seconds"] != float64(86400) {
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
