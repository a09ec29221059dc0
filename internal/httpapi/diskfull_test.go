package httpapi_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
)

// TestEmbeddedDatabaseFull fills the embedded database (SQLite's
// max_page_count on the writer connection stands in for a full disk):
// writes then fail with 503 storage_full as JSON, nothing is half written,
// the file stays intact, and once space is freed the service works again
// without a restart.
func TestEmbeddedDatabaseFull(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{})
	ids := productIDs(t, e)
	o := order(t, e, e.LiveKey, ids["single/adult"])
	ctx := context.Background()
	var pages int
	if err := e.Store.DB().QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.DB().ExecContext(ctx, `PRAGMA max_page_count = `+strconv.Itoa(pages+2)); err != nil {
		t.Fatal(err)
	}
	var full *apitest.Resp
	placed := 0
	for i := 0; i < 5000 && full == nil; i++ {
		before := counts(t, e)
		r := e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey,
			Body: map[string]any{"product_ids": []string{ids["single/adult"], ids["day/adult"]}}})
		switch r.Status {
		case 201:
			placed++
		case 503:
			full = r
			after := counts(t, e)
			if after["orders"] != before["orders"] || after["coupons"] != before["coupons"] || after["billable_items"] != before["billable_items"] {
				// The ledger row is written after the order commits: an
				// order may be stored although its ledger row was refused.
				if r.Map(t)["code"] != "usage_ledger_unavailable" || after["orders"] != before["orders"]+1 || after["coupons"] != before["coupons"]+2 {
					t.Errorf("a refused order left rows: %v → %v", before, after)
				}
			}
		default:
			t.Fatalf("order %d on a full database: %d %s", i, r.Status, r.Body)
		}
	}
	if full == nil {
		t.Fatalf("the database never filled up (%d orders)", placed)
	}
	m := full.Map(t)
	if code := m["code"]; code != "storage_full" && code != "usage_ledger_unavailable" {
		t.Errorf("full database: %d %s", full.Status, full.Body)
	}
	if full.Header.Get("Retry-After") == "" || m["request_id"] == "" || m["message"] == "" {
		t.Errorf("full database answer lacks Retry-After, message or request id: %v %s", full.Header, full.Body)
	}
	// Later orders are refused the same way; the process stays up.
	before := counts(t, e)
	for i := 0; i < 3; i++ {
		r := e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey,
			Body: map[string]any{"product_ids": []string{ids["single/adult"], ids["day/adult"]}}})
		if r.Status != 503 {
			t.Errorf("order on a full database: %d %s", r.Status, r.Body)
		}
	}
	if after := counts(t, e); after["orders"] != before["orders"] || after["coupons"] != before["coupons"] {
		t.Errorf("refused orders left rows: %v → %v", before, after)
	}
	e.Must(200, apitest.Req{Method: "GET", Path: "/healthz"})
	var check string
	if err := e.Store.ReaderDB().QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	// Space is freed: the same instance writes again.
	if _, err := e.Store.DB().ExecContext(ctx, `PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	order(t, e, e.LiveKey, ids["single/adult"])
	mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), map[string]any{"identification_medium": medium("A", "B", "1990-01-01")})
	if err := e.Store.ReaderDB().QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check after recovery: %q %v", check, err)
	}
	t.Logf("%d orders fitted; refused with %s", placed, full.Body)
}
