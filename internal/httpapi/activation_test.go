package httpapi_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
)

func TestActivationValidityPerTicketType(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		o := order(t, e, e.LiveKey, ids["single/adult"], ids["day/adult"], ids["month/adult"])
		m := medium("Max", "Mustermann", "1990-01-01")
		// Single: 2026-06-15T12:00+02:00 for 120 minutes (Berlin AB), the last second inclusive.
		single := ticket(t, e, mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), map[string]any{"identification_medium": m, "activation_start_datetime": "2026-06-15T12:00:00+02:00"}))
		if single["valid_from"] != "2026-06-15T10:00:00Z" || single["valid_until"] != "2026-06-15T11:59:59Z" {
			t.Errorf("single: %v – %v", single["valid_from"], single["valid_until"])
		}
		// Day pass: from its start to 03:00 local of the next day (the end of the service day).
		day := ticket(t, e, mustActivate(t, e, "v9", str(o.Coupons[1]["id"]), map[string]any{"identification_medium": m, "activation_start_datetime": "2026-06-15T10:30:00Z"}))
		if day["valid_from"] != "2026-06-15T10:30:00Z" || day["valid_until"] != "2026-06-16T00:59:59Z" {
			t.Errorf("day pass: %v – %v", day["valid_from"], day["valid_until"])
		}
		// Month: the calendar month of the start in Europe/Berlin, with the iOS offset form +0200.
		month := ticket(t, e, mustActivate(t, e, "v9", str(o.Coupons[2]["id"]), map[string]any{"identification_medium": m,
			"tariff_settings": map[string]any{"german_postal_code": "01067"}, "activation_start_datetime": "2026-07-01T00:00:00+0200"}))
		if month["valid_from"] != "2026-06-30T22:00:00Z" || month["valid_until"] != "2026-07-31T21:59:59Z" {
			t.Errorf("month: %v – %v", month["valid_from"], month["valid_until"])
		}
		if !strings.HasPrefix(str(month["coupon_reactivation_key"]), "farebox-reactivation-key-") || single["coupon_reactivation_key"] != nil {
			t.Errorf("reactivation keys: month %v single %v", month["coupon_reactivation_key"], single["coupon_reactivation_key"])
		}
		props := month["ticket"].(map[string]any)["properties"].(map[string]any)
		if props["identification_medium"].(map[string]any)["photo_id_lite"].(map[string]any)["first_name"] != "Max" {
			t.Errorf("properties: %v", props)
		}
		area := month["area"].(map[string]any)
		if area["geojson"] == nil || area["geometry"] == nil || month["environment"] != "live" || month["sold_at"] != "2026-06-15T10:00:00Z" {
			t.Errorf("ticket area/environment/sold_at: %v", month)
		}
		// The coupon now reads activated with its tariff settings.
		c := coupon(t, e, "v9", str(o.Coupons[2]["id"]))
		if c["activated"] != true || c["tariff_settings_valid"] != true || c["tariff_settings"].(map[string]any)["german_postal_code"] != "01067" {
			t.Errorf("activated coupon: %v", c)
		}
		// Without a start: now. Z form accepted.
		o2 := order(t, e, e.LiveKey, ids["single/child"], ids["single/child"])
		now := ticket(t, e, mustActivate(t, e, "v7", str(o2.Coupons[0]["id"]), map[string]any{"identification_medium": m}))
		if now["valid_from"] != "2026-06-15T10:00:00Z" {
			t.Errorf("default start: %v", now["valid_from"])
		}
		mustActivate(t, e, "v6", str(o2.Coupons[1]["id"]), `{"identification_medium":`+maxMedium+`,"activation_start_datetime":"2026-06-20T08:00:00.000Z","unknown":true}`)
	})
}

