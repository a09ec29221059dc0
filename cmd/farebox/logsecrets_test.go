package main

import (
	"net/url"
	"path"
	"strings"
	"testing"
	"time"
)

// TestLogsHoldNoSecrets runs a whole partner and phone flow at debug level
// (orders, activation, ticket fetches, reactivation, restore, invoices and
// their downloads, failing calls with wrong and revoked keys) and checks
// that no credential ever reaches the log: API keys, coupon and ticket ids
// (the SDK's credentials), restore secrets, reactivation keys and invoice
// download identifiers. Every request still logs its request id.
func TestLogsHoldNoSecrets(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t, map[string]string{"FAREBOX_LOG_LEVEL": "debug", "FAREBOX_LOG_FORMAT": "json"})
	in, key := servePartner(t, env)
	base := in.url()
	var secrets []string
	ids := products(t, base, key)

	o := must(t, 201, base, "POST", "/v9/ticketing/orders.json", key, map[string]any{"product_ids": []string{ids["month/adult"], ids["single/adult"]}}).m()
	secrets = append(secrets, key, str(o["restore_secret"]))
	var monthly, single string
	var item string
	for _, c := range o["coupons"].([]any) {
		m := c.(map[string]any)
		secrets = append(secrets, str(m["id"]))
		if m["subscription"] != nil {
			monthly = str(m["id"])
		} else {
			single, item = str(m["id"]), str(m["billable_item_id"])
		}
	}
	must(t, 200, base, "GET", "/v9/ticketing/coupons/"+single+".json", "", nil)
	t1 := str(must(t, 201, base, "POST", "/v9/ticketing/coupons/"+single+"/activate.json", "", photoID).m()["ticket_id"])
	t2 := str(must(t, 201, base, "POST", "/v9/ticketing/coupons/"+monthly+"/activate.json", "", photoIDMonthly).m()["ticket_id"])
	secrets = append(secrets, t1, t2)
	tk := must(t, 200, base, "PATCH", "/v9/ticketing/tickets/"+t2+".json", "", nil).m()
	react := str(tk["coupon_reactivation_key"])
	if react == "" {
		t.Fatalf("monthly ticket without reactivation key: %v", tk)
	}
	secrets = append(secrets, react)
	must(t, 200, base, "PATCH", "/v9/ticketing/tickets/"+t1+".json", "", nil)
	must(t, 200, base, "GET", "/v9/ticketing/tickets/"+t1+"/available_rendering_options.json", "", nil)
	sub := must(t, 200, base, "GET", "/v9/ticketing/coupons/"+monthly+".json", "", nil).m()["subscription"].(map[string]any)
	must(t, 201, base, "POST", "/v9/ticketing/subscriptions/"+str(sub["id"])+"/reorder.json", key, nil)
	// Wrong uses of the credentials fail and must not echo them either.
	call(base, "POST", "/v9/ticketing/coupons/"+monthly+"/activate.json", "", map[string]any{"reactivation_key": react + "x"}, nil)
	call(base, "POST", "/v9/ticketing/orders/"+str(o["order_id"])+"/restore.json", key,
		map[string]any{"restore_secret": str(o["restore_secret"]) + "x", "coupon_ids": []string{single}}, nil)
	restored := call(base, "POST", "/v9/ticketing/orders/"+str(o["order_id"])+"/restore.json", key,
		map[string]any{"restore_secret": str(o["restore_secret"]), "coupon_ids": []string{single}}, nil)
	if restored.status == 201 {
		for _, c := range restored.m()["coupons"].([]any) {
			secrets = append(secrets, str(c.(map[string]any)["id"]))
		}
	}
	// Invoice and its downloads (the identifier in the URL is the secret).
	inv := must(t, 201, base, "POST", "/v5/ticketing/billable_item/"+item+"/invoice.json", key, nil).m()
	u, err := url.Parse(str(inv["invoice_pdf_url"]))
	if err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, strings.TrimSuffix(path.Base(u.Path), ".pdf"))
	waitFor(t, 60*time.Second, "the invoice PDF", func() bool { return call(base, "GET", u.Path, "", nil, nil).status == 200 })
	call(base, "GET", strings.Replace(u.Path, ".pdf", "0.pdf", 1), "", nil, nil)
	// Keys: a wrong one, one in the query where it is refused, a revoked one.
	call(base, "GET", "/v1/account.json", key+"x", nil, nil)
	call(base, "GET", "/v1/account.json?api_key="+key, "", nil, nil)
	// Transit endpoints take the key in the query string: never logged either.
	call(base, "GET", "/v1/departures.json?station_id=farebox-station-nowhere&api_key="+key, "", nil, nil)
	call(base, "GET", "/v1/stations/search_by_name.json?name=Berlin&api_key="+key, "", nil, nil)
	cli(t, env, "accounts", "revoke", key[:17], "--yes")
	waitFor(t, 20*time.Second, "revocation", func() bool { return call(base, "GET", "/v1/account.json", key, nil, nil).status == 401 })
	// A request id the caller chose is logged with its request.
	call(base, "GET", "/v9/ticketing/coupons/"+single+".json", "", nil, map[string]string{"X-Request-Id": "trace-me-42"})
	in.stop()

	logs := in.logs.String()
	for _, s := range secrets {
		if s == "" {
			t.Fatal("a secret of the flow is empty")
		}
		if strings.Contains(logs, s) {
			i := strings.Index(logs, s)
			t.Errorf("the log contains a secret %q…: …%s…", s[:12], logs[max(0, i-200):min(len(logs), i+len(s)+50)])
		}
	}
	// Key prefixes (fbx_live_ plus the public 8 characters) may appear, the rest never.
	if strings.Contains(logs, key[17:]) {
		t.Error("the secret part of the API key is in the log")
	}
	if !hasAll(logs, `"request_id":"trace-me-42"`, `"msg":"request"`, `"route":"PATCH /v9/ticketing/tickets/{ticket_id}.json"`) {
		t.Errorf("request logs lack request ids or routes:\n%s", logs[:min(len(logs), 2000)])
	}
	if n := strings.Count(logs, `"msg":"request"`); n < 20 {
		t.Errorf("only %d request log lines", n)
	}
}
