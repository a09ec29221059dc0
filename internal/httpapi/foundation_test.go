package httpapi_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/google/go-cmp/cmp"
)

// TestOpenAPIMatchesRoutes fails when a route and api/openapi.yaml disagree.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	doc, _, err := apitest.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var spec []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			spec = append(spec, method+" "+path)
		}
	}
	e := apitest.New(t, store.SQLite, apitest.Options{})
	var routes []string
	for _, r := range e.Server.Routes() {
		if r.Page {
			continue // HTML pages are not the JSON API (docs/web.md)
		}
		routes = append(routes, r.Method+" "+r.Path)
	}
	sort.Strings(spec)
	sort.Strings(routes)
	if d := cmp.Diff(spec, routes); d != "" {
		t.Errorf("api/openapi.yaml (-) and routes.go (+) differ:\n%s", d)
	}
	r := e.Must(200, apitest.Req{Method: "GET", Path: "/openapi.json"})
	if m := r.Map(t); m["openapi"] != "3.1.0" {
		t.Errorf("/openapi.json: openapi = %v", m["openapi"])
	}
}

func TestOperationsEndpoints(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		if m := e.Must(200, apitest.Req{Method: "GET", Path: "/healthz"}).Map(t); m["status"] != "ok" {
			t.Errorf("healthz: %v", m)
		}
		m := e.Must(200, apitest.Req{Method: "GET", Path: "/readyz"}).Map(t)
		if m["status"] != "ready" || m["database"] != string(e.Store.Engine()) {
			t.Errorf("readyz: %v", m)
		}
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: e.LiveKey})
		metrics := string(e.Must(200, apitest.Req{Method: "GET", Path: "/metrics"}).Body)
		for _, want := range []string{`farebox_http_requests_total{route="GET /v1/account.json",status="200"} 1`,
			`farebox_http_request_duration_seconds_bucket{route="GET /healthz"`, "go_goroutines"} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

func TestUnmatchedRequestsAreJSON(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{})
	r := e.Must(404, apitest.Req{Method: "GET", Path: "/v6/nothing/here.json", NoValidate: true})
	if m := r.Map(t); m["code"] != "not_found" || m["message"] == "" {
		t.Errorf("404 body: %v", m)
	}
	r = e.Must(405, apitest.Req{Method: "DELETE", Path: "/healthz", NoValidate: true})
	if m := r.Map(t); m["code"] != "method_not_allowed" || !strings.Contains(r.Header.Get("Allow"), "GET") {
		t.Errorf("405: %v Allow=%q", m, r.Header.Get("Allow"))
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		for _, c := range []struct {
			key, env string
		}{{e.LiveKey, "live"}, {e.TestKey, "test"}} {
			m := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: c.key}).Map(t)
			if m["account_id"] != e.AccountID || m["environment"] != c.env || m["name"] != "Partner GmbH" {
				t.Errorf("account.json with %s key: %v", c.env, m)
			}
		}
		r := e.Must(401, apitest.Req{Method: "GET", Path: "/v1/account.json"})
		if m := r.Map(t); m["code"] != "api_key_missing" {
			t.Errorf("missing key: %v", m)
		}
		r = e.Must(401, apitest.Req{Method: "GET", Path: "/v1/account.json?api_key=" + e.LiveKey})
		if m := r.Map(t); m["code"] != "api_key_in_query_not_allowed" {
			t.Errorf("key in query: %v", m)
		}
		prefix := e.LiveKey[:len("fbx_live_")+8]
		if _, err := e.Accounts.RevokeKeys(t.Context(), idempotency.Claim{}, prefix); err != nil {
			t.Fatal(err)
		}
		r = e.Must(401, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: e.LiveKey})
		if m := r.Map(t); m["code"] != "invalid_api_key" {
			t.Errorf("revoked key: %v", m)
		}
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: e.TestKey})
	})
}

func TestRequestIDAndCORS(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{})
	r := e.Must(200, apitest.Req{Method: "GET", Path: "/healthz", Header: map[string]string{"X-Request-Id": "partner-trace-1"}})
	if r.Header.Get("X-Request-Id") != "partner-trace-1" {
		t.Errorf("request id not honoured: %q", r.Header.Get("X-Request-Id"))
	}
	r = e.Must(200, apitest.Req{Method: "GET", Path: "/healthz", Header: map[string]string{"X-Request-Id": "bad id;drop"}})
	if id := r.Header.Get("X-Request-Id"); id == "" || strings.Contains(id, " ") {
		t.Errorf("unsafe request id kept: %q", id)
	}
	if !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "session-token") || r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("CORS headers: %v", r.Header)
	}
	req, _ := http.NewRequest(http.MethodOptions, e.URL+"/v1/account.json", nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "authorization,session-token")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	allow := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
	if res.StatusCode != 204 || !strings.Contains(allow, "authorization") || !strings.Contains(allow, "session-token") ||
		!strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "GET") {
		t.Errorf("preflight: %d %v", res.StatusCode, res.Header)
	}
}

func TestUsageLedger(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		// The row is committed before the response arrives.
		r := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: e.LiveKey})
		rows := e.UsageRows(r.Header.Get("X-Request-Id"))
		if len(rows) != 1 || rows[0].AccountID != e.AccountID || !rows[0].Counted || rows[0].Endpoint != "GET /v1/account.json" ||
			rows[0].Status != 200 || rows[0].Environment != account.Live {
			t.Fatalf("ledger rows: %+v", rows)
		}
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: e.TestKey})
		e.Must(401, apitest.Req{Method: "GET", Path: "/v1/account.json"}) // not attributable: no row
		e.Must(200, apitest.Req{Method: "GET", Path: "/healthz"})
		// Another account's usage is invisible.
		_, otherKey := e.NewAccount("Other", account.Live)
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: otherKey})

		m := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/usage.json?from=2026-06-01&to=2026-06-30", Key: e.LiveKey}).Map(t)
		want := []any{map[string]any{"date": "2026-06-15", "endpoint": "GET /v1/account.json", "counted": float64(2), "uncounted": float64(0), "refused": float64(0)}}
		if d := cmp.Diff(want, m["days"]); d != "" {
			t.Errorf("usage (-want +got):\n%s", d)
		}
		e.Clock.Advance(24 * 60 * 60 * 1e9)
		m = e.Must(200, apitest.Req{Method: "GET", Path: "/v1/usage.json", Key: e.LiveKey}).Map(t)
		if m["from"] != "2026-06-01" || m["to"] != "2026-06-16" || len(m["days"].([]any)) != 2 {
			t.Errorf("usage defaults: %v", m)
		}
		for _, q := range []string{"from=2026-13-01", "from=2026-06-10&to=2026-06-01", "from=2020-01-01&to=2026-01-01", "to=yesterday"} {
			r := e.Must(400, apitest.Req{Method: "GET", Path: "/v1/usage.json?" + q, Key: e.LiveKey})
			if m := r.Map(t); m["code"] != "invalid_parameter" || len(m["details"].([]any)) != 1 {
				t.Errorf("usage %s: %v", q, m)
			}
		}
	})
}