func TestActivationErrorsUseTheSDKPrefixes(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		o := order(t, e, e.LiveKey, ids["month/adult"], ids["single/adult"])
		month, single := str(o.Coupons[0]["id"]), str(o.Coupons[1]["id"])
		before := counts(t, e)
		activation := func(coupon string, body any) apitest.Req {
			return apitest.Req{Method: "POST", Path: "/v9/ticketing/coupons/" + coupon + "/activate.json", Body: body}
		}
		// rejected: the status, the SDKs' message prefix and the code.
		rejected := func(name string, req apitest.Req, status int, prefix, code string) apitest.Scenario[apitest.Error] {
			return apitest.Scenario[apitest.Error]{Name: name, Req: req, Status: status,
				Check: func(t *testing.T, got apitest.Error, r *apitest.Resp) {
					if !strings.HasPrefix(got.Message, prefix) || got.Code != code {
						t.Errorf("%s %s; want %q… %s", got.Message, got.Code, prefix, code)
					}
				}}
		}
		adult := func(birth string) map[string]any { return medium("Max", "M", birth) }
		postal := func(code string) map[string]any { return map[string]any{"german_postal_code": code} }
		apitest.RunScenarios(t, e, []apitest.Scenario[apitest.Error]{
			rejected("no medium", activation(month, `{"tariff_settings":{"german_postal_code":"12345"}}`), 422, "identification_medium: ", "identification_medium_invalid"),
			rejected("impossible date", activation(month, map[string]any{"identification_medium": adult("1990-02-30"), "tariff_settings": postal("12345")}), 422, "identification_medium: /photo_id_lite/birth_date", "identification_medium_invalid"),
			rejected("extra key", activation(month, `{"identification_medium":{"photo_id_lite":{"first_name":"A","last_name":"B","birth_date":"1990-01-01"},"passport":{}},"tariff_settings":{"german_postal_code":"12345"}}`), 422, "identification_medium: ", "identification_medium_invalid"),
			rejected("medium not an object", activation(month, `{"identification_medium":"Max"}`), 422, "identification_medium: ", "identification_medium_invalid"),
			rejected("no postal code", activation(month, map[string]any{"identification_medium": adult("1990-01-01")}), 422, "tariff_settings: ", "tariff_settings_invalid"),
			rejected("bad postal code", activation(month, map[string]any{"identification_medium": adult("1990-01-01"), "tariff_settings": postal("1234")}), 422, "tariff_settings: /german_postal_code", "tariff_settings_invalid"),
			rejected("too early", activation(month, map[string]any{"identification_medium": adult("1990-01-01"), "tariff_settings": postal("12345"), "activation_start_datetime": "2026-05-31T21:00:00Z"}), 422, "Ticket cannot be activated yet", "activation_not_yet"),
			rejected("too late", activation(month, map[string]any{"identification_medium": adult("1990-01-01"), "tariff_settings": postal("12345"), "activation_start_datetime": "2026-08-01T00:00:00+02:00"}), 422, "Ticket cannot be activated anymore", "activation_expired"),
			rejected("bad start", activation(single, map[string]any{"identification_medium": adult("1990-01-01"), "activation_start_datetime": "15.06.2026"}), 422, "activation_start_datetime must be", "invalid_activation_start_datetime"),
			rejected("tariff on a product without", activation(single, map[string]any{"identification_medium": adult("1990-01-01"), "tariff_settings": postal("12345")}), 422, "tariff_settings: ", "tariff_settings_invalid"),
			rejected("malformed", activation(single, `{"identification_medium":`), 400, "malformed JSON", "malformed_json"),
			rejected("unknown coupon", activation("farebox-coupon-00000000-0000-4000-8000-000000000000", `{}`), 404, "coupon not found", "coupon_not_found"),
		})
		if after := counts(t, e); after["tickets"] != before["tickets"] || after["subscription_cycles"] != before["subscription_cycles"] {
			t.Errorf("failed activations wrote rows: %v → %v", before, after)
		}
		if c := coupon(t, e, "v9", month); c["activated"] != false {
			t.Error("a failed activation activated the coupon")
		}
	})
}

func TestActivationWindowOf72HoursFromV8(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{})
	ids := productIDs(t, e)
	o := order(t, e, e.LiveKey, ids["single/adult"], ids["single/adult"])
	c := coupon(t, e, "v8", str(o.Coupons[0]["id"]))
	if c["activatable_until"] != "2026-06-18T10:00:00Z" || c["earliest_activation_start_datetime"] != "2026-06-15T10:00:00Z" {
		t.Errorf("coupon window: %v %v", c["activatable_until"], c["earliest_activation_start_datetime"])
	}
	if _, ok := coupon(t, e, "v7", str(o.Coupons[0]["id"]))["activatable_until"]; ok {
		t.Error("v7 coupon shows activatable_until")
	}
	e.Clock.Advance(72*time.Hour + time.Second)
	r := activate(e, "v8", str(o.Coupons[0]["id"]), map[string]any{"identification_medium": medium("A", "B", "1990-01-01")})
	if r.Status != 422 || !strings.HasPrefix(str(r.Map(t)["message"]), "Ticket cannot be activated anymore. It must be activated within 3 days of order.") {
		t.Errorf("v8 after 72h: %d %s", r.Status, r.Body)
	}
	// Before v8 the window is not enforced.
	mustActivate(t, e, "v7", str(o.Coupons[1]["id"]), map[string]any{"identification_medium": medium("A", "B", "1990-01-01")})
}

