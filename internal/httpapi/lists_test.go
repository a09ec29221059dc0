package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
)

// TestOrderListEndpoint: GET /v9/ticketing/orders.json answers the
// caller's orders in the documented shape (responses are validated
// against the OpenAPI file), pages both ways, filters by reference, shows
// each order as its GET does, keeps environments apart, and refuses bad
// parameters with a 400 naming the parameter.
func TestOrderListEndpoint(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		var placed []string
		for i := range 3 {
			body := map[string]any{"product_ids": []string{ids["single/adult"]}}
			if i == 1 {
				body["optional_order_reference"] = "ref & 1"
			}
			var o orderResp
			e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey, Body: body}).JSON(t, &o)
			placed = append(placed, o.OrderID)
		}
		list := func(key, query string) map[string]any {
			t.Helper()
			return e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/orders.json" + query, Key: key}).Map(t)
		}
		orderIDs := func(l map[string]any) (out []string) {
			for _, d := range l["data"].([]any) {
				out = append(out, d.(map[string]any)["order_id"].(string))
			}
			return out
		}
		all := list(e.LiveKey, "")
		got := orderIDs(all)
		if len(got) != 3 || all["has_more"] != false || all["object"] != "list" {
			t.Fatalf("orders: %v", all)
		}
		wantListedAsGET(t, e, all["data"].([]any), func(o map[string]any) string { return "/v9/ticketing/orders/" + str(o["order_id"]) + ".json" })
		first := list(e.LiveKey, "?limit=2")
		rest := list(e.LiveKey, "?limit=2&starting_after="+url.QueryEscape(orderIDs(first)[1]))
		back := list(e.LiveKey, "?limit=2&ending_before="+url.QueryEscape(orderIDs(rest)[0]))
		if first["has_more"] != true || rest["has_more"] != false || len(orderIDs(rest)) != 1 || orderIDs(rest)[0] != got[2] ||
			back["has_more"] != false || asJSONString(t, orderIDs(back)) != asJSONString(t, orderIDs(first)) {
			t.Errorf("pages: %v / %v / %v", orderIDs(first), orderIDs(rest), orderIDs(back))
		}
		if l := orderIDs(list(e.LiveKey, "?optional_order_reference="+url.QueryEscape("ref & 1"))); len(l) != 1 || l[0] != placed[1] {
			t.Errorf("reference filter: %v, want %s", l, placed[1])
		}
		wantListGuards(t, e, "/v9/ticketing/orders.json", map[string]string{
			"?limit=0":                              "limit",
			"?limit=abc":                            "limit",
			"?created%5Bgte%5D=yesterday":           "created[gte]",
			"?created%5Blt%5D=2026-13-01T00:00:00Z": "created[lt]",
			"?starting_after=farebox-order-nope":    "starting_after",
			"?ending_before=" + got[0]:              "",
			"?reference=x":                          "reference",
			"?optional_order_reference=a&optional_order_reference=b": "optional_order_reference",
		})
	})
}

// asJSONString is v as JSON, to compare decoded answers.
func asJSONString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSubscriptionListEndpoint: GET /v9/ticketing/subscriptions.json
// answers the caller's subscriptions in the documented shape, each as its
// GET shows it, filters by state, pages, and refuses bad parameters with
// a 400 naming the parameter.
func TestSubscriptionListEndpoint(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		var subs []string
		for range 2 {
			o := order(t, e, e.LiveKey, ids["month/adult"])
			subs = append(subs, str(o.Coupons[0]["subscription"].(map[string]any)["id"]))
		}
		e.Must(200, apitest.Req{Method: "DELETE", Path: "/v9/ticketing/subscriptions/" + subs[0] + ".json", Key: e.LiveKey})
		list := func(key, query string) map[string]any {
			t.Helper()
			return e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/subscriptions.json" + query, Key: key}).Map(t)
		}
		all := list(e.LiveKey, "")
		data := all["data"].([]any)
		if len(data) != 2 || all["has_more"] != false || all["object"] != "list" {
			t.Fatalf("subscriptions: %v", all)
		}
		wantListedAsGET(t, e, data, func(s map[string]any) string { return "/v9/ticketing/subscriptions/" + str(s["id"]) + ".json" })
		first := list(e.LiveKey, "?limit=1")
		next := list(e.LiveKey, "?limit=1&starting_after="+str(first["data"].([]any)[0].(map[string]any)["id"]))
		if first["has_more"] != true || next["has_more"] != false || len(next["data"].([]any)) != 1 {
			t.Errorf("pages: %v / %v", first, next)
		}
		for state, want := range map[string]string{"cancelled": subs[0], "active": subs[1]} {
			l := list(e.LiveKey, "?state="+state)["data"].([]any)
			if len(l) != 1 || l[0].(map[string]any)["id"] != want {
				t.Errorf("state %s: %v, want %s", state, l, want)
			}
		}
		wantListGuards(t, e, "/v9/ticketing/subscriptions.json", map[string]string{
			"?state=paused":                         "state",
			"?ends_at%5Bgte%5D=tomorrow":            "ends_at[gte]",
			"?ends_at%5Bgt%5D=2026-08-01T00:00:00Z": "ends_at[gt]",
			"?limit=101":                            "limit",
			"?ending_before=" + subs[1]:             "",
		})
	})
}

