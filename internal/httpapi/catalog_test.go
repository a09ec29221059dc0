package httpapi_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/google/go-cmp/cmp"
)

func search(t testing.TB, e *apitest.Env, key, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	r := e.Must(200, apitest.Req{Method: "GET", Path: path, Key: key, Header: map[string]string{"Accept": "application/json"}})
	r.JSON(t, &out)
	e.MustMatch(path, r.Body, apitest.RArr(apitest.SDKProduct))
	return out
}

func monthly(ps []map[string]any) map[string]any {
	for _, p := range ps {
		if p["ticket_type"] == "month" {
			return p
		}
	}
	return nil
}

// TestMonthlyProductMatchesInterface checks the monthly national product
// field by field against the interface document.
func TestMonthlyProductMatchesInterface(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		p := monthly(search(t, e, e.LiveKey, "/v2/products/search_by_city_name.json?city_name=Berlin"))
		if p == nil {
			t.Fatal("no monthly product in Berlin")
		}
		for k, want := range map[string]any{
			"ticket_type": "month", "customer_type": "adult", "duration_definition": "calendar_month",
			"duration_in_minutes": nil, "validity_in_minutes": nil, "price_in_cents": float64(4900), "currency": "EUR",
			"is_subscription": true, "recommended_successor_is": nil, "recommended_successor_of": nil,
			"sold_from": nil, "sold_until": nil, "local_ticket_name": "Deutschlandticket", "inspection_profile": "static",
		} {
			if got, ok := p[k]; !ok || !cmp.Equal(got, want) {
				t.Errorf("%s = %#v (present %v), want %#v", k, got, ok, want)
			}
		}
		// Exactly the interface's schema: one oneOf alternative requiring photo_id_lite and
		// nothing else; photo_id_lite titled Photo-Id with required first_name, last_name
		// (strings) and birth_date (string, format date); in the iOS-decodable layout.
		wantIM := map[string]any{
			"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
			"oneOf": []any{map[string]any{"type": "object", "required": []any{"photo_id_lite"},
				"properties": map[string]any{"photo_id_lite": map[string]any{"$ref": "#/definitions/photo_id_lite"}}, "additionalProperties": false}},
			"definitions": map[string]any{"photo_id_lite": map[string]any{"type": "object", "title": "Photo-Id",
				"required": []any{"first_name", "last_name", "birth_date"}, "additionalProperties": false,
				"properties": map[string]any{
					"first_name": map[string]any{"type": "string", "title": "Vorname", "minLength": float64(1), "maxLength": float64(100)},
					"last_name":  map[string]any{"type": "string", "title": "Nachname", "minLength": float64(1), "maxLength": float64(100)},
					"birth_date": map[string]any{"type": "string", "title": "Geburtsdatum", "format": "date", "examples": []any{"1990-01-01"}}}}},
		}
		if d := cmp.Diff(wantIM, p["identification_medium_schema"]); d != "" {
			t.Errorf("identification_medium_schema (-want +got):\n%s", d)
		}
		ts := p["tariff_settings_schema"].(map[string]any)
		def := ts["definitions"].(map[string]any)["german_postal_code"].(map[string]any)
		req := ts["allOf"].([]any)[0].(map[string]any)["required"]
		if def["pattern"] != "^([0-9]{5}|not-germany)$" || def["type"] != "string" || !cmp.Equal(req, []any{"german_postal_code"}) {
			t.Errorf("tariff_settings_schema: %v", ts)
		}
		if desc, _ := p["local_validity_description"].(string); len(desc) < 100 {
			t.Errorf("validity text too short: %q", desc)
		}
		// The product GET the SDKs use returns the same object without a key.
		r := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/products/" + p["id"].(string) + ".json"})
		e.MustMatch("product", r.Body, apitest.SDKProduct)
		var got map[string]any
		r.JSON(t, &got)
		if d := cmp.Diff(p, got); d != "" {
			t.Errorf("GET product differs from search (-search +get):\n%s", d)
		}
	})
}

