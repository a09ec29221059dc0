package httpapi_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/engines/browsertest"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
)

// TestEnginesRenderRealTickets drives the engines as served by the API in
// headless Chromium: real tickets (live and test) in both SDK re-encodings
// in the rendering engine, the real monthly product's schemas in the
// identification view, whose output is then sent to the API as Android
// sends it. Runs on SQLite only (the API flow is covered on both engines).
func TestEnginesRenderRealTickets(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Browser)
	// The engine's clock is the browser's: issue tickets valid now.
	e := apitest.New(t, store.SQLite, apitest.Options{Now: time.Now().UTC().Truncate(time.Second), Configure: withWallets(t, true)})
	ids := productIDs(t, e)
	activate := func(key, coupon, body string) map[string]any {
		tid := e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/coupons/" + coupon + "/activate.json", Body: body}).Map(t)["ticket_id"].(string)
		return e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + tid + ".json"}).Map(t)
	}
	order := func(key string, n int) []string {
		pids := make([]string, n)
		for i := range pids {
			pids[i] = ids["month/adult"]
		}
		o := e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: key, Body: map[string]any{"product_ids": pids}}).Map(t)
		var out []string
		for _, c := range o["coupons"].([]any) {
			out = append(out, c.(map[string]any)["id"].(string))
		}
		return out
	}
	live, test := order(e.LiveKey, 3), order(e.TestKey, 1)
	body := `{"identification_medium":` + maxMedium + `,"tariff_settings":{"german_postal_code":"12345"}}`
	liveTicket, testTicket := activate(e.LiveKey, live[0], body), activate(e.TestKey, test[0], body)
	// A revoked ticket as the API serves it after `farebox tickets revoke`.
	revokedID := activate(e.LiveKey, live[2], body)["id"].(string)
	if _, err := e.App.RevokeTicket(t.Context(), idempotency.Claim{}, revokedID, "Fahrgeld erstattet"); err != nil {
		t.Fatal(err)
	}
	revokedTicket := e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + revokedID + ".json"}).Map(t)
	product := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/products/" + ids["month/adult"] + ".json"}).Map(t)
	kr, err := barcode.ParseKeySet(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	cfg := map[string]any{
		"tickets": map[string]any{"ios_live": sdkTicket(liveTicket, true), "android_live": sdkTicket(liveTicket, false),
			"ios_test": sdkTicket(testTicket, true), "android_test": sdkTicket(testTicket, false),
			"ios_revoked": sdkTicket(revokedTicket, true), "android_revoked": sdkTicket(revokedTicket, false)},
		"mediumSchema": product["identification_medium_schema"], "tariffSchema": product["tariff_settings_schema"],
		"prefill": properties(liveTicket)["identification_medium"],
		"typed": map[string]string{"im_photo_id_lite_first_name": "Erika", "im_photo_id_lite_last_name": "Musterfrau",
			"im_photo_id_lite_birth_date": "07.03.1985", "ts_german_postal_code": "10115"},
		"tariffInput": "ts_german_postal_code", "tariffValue": "not-germany",
	}
	for key, name := range map[string]string{"rendering": "rendering_engine", "identification": "identification_view"} {
		p := filepath.Join(dir, name+".html")
		if err := os.WriteFile(p, fetchEngine(t, e, "/v9", name), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg[key] = p
	}
	res, out := runRealBrowser(t, cfg)
	if len(res.Requests) != 0 || len(res.Errors) != 0 {
		t.Errorf("network requests %v, JavaScript errors %v", res.Requests, res.Errors)
	}
	t.Logf("screenshots in %s", out)

	for name, server := range map[string]map[string]any{"ios_live": liveTicket, "android_live": liveTicket, "ios_test": testTicket, "android_test": testTicket} {
		r := res.Rendering[name]
		if !r.Returned {
			t.Errorf("%s: renderTicket did not return true", name)
			continue
		}
		area := server["area"].(map[string]any)["properties"].(map[string]any)
		tid := server["id"].(string)
		isTest := server["environment"] == "test"
		from, _ := time.Parse(time.RFC3339, server["valid_from"].(string))
		until, _ := time.Parse(time.RFC3339, server["valid_until"].(string))
		state := "valid"
		if now := time.Now(); now.Before(from) {
			state = "not_yet_valid"
		} else if !now.Before(until) {
			state = "expired"
		}
		want := map[string]any{"product": server["product"].(map[string]any)["local_ticket_name"], "passenger": "Max Mustermann",
			"birth": "01.01.1990", "reference": "T-" + strings.ToUpper(tid[len(tid)-6:]), "error": "", "state": state,
			"ribbonVisible": isTest, "testNoteVisible": isTest, "barcodeShown": true, "barcodeMissingShown": false}
		for k, v := range want {
			if r.Got[k] != v {
				t.Errorf("%s: %s = %#v, want %#v", name, k, r.Got[k], v)
			}
		}
		if a, _ := r.Got["area"].(string); !strings.Contains(a, area["local_zone_name"].(string)) {
			t.Errorf("%s: area %q", name, a)
		}
		// The drawn code scans back to a genuine payload for this ticket.
		payload, err := browsertest.ScanScreenshot(t, filepath.Join(out, "real_rendering_"+name+"_barcode.png"))
		if err != nil {
			t.Errorf("%s: screenshot barcode unreadable: %v", name, err)
			continue
		}
		if c, err := barcode.Verify(payload, kr); err != nil || c.TicketID != tid || c.Test() != isTest || c.FirstName != "Max" {
			t.Errorf("%s: scanned payload %+v (%v)", name, c, err)
		}
	}
	// The revoked ticket is shown invalid with its reason, in both SDK shapes, without a code.
	for _, name := range []string{"ios_revoked", "android_revoked"} {
		r := res.Rendering[name]
		g := r.Got
		if !r.Returned || g["state"] != "revoked" || g["status"] != "UNGÜLTIG · REVOKED" || g["revocation"] != "Grund · reason: Fahrgeld erstattet" ||
			g["barcodeShown"] != false || g["barcodeMissingShown"] != true || g["passenger"] != "Max Mustermann" || g["error"] != "" {
			t.Errorf("%s: %+v", name, r)
		}
	}
	checkRealIdentification(t, e, res, live[1], kr)
}

func checkRealIdentification(t *testing.T, e *apitest.Env, res realResults, coupon string, kr *barcode.Keyring) {
	t.Helper()
	ios, android := res.Identification["ios"], res.Identification["android"]
	inputs := map[string]bool{}
	for _, in := range ios["empty"].Inputs {
		inputs[in[0]] = true
	}
	for _, id := range []string{"im_photo_id_lite_first_name", "im_photo_id_lite_last_name", "im_photo_id_lite_birth_date", "ts_german_postal_code"} {
		if !inputs[id] {
			t.Errorf("identification view lacks input %s (has %v)", id, ios["empty"].Inputs)
		}
	}
	if !ios["empty"].Submit || !ios["empty"].Close || ios["empty"].Medium != nil {
		t.Errorf("empty form: %+v", ios["empty"])
	}
	jsonEq := func(label string, got *string, want string) {
		t.Helper()
		if got == nil {
			t.Errorf("%s: null, want %s", label, want)
			return
		}
		var a, b any
		if err := json.Unmarshal([]byte(*got), &a); err != nil {
			t.Errorf("%s: %q is not JSON", label, *got)
		}
		_ = json.Unmarshal([]byte(want), &b)
		if d := cmp.Diff(b, a); d != "" {
			t.Errorf("%s (-want +got):\n%s", label, d)
		}
	}
	f := ios["filled"]
	jsonEq("iOS medium", f.Medium, `{"identification_medium":{"photo_id_lite":{"first_name":"Erika","last_name":"Musterfrau","birth_date":"1985-03-07"}}}`)
	jsonEq("iOS tariff", f.Tariff, `{"tariff_settings":{"german_postal_code":"10115"}}`)
	a := android["filled"]
	jsonEq("Android prefilled medium", a.Medium, `{"identification_medium":`+maxMedium+`}`)
	jsonEq("Android tariff", a.Tariff, `{"tariff_settings":{"german_postal_code":"not-germany"}}`)
	if f.Medium == nil || f.Tariff == nil {
		return
	}
	// What the page returned is what the server accepts: tariff settings,
	// then the medium string verbatim as the activation body (Android).
	e.Must(200, apitest.Req{Method: "POST", Path: "/v7/ticketing/coupons/" + coupon + "/tariff_settings.json", Body: *f.Tariff})
	tid := e.Must(201, apitest.Req{Method: "POST", Path: "/v7/ticketing/coupons/" + coupon + "/activate.json", Body: *f.Medium,
		Header: map[string]string{"Content-Type": "application/json; charset=utf-8"}}).Map(t)["ticket_id"].(string)
	ticket := e.Must(200, apitest.Req{Method: "PATCH", Path: "/v7/ticketing/tickets/" + tid + ".json"}).Map(t)
	c, err := barcode.Verify(ticketPayload(t, ticket), kr)
	if err != nil || c.FirstName != "Erika" || c.LastName != "Musterfrau" || c.BirthDate != "1985-03-07" {
		t.Errorf("ticket activated from the view: %+v (%v)", c, err)
	}
}