// TestCouponListEndpoint: GET /v9/ticketing/coupons.json answers the
// caller's coupons in the documented shape, each as its v9 GET shows it,
// filters by state, pages, and refuses bad parameters naming them.
func TestCouponListEndpoint(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		o := order(t, e, e.LiveKey, ids["single/adult"], ids["single/adult"])
		activated := str(o.Coupons[0]["id"])
		mustActivate(t, e, "v9", activated, map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01")})
		list := func(query string) []any {
			t.Helper()
			l := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/coupons.json" + query, Key: e.LiveKey}).Map(t)
			if l["object"] != "list" {
				t.Fatalf("coupons: %v", l)
			}
			return l["data"].([]any)
		}
		data := list("")
		if len(data) != 2 {
			t.Fatalf("coupons: %v", data)
		}
		for _, d := range data {
			c := d.(map[string]any)
			// The owner's keyed GET (a keyless one leaves out restored_coupon_id).
			get := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/coupons/" + str(c["id"]) + ".json", Key: e.LiveKey}).Map(t)
			if asJSONString(t, get) != asJSONString(t, c) {
				t.Errorf("listed %v, GET %v", c, get)
			}
		}
		if l := list("?state=activated"); len(l) != 1 || l[0].(map[string]any)["id"] != activated {
			t.Errorf("activated: %v", l)
		}
		if l := list("?state=not_activated&limit=1"); len(l) != 1 || l[0].(map[string]any)["id"] != o.Coupons[1]["id"] {
			t.Errorf("not_activated: %v", l)
		}
		wantListGuards(t, e, "/v9/ticketing/coupons.json", map[string]string{
			"?state=used":                 "state",
			"?limit=0":                    "limit",
			"?ending_before=" + activated: "",
		})
	})
}

// TestTicketListEndpoint: GET /v9/ticketing/tickets.json answers the
// caller's tickets in the documented shape, each as PATCH …/tickets/{id}
// shows it, filters by state, and refuses bad parameters naming them.
func TestTicketListEndpoint(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		_, cid := orderFirst(t, e, e.LiveKey, ids["single/adult"])
		act := mustActivate(t, e, "v9", cid, map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01")})
		l := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/tickets.json", Key: e.LiveKey}).Map(t)
		data := l["data"].([]any)
		if len(data) != 1 || l["has_more"] != false {
			t.Fatalf("tickets: %v", l)
		}
		listed := data[0].(map[string]any)
		get := e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + str(listed["id"]) + ".json"}).Map(t)
		if asJSONString(t, get) != asJSONString(t, listed) || listed["coupon_id"] != cid {
			t.Errorf("listed %v, GET %v (activation %v)", listed, get, act)
		}
		if l := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/tickets.json?state=invalidated", Key: e.LiveKey}).Map(t); len(l["data"].([]any)) != 0 {
			t.Errorf("invalidated: %v", l)
		}
		wantListGuards(t, e, "/v9/ticketing/tickets.json", map[string]string{
			"?state=valid%20":                     "state",
			"?ending_before=" + str(listed["id"]): "",
			"?limit=1&starting_after=" + cid:      "starting_after",
		})
	})
}

// TestCustomerListEndpoint: GET /v9/ticketing/customers.json answers the
// caller's customers in the documented shape, each as its GET shows it,
// pages, and refuses bad parameters naming them.
func TestCustomerListEndpoint(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		var created []string
		for _, name := range []string{"Erste GmbH", "Zweite GmbH"} {
			c := e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/customers.json", Key: e.LiveKey,
				Body: map[string]any{"customer": map[string]any{"address_lines": []string{name, "Hauptstraße 1", "10115 Berlin"}}}}).Map(t)
			created = append(created, str(c["id"]))
		}
		l := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/customers.json?limit=1", Key: e.LiveKey}).Map(t)
		data := l["data"].([]any)
		if len(data) != 1 || l["has_more"] != true {
			t.Fatalf("customers: %v", l)
		}
		listed := data[0].(map[string]any)
		get := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/customers/" + str(listed["id"]) + ".json", Key: e.LiveKey}).Map(t)
		if asJSONString(t, get) != asJSONString(t, listed) {
			t.Errorf("listed %v, GET %v", listed, get)
		}
		next := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/customers.json?starting_after=" + str(listed["id"]), Key: e.LiveKey}).Map(t)
		if d := next["data"].([]any); len(d) != 1 || next["has_more"] != false || d[0].(map[string]any)["id"] == listed["id"] {
			t.Errorf("second page: %v (created %v)", next, created)
		}
		wantListGuards(t, e, "/v9/ticketing/customers.json", map[string]string{
			"?state=active":                "state",
			"?ending_before=" + created[0]: "",
			"?created%5Blt%5D=x":           "created[lt]",
		})
	})
}