func TestActivationIsIdempotentAndSingle(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		o := order(t, e, e.LiveKey, ids["single/adult"], ids["month/adult"])
		body := map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01")}
		first := mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), body)
		// Same medium (another key order) → same ticket; different medium → 409.
		again := mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), `{"identification_medium":{"photo_id_lite":{"birth_date":"1990-01-01","last_name":"Mustermann","first_name":"Max"}}}`)
		if again != first {
			t.Errorf("same medium gave %s, then %s", first, again)
		}
		r := activate(e, "v9", str(o.Coupons[0]["id"]), map[string]any{"identification_medium": medium("Erika", "Mustermann", "1990-01-01")})
		if r.Status != 409 || r.Map(t)["code"] != "coupon_already_activated" {
			t.Errorf("other medium: %d %s", r.Status, r.Body)
		}
		// 50 concurrent activations of one coupon: exactly one ticket.
		sub := str(o.Coupons[1]["id"])
		body["tariff_settings"] = map[string]any{"german_postal_code": "not-germany"}
		var wg sync.WaitGroup
		got := make([]string, 50)
		for i := range got {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r := activate(e, "v9", sub, body)
				if r.Status == 201 {
					got[i] = str(r.Map(t)["ticket_id"])
				} else {
					t.Errorf("concurrent activation %d: %d %s", i, r.Status, r.Body)
				}
			}(i)
		}
		wg.Wait()
		for _, id := range got {
			if id != got[0] {
				t.Fatalf("concurrent activations returned different tickets: %v", got)
			}
		}
		if n := counts(t, e)["tickets"]; n != 2 {
			t.Errorf("%d tickets, want 2", n)
		}
	})
}

func TestTicketAndTariffEndpointsTolerateSDKAndPartnerShapes(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{})
	ids := productIDs(t, e)
	_, cid := orderFirst(t, e, e.LiveKey, ids["month/adult"])
	// Tariff settings: wrapped and bare forms, invalid rejected.
	r := e.Must(200, apitest.Req{Method: "POST", Path: "/v7/ticketing/coupons/" + cid + "/tariff_settings.json", Body: `{"tariff_settings":{"german_postal_code":"10115"}}`})
	e.MustMatch("coupon", r.Body, apitest.SDKCoupon)
	if m := r.Map(t); m["tariff_settings_valid"] != true {
		t.Errorf("after tariff settings: %v", m["tariff_settings_valid"])
	}
	e.Must(200, apitest.Req{Method: "POST", Path: "/v7/ticketing/coupons/" + cid + "/tariff_settings.json", Body: `{"german_postal_code":"not-germany"}`})
	r = e.Must(422, apitest.Req{Method: "POST", Path: "/v7/ticketing/coupons/" + cid + "/tariff_settings.json", Body: `{"german_postal_code":"1"}`})
	if !strings.HasPrefix(str(r.Map(t)["message"]), "tariff_settings: ") {
		t.Errorf("invalid tariff: %s", r.Body)
	}
	// The wrapped form holds nothing else (client-contract.md T13: extra keys
	// are not allowed); an extra key beside tariff_settings was ignored.
	r = e.Must(400, apitest.Req{Method: "POST", Path: "/v7/ticketing/coupons/" + cid + "/tariff_settings.json",
		Body: `{"tariff_settings":{"german_postal_code":"10115"},"german_postal_code":"80331"}`})
	if m := r.Map(t); m["code"] != "unknown_field" || !strings.Contains(string(r.Body), `"field":"/german_postal_code"`) {
		t.Errorf("extra key beside tariff_settings: %s", r.Body)
	}
	if c := coupon(t, e, "v7", cid); c["tariff_settings"].(map[string]any)["german_postal_code"] != "not-germany" {
		t.Errorf("a rejected update changed the settings: %v", c["tariff_settings"])
	}
	// Activation without tariff_settings now uses the coupon's.
	tid := mustActivate(t, e, "v7", cid, map[string]any{"identification_medium": medium("Max", "M", "1990-01-01")})
	// Android: PATCH without body or content type; partner: Bearer and {}.
	e.Must(200, apitest.Req{Method: "PATCH", Path: "/v7/ticketing/tickets/" + tid + ".json", Header: map[string]string{"Content-Type": ""}})
	r = e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + tid + ".json", Key: e.LiveKey, Body: `{}`})
	e.MustMatch("ticket", r.Body, apitest.SDKTicket)
	e.Must(404, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/farebox-ticket-nope.json"})
	opts := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/tickets/" + tid + "/available_rendering_options.json"})
	if opts.Body[0] != '[' {
		t.Errorf("rendering options: %s", opts.Body)
	}
	// SDK requests are billed to the coupon's account.
	rows := e.UsageRows(r.Header.Get("X-Request-Id"))
	if len(rows) != 1 || rows[0].AccountID != e.AccountID {
		t.Errorf("ticket request ledger rows: %+v", rows)
	}
}