func TestSearchByCityName(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		var ids []string
		for _, name := range []string{"München", "Muenchen", "MÜNCHEN", "  münchen ", "muenchen"} {
			ps := search(t, e, e.LiveKey, "/v2/products/search_by_city_name.json?city_name="+url.QueryEscape(name))
			if len(ps) != 4 {
				t.Fatalf("%q: %d products, want the 4 ticket types", name, len(ps))
			}
			var got []string
			types := map[string]bool{}
			for _, p := range ps {
				got = append(got, p["id"].(string))
				types[p["ticket_type"].(string)+"/"+p["customer_type"].(string)] = true
			}
			if ids == nil {
				ids = got
			} else if !cmp.Equal(ids, got) {
				t.Errorf("%q found other products", name)
			}
			if !types["single/adult"] || !types["single/child"] || !types["day/adult"] || !types["month/adult"] {
				t.Errorf("%q: types %v", name, types)
			}
		}
		for _, name := range []string{"Köln", "Koeln", "Frankfurt am Main", "Stuttgart", "Dresden", "Leipzig", "Hamburg"} {
			if ps := search(t, e, e.LiveKey, "/v2/products/search_by_city_name.json?city_name="+url.QueryEscape(name)); len(ps) != 4 {
				t.Errorf("%s: %d products", name, len(ps))
			}
		}
		if ps := search(t, e, e.LiveKey, "/v2/products/search_by_city_name.json?city_name=Atlantis"); len(ps) != 0 {
			t.Errorf("unknown city: %d products", len(ps))
		}
		r := e.Must(400, apitest.Req{Method: "GET", Path: "/v2/products/search_by_city_name.json?city_name=%20", Key: e.LiveKey})
		if m := r.Map(t); m["code"] != "invalid_parameter" || m["details"].([]any)[0].(map[string]any)["field"] != "city_name" {
			t.Errorf("blank city: %v", m)
		}
		e.Must(401, apitest.Req{Method: "GET", Path: "/v2/products/search_by_city_name.json?city_name=Berlin"})
	})
}

func TestSearchByCoordinatesAndBox(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{})
	berlin := search(t, e, e.LiveKey, "/v2/products/search_by_city_name.json?city_name=Berlin")
	potsdamerPlatz := search(t, e, e.LiveKey, "/v2/products/search_by_coordinates.json?latitude=52.5096&longitude=13.3760")
	if !cmp.Equal(berlin, potsdamerPlatz) {
		t.Errorf("coordinates in Berlin find other products than the city name")
	}
	if ps := search(t, e, e.LiveKey, "/v2/products/search_by_coordinates.json?latitude=48.8566&longitude=2.3522"); len(ps) != 0 {
		t.Errorf("Paris: %d products", len(ps))
	}
	rural := search(t, e, e.LiveKey, "/v2/products/search_by_coordinates.json?latitude=52.0&longitude=10.0")
	if len(rural) != 1 || rural[0]["ticket_type"] != "month" {
		t.Errorf("rural Germany should sell the national product only: %v", rural)
	}
	// A box over Leipzig and Dresden covers two areas: 3 local products each plus one national product.
	both := search(t, e, e.LiveKey, "/v2/products/search_by_bounding_box.json?min_latitude=51.0&min_longitude=12.3&max_latitude=51.4&max_longitude=13.8")
	areas := map[string]bool{}
	for _, p := range both {
		areas[p["area_id"].(string)] = true
	}
	if len(both) != 7 || len(areas) != 3 {
		t.Errorf("box over two areas: %d products in %d areas", len(both), len(areas))
	}
	for _, q := range []string{"latitude=91&longitude=0", "latitude=abc&longitude=0", "longitude=13", "latitude=NaN&longitude=1"} {
		r := e.Must(400, apitest.Req{Method: "GET", Path: "/v2/products/search_by_coordinates.json?" + q, Key: e.LiveKey})
		if m := r.Map(t); m["code"] != "invalid_parameter" {
			t.Errorf("%s: %v", q, m)
		}
	}
	e.Must(400, apitest.Req{Method: "GET", Path: "/v2/products/search_by_bounding_box.json?min_latitude=52&min_longitude=13&max_latitude=51&max_longitude=14", Key: e.LiveKey})
	e.Must(400, apitest.Req{Method: "GET", Path: "/v2/products/search_by_bounding_box.json?min_latitude=52&min_longitude=13&max_latitude=53", Key: e.LiveKey})

	// Area lookup.
	areaID := berlin[0]["area_id"].(string)
	r := e.Must(200, apitest.Req{Method: "GET", Path: "/v2/areas/" + areaID + ".json", Key: e.LiveKey})
	e.MustMatch("area", r.Body, apitest.SDKCouponArea)
	var area map[string]any
	r.JSON(t, &area)
	if area["properties"].(map[string]any)["city_name"] != "Berlin" || area["properties"].(map[string]any)["local_zone_name"] != "Berlin AB" {
		t.Errorf("area: %v", area["properties"])
	}
	e.Must(404, apitest.Req{Method: "GET", Path: "/v2/areas/farebox-area-00000000-0000-4000-8000-000000000000.json", Key: e.LiveKey})
	e.Must(404, apitest.Req{Method: "GET", Path: "/v6/ticketing/products/nope.json"})
}