// TestInvoiceListEndpoint: GET /v9/ticketing/invoices.json answers the
// caller's documents in the documented shape, each as its GET shows it,
// filters by customer and number, and refuses bad parameters naming them.
func TestInvoiceListEndpoint(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		items := orderSingles(t, e, e.LiveKey, 2)
		var invs []InvoiceJSON
		var customers []string
		for i, it := range items {
			c := newCustomer(t, e, e.LiveKey, []string{fmt.Sprintf("Kunde %d GmbH", i), "Hauptstraße 1", "10115 Berlin"}, nil)
			put(t, e, e.LiveKey, it, map[string]any{"customer_id": c})
			invs, customers = append(invs, issue(t, e, e.LiveKey, it, c, nil)), append(customers, c)
		}
		list := func(query string) []any {
			t.Helper()
			return e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/invoices.json" + query, Key: e.LiveKey}).Map(t)["data"].([]any)
		}
		data := list("")
		if len(data) != 2 {
			t.Fatalf("invoices: %v", data)
		}
		wantListedAsGET(t, e, data, func(v map[string]any) string { return "/v5/ticketing/invoices/" + str(v["invoice_id"]) + ".json" })
		if l := list("?customer_id=" + customers[1]); len(l) != 1 || l[0].(map[string]any)["invoice_id"] != invs[1].InvoiceID {
			t.Errorf("customer filter: %v", l)
		}
		if l := list("?number=" + url.QueryEscape(invs[0].InvoiceNumber)); len(l) != 1 || l[0].(map[string]any)["invoice_id"] != invs[0].InvoiceID {
			t.Errorf("number filter: %v", l)
		}
		wantListGuards(t, e, "/v9/ticketing/invoices.json", map[string]string{
			"?invoice_number=1":                   "invoice_number",
			"?ending_before=" + invs[0].InvoiceID: "",
			"?starting_after=" + customers[0]:     "starting_after",
		})
	})
}

// wantListGuards checks what every list guards: the test environment
// sees none of the live records made before; each query of cases is a 400
// invalid_parameter naming its field with the live key (a field "" marks a
// query sent with the test key, whose live cursor must be refused as
// ending_before); without a key the list is a 401.
func wantListGuards(t *testing.T, e *apitest.Env, path string, cases map[string]string) {
	t.Helper()
	if l := e.Must(200, apitest.Req{Method: "GET", Path: path, Key: e.TestKey}).Map(t); len(l["data"].([]any)) != 0 {
		t.Errorf("%s: the test environment sees live records: %v", path, l)
	}
	for query, field := range cases {
		key := e.LiveKey
		if field == "" { // a live id is no cursor in the test environment
			key, field = e.TestKey, "ending_before"
		}
		wantInvalidParameter(t, e, key, path+query, field)
	}
	e.Must(401, apitest.Req{Method: "GET", Path: path})
}

// wantListedAsGET checks that each listed object is exactly what its own
// GET (at the path pathOf gives) answers with the live key.
func wantListedAsGET(t *testing.T, e *apitest.Env, data []any, pathOf func(map[string]any) string) {
	t.Helper()
	for _, d := range data {
		listed := d.(map[string]any)
		get := e.Must(200, apitest.Req{Method: "GET", Path: pathOf(listed), Key: e.LiveKey}).Map(t)
		if asJSONString(t, get) != asJSONString(t, listed) {
			t.Errorf("listed %v, GET %v", listed, get)
		}
	}
}

// wantInvalidParameter sends GET path with key, wants a 400
// invalid_parameter naming exactly the one field, and returns the answer.
func wantInvalidParameter(t *testing.T, e *apitest.Env, key, path, field string) *apitest.Resp {
	t.Helper()
	r := e.Must(400, apitest.Req{Method: "GET", Path: path, Key: key})
	m := r.Map(t)
	det, _ := m["details"].([]any)
	if m["code"] != "invalid_parameter" || len(det) != 1 || det[0].(map[string]any)["field"] != field {
		t.Errorf("%s: %s (want field %s)", path, r.Body, field)
	}
	return r
}

