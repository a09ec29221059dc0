package httpapi_test

import (
	"bytes"
	"github.com/farebox/farebox/internal/engines/browsertest"
	"regexp"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/engines"
)

var versionedEngine = regexp.MustCompile(`^(/v[0-9]+)/ticketing/(rendering_engine|identification_view)/([0-9]+)/([0-9]+)/([0-9]+)\?inline=inline$`)

// fetchEngine follows the SDK setup call: …/<name>/1?inline=inline → 302 →
// 200 text/html. It returns the document.
func fetchEngine(t *testing.T, e *apitest.Env, version, name string) []byte {
	t.Helper()
	r := e.Must(302, apitest.Req{Method: "GET", Path: version + "/ticketing/" + name + "/1?inline=inline"})
	loc := r.Header.Get("Location")
	m := versionedEngine.FindStringSubmatch(loc)
	if m == nil || m[1] != version || m[2] != name {
		t.Fatalf("%s %s: Location %q is not %s/ticketing/%s/<a>/<b>/<c>?inline=inline", version, name, loc, version, name)
	}
	doc := e.Must(200, apitest.Req{Method: "GET", Path: loc})
	if ct := doc.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("%s: Content-Type %q", loc, ct)
	}
	return doc.Body
}

// TestEngineRoutes: the SDK setup calls on every version keep the prefix,
// redirect to three numeric segments and serve the embedded documents.
func TestEngineRoutes(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		for _, v := range []string{"/v6", "/v7", "/v8", "/v9"} {
			for _, name := range []string{engines.RenderingEngineName, engines.IdentificationViewName} {
				eng, ok := engines.ByName(name)
				if !ok {
					t.Fatalf("no engine %s", name)
				}
				body := fetchEngine(t, e, v, eng.Name)
				if !bytes.Equal(body, eng.HTML) {
					t.Errorf("%s %s: served document differs from the embedded engine", v, eng.Name)
				}
				// Self-contained: no relative or remote asset references.
				for _, bad := range []string{`src="/`, `href="/`, `src="http`, `href="http`, `url(http`, `url(/`} {
					if bytes.Contains(body, []byte(bad)) {
						t.Errorf("%s %s: external asset reference %q", v, eng.Name, bad)
					}
				}
			}
			// Unknown versions are JSON 404s.
			for _, p := range []string{"/ticketing/rendering_engine/0/9/9", "/ticketing/identification_view/1/0/99"} {
				if m := e.Must(404, apitest.Req{Method: "GET", Path: v + p}).Map(t); m["code"] != "engine_version_not_found" {
					t.Errorf("%s%s: %v", v, p, m)
				}
			}
			e.Must(404, apitest.Req{Method: "GET", Path: v + "/ticketing/rendering_engine/2?inline=inline", NoValidate: true})
		}
	})
}

// sdkTicket re-encodes a server ticket the way an SDK hands it to
// renderTicket (client-contract 6.2): only the fields of 3.7–3.9, plus
// createdAt and wasReactivated; iOS omits nil optionals and keeps the area's
// geojson, Android keeps geometry and encodes createdAt as a string.
func sdkTicket(server map[string]any, ios bool) map[string]any {
	keep := func(m map[string]any, keys ...string) map[string]any {
		out := map[string]any{}
		for _, k := range keys {
			if v, ok := m[k]; ok && !(ios && v == nil) {
				out[k] = v
			}
		}
		return out
	}
	t := keep(server, "id", "coupon_id", "coupon_reactivation_key", "valid_from", "valid_until", "ticket_created_at", "sold_at", "environment")
	t["product"] = keep(server["product"].(map[string]any), "id", "area_id", "currency", "ticket_type", "customer_type", "price_in_cents",
		"local_ticket_name", "duration_definition", "local_validity_description", "is_subscription", "duration_in_minutes", "validity_in_minutes")
	t["ticket"] = keep(server["ticket"].(map[string]any), "meta", "properties")
	t["wasReactivated"] = false
	if ios {
		t["area"] = keep(server["area"].(map[string]any), "id", "type", "properties", "geojson")
		t["createdAt"] = float64(time.Now().Unix() - 978307200) // seconds since 2001-01-01
	} else {
		t["area"] = keep(server["area"].(map[string]any), "id", "type", "properties", "geometry")
		t["createdAt"] = time.Now().Format("Jan 2, 2006 3:04:05 PM")
	}
	return t
}

type realResults struct {
	Rendering map[string]struct {
		Returned bool           `json:"returned"`
		Got      map[string]any `json:"got"`
	} `json:"rendering"`
	Identification map[string]map[string]struct {
		Medium *string     `json:"medium"`
		Tariff *string     `json:"tariff"`
		Inputs [][2]string `json:"inputs"`
		Submit bool        `json:"submit"`
		Close  bool        `json:"close"`
	} `json:"identification"`
	Requests []string `json:"requests"`
	Errors   []string `json:"errors"`
}

// runRealBrowser runs internal/engines/testdata/browser/real.js in Chromium.
func runRealBrowser(t *testing.T, cfg map[string]any) (realResults, string) {
	t.Helper()
	var res realResults
	out := browsertest.Run(t, "real.js", cfg, &res)
	return res, out
}
