package httpapi_test

import (
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
)

// TestWebhookSpecialAddresses: a live endpoint whose URL names an address
// that IANA's special-purpose registries mark as not globally reachable,
// or an IPv6 address embedding one (IPv4-compatible, NAT64, 6to4, Teredo),
// is refused at registration and on update with a 400 invalid_parameter
// naming url, and nothing is written (issue 28: all of these were
// accepted). A test endpoint may still use loopback, but not loopback
// hidden in an IPv6 embedding. (93.184.215.14 is example.com's address,
// registered only; no delivery runs here.)
func TestWebhookSpecialAddresses(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		refuse := func(key, method, path, u string) {
			t.Helper()
			r := e.Do(apitest.Req{Method: method, Path: path, Key: key, Body: map[string]any{"url": u, "enabled_events": []string{"*"}}})
			var body apitest.Error
			r.JSON(t, &body)
			if r.Status != 400 || body.Code != "invalid_parameter" || len(body.Details) != 1 || body.Details[0].Field != "url" || !strings.Contains(body.Message, "address") {
				t.Errorf("%s %s %s: %d %s", method, path, u, r.Status, r.Body)
			}
		}
		hosts := []string{"[::127.0.0.1]", "[::7f00:1]", "[64:ff9b::a9fe:a9fe]", "[2002:a9fe:a9fe::1]", "198.18.0.1", "192.0.0.192",
			"240.0.0.1", "255.255.255.255", "[2001:0:4136:e378:8000:63bf:5601:5601]", "[64:ff9b:1::a9fe:a9fe]", "203.0.113.10",
			"[2001:db8::1]", "[::ffff:a9fe:a9fe]", "192.88.99.1", "[100::1]", "[5f00::1]", "[3fff::1]", "0.1.2.3", "[fec0::1]"}
		for _, h := range hosts {
			refuse(e.LiveKey, "POST", "/v1/webhook_endpoints.json", "https://"+h+"/hooks")
		}
		for _, h := range []string{"[::127.0.0.1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]", "[64:ff9b::a9fe:a9fe]"} {
			refuse(e.TestKey, "POST", "/v1/webhook_endpoints.json", "http://"+h+"/hooks")
		}
		for _, key := range []string{e.LiveKey, e.TestKey} {
			if l := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints.json", Key: key}).Map(t); len(l["data"].([]any)) != 0 {
				t.Fatalf("a refused endpoint was written: %v", l)
			}
		}
		// Public addresses, also embedded, are taken; an update to a
		// refused one changes nothing.
		var id string
		for _, h := range []string{"93.184.215.14", "[64:ff9b::5db8:d70e]", "[2002:5db8:d70e::1]", "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]", "192.0.0.9"} {
			id = str(createEndpoint(t, e, e.LiveKey, "https://"+h+"/hooks", "*")["id"])
		}
		for _, h := range hosts[:4] {
			refuse(e.LiveKey, "PATCH", "/v1/webhook_endpoints/"+id+".json", "https://"+h+"/hooks")
		}
		if got := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints/" + id + ".json", Key: e.LiveKey}).Map(t); got["url"] != "https://192.0.0.9/hooks" {
			t.Errorf("a refused update changed the endpoint: %v", got)
		}
		createEndpoint(t, e, e.TestKey, "http://127.0.0.1:9/hooks", "*")
		createEndpoint(t, e, e.TestKey, "http://[::1]:9/hooks", "*")
	})
}