// TestBillableItemListEndpoint: GET /v9/ticketing/billable_items.json
// answers the caller's items newest first, each as its GET shows it,
// filters by invoiced, customer and collection (alone and together), pages
// both ways and refuses bad parameters naming them.
func TestBillableItemListEndpoint(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		var items []string
		for range 4 {
			items = append(items, orderSingles(t, e, e.LiveKey, 1)[0])
			e.Clock.Advance(time.Second)
		}
		c1 := newCustomer(t, e, e.LiveKey, []string{"Kunde GmbH", "Hauptstraße 1", "10115 Berlin"}, nil)
		col := str(e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collections.json", Key: e.LiveKey}).Map(t)["id"])
		put(t, e, e.LiveKey, items[0], map[string]any{"customer_id": c1})
		put(t, e, e.LiveKey, items[1], map[string]any{"customer_id": c1, "billablable_collection_id": col})
		put(t, e, e.LiveKey, items[2], map[string]any{"billablable_collection_id": col})
		issue(t, e, e.LiveKey, items[0], c1, nil)
		list := func(query string) map[string]any {
			t.Helper()
			return e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/billable_items.json" + query, Key: e.LiveKey}).Map(t)
		}
		ids := func(l map[string]any) (out []string) {
			for _, d := range l["data"].([]any) {
				out = append(out, str(d.(map[string]any)["id"]))
			}
			return out
		}
		all := list("")
		if got := ids(all); fmt.Sprint(got) != fmt.Sprint([]string{items[3], items[2], items[1], items[0]}) || all["has_more"] != false {
			t.Fatalf("items: %v", got)
		}
		wantListedAsGET(t, e, all["data"].([]any), func(v map[string]any) string { return "/v5/ticketing/billable_item/" + str(v["id"]) + ".json" })
		for query, want := range map[string][]string{
			"?invoiced=true":                                           {items[0]},
			"?invoiced=false":                                          {items[3], items[2], items[1]},
			"?customer_id=" + c1:                                       {items[1], items[0]},
			"?billablable_collection_id=" + col:                        {items[2], items[1]},
			"?customer_id=" + c1 + "&invoiced=false":                   {items[1]},
			"?customer_id=" + c1 + "&billablable_collection_id=" + col: {items[1]},
			"?customer_id=nobody":                                      nil,
		} {
			if got := ids(list(query)); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %v, want %v", query, got, want)
			}
		}
		first := list("?limit=3")
		rest := list("?limit=3&starting_after=" + items[1])
		back := list("?limit=3&ending_before=" + items[0])
		if first["has_more"] != true || fmt.Sprint(ids(rest)) != fmt.Sprint([]string{items[0]}) || rest["has_more"] != false ||
			fmt.Sprint(ids(back)) != fmt.Sprint(ids(first)) || back["has_more"] != false {
			t.Errorf("pages: %v / %v / %v", ids(first), ids(rest), ids(back))
		}
		wantListGuards(t, e, "/v9/ticketing/billable_items.json", map[string]string{
			"?invoiced=yes":                "invoiced",
			"?invoiced=":                   "invoiced",
			"?collection_id=" + col:        "collection_id",
			"?limit=101":                   "limit",
			"?starting_after=" + c1:        "starting_after",
			"?ending_before=" + items[0]:   "",
			"?customer_id=a&customer_id=b": "customer_id",
			"?created%5Bgte%5D=2026-06-15": "created[gte]",
		})
	})
}

// TestCollectionListEndpoint: GET /v9/ticketing/billable_collections.json
// pages the caller's collections newest first and guards like every list.
func TestCollectionListEndpoint(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		var cols []string
		for range 3 {
			cols = append(cols, str(e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collections.json", Key: e.LiveKey}).Map(t)["id"]))
			e.Clock.Advance(time.Second)
		}
		var seen []string
		after := ""
		for {
			path := "/v9/ticketing/billable_collections.json?limit=2"
			if after != "" {
				path += "&starting_after=" + after
			}
			l := e.Must(200, apitest.Req{Method: "GET", Path: path, Key: e.LiveKey}).Map(t)
			for _, d := range l["data"].([]any) {
				c := d.(map[string]any)
				if c["object"] != "billable_collection" || c["environment"] != "live" {
					t.Fatalf("collection: %v", c)
				}
				seen = append(seen, str(c["id"]))
			}
			if l["has_more"] != true {
				break
			}
			after = seen[len(seen)-1]
		}
		if fmt.Sprint(seen) != fmt.Sprint([]string{cols[2], cols[1], cols[0]}) {
			t.Fatalf("collections: %v, want %v", seen, cols)
		}
		wantListGuards(t, e, "/v9/ticketing/billable_collections.json", map[string]string{
			"?state=open":               "state",
			"?ending_before=" + cols[0]: "",
			"?starting_after=nope":      "starting_after",
		})
	})
}