func TestJobTicketOnlyForGrantedAccounts(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{})
	var job string
	for _, p := range e.Products.Catalog().File().Products {
		if p.Restricted {
			job = p.ID
			if p.PriceInCents != 4655 {
				t.Errorf("job ticket costs %d", p.PriceInCents)
			}
		}
	}
	has := func(ps []map[string]any) bool {
		for _, p := range ps {
			if p["id"] == job {
				return true
			}
		}
		return false
	}
	if has(search(t, e, e.LiveKey, "/v2/products/search_by_city_name.json?city_name=Berlin")) {
		t.Error("job ticket shown to an account without the grant")
	}
	if err := e.Products.Grant(t.Context(), idempotency.Claim{}, e.AccountID, job); err != nil {
		t.Fatal(err)
	}
	if !has(search(t, e, e.LiveKey, "/v2/products/search_by_city_name.json?city_name=Berlin")) {
		t.Error("job ticket hidden from a granted account")
	}
	var raw json.RawMessage = e.Must(200, apitest.Req{Method: "GET", Path: "/v6/ticketing/products/" + job + ".json"}).Body
	e.MustMatch("job product", raw, apitest.SDKProduct)
}

// TestSaleWindowAndGrantsApplyToOrdering: a product outside its sale window
// is neither found nor orderable; the job ticket is orderable once granted.
func TestSaleWindowAndGrantsApplyToOrdering(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		f := e.Products.Catalog().File()
		ended := apitest.DefaultNow.Add(-time.Hour)
		var dayID, jobID string
		for i := range f.Products {
			p := &f.Products[i]
			if p.TicketType == "day" && dayID == "" {
				p.SoldUntil, dayID = &ended, p.ID
			}
			if p.Restricted {
				jobID = p.ID
			}
		}
		if err := e.Products.Import(t.Context(), f); err != nil {
			t.Fatal(err)
		}
		for _, p := range search(t, e, e.LiveKey, "/v2/products/search_by_coordinates.json?latitude=52.52&longitude=13.405") {
			if p["id"] == dayID {
				t.Error("a product no longer sold is still found")
			}
		}
		r := e.Must(422, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey, Body: map[string]any{"product_ids": []string{dayID}}})
		if !strings.Contains(str(r.Map(t)["message"]), "not on sale") {
			t.Errorf("unsold product: %s", r.Body)
		}
		e.Must(422, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey, Body: map[string]any{"product_ids": []string{jobID}}})
		if err := e.Products.Grant(t.Context(), idempotency.Claim{}, e.AccountID, jobID); err != nil {
			t.Fatal(err)
		}
		o := order(t, e, e.LiveKey, jobID)
		if p := o.Coupons[0]["product"].(map[string]any); p["price_in_cents"] != float64(4655) || o.Coupons[0]["subscription"] == nil {
			t.Errorf("job ticket order: %v", p)
		}
	})
}
