package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestClearingCommands: a national ticket month sold through the API in
// June 2026 (ended by the commands' clock) is exported as CSV to standard
// output (which reports the month) and as JSON to a file, verifies clean,
// and verify fails naming the item once its billable amount is changed
// behind the report; a bad month is refused naming the flag; the table's
// unmappable codes are listed. Both engines (SQLite only under -short).
func TestClearingCommands(t *testing.T) {
	t.Parallel()
	for _, engine := range storetest.Engines {
		t.Run(string(engine), func(t *testing.T) {
			env, s := migratedEnv(t, engine)
			e := apitest.NewOnStore(t, s, apitest.Options{})
			var prods []struct {
				ID         string `json:"id"`
				TicketType string `json:"ticket_type"`
			}
			e.Must(200, apitest.Req{Method: "GET", Path: "/v2/products/search_by_city_name.json?city_name=Berlin", Key: e.LiveKey}).JSON(t, &prods)
			monthly := ""
			for _, p := range prods {
				if p.TicketType == "month" {
					monthly = p.ID
				}
			}
			var o struct {
				Coupons []struct {
					ID string `json:"id"`
				} `json:"coupons"`
			}
			e.Must(201, apitest.Req{Method: "POST", Path: "/v6/ticketing/orders.json", Key: e.LiveKey,
				Body: map[string]any{"product_ids": []string{monthly}}}).JSON(t, &o)
			e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/coupons/" + o.Coupons[0].ID + "/activate.json",
				Body: map[string]any{"identification_medium": map[string]any{"photo_id_lite": map[string]any{"first_name": "Erika", "last_name": "M", "birth_date": "1990-01-01"}},
					"tariff_settings": map[string]any{"german_postal_code": "80331"}}})

			recs, err := csv.NewReader(strings.NewReader(cli(t, env, "clearing", "export", "--month", "2026-06"))).ReadAll()
			if err != nil || len(recs) != 2 || recs[1][2] != "sale" || recs[1][7] != "80331" || recs[1][8] != "DE-BY" || recs[1][14] != "4900" {
				t.Fatalf("CSV: %v %v", recs, err)
			}
			file := filepath.Join(t.TempDir(), "june.json")
			cli(t, env, "clearing", "export", "--month", "2026-06", "--format", "json", "--output", file)
			raw, err := os.ReadFile(file)
			var rep struct {
				Final  bool `json:"final"`
				Totals struct {
					All struct {
						Count int `json:"ticket_months"`
					} `json:"all"`
				} `json:"totals"`
			}
			if err != nil || json.Unmarshal(raw, &rep) != nil || !rep.Final || rep.Totals.All.Count != 1 {
				t.Fatalf("JSON file: %s %v", raw, err)
			}
			if out := cli(t, env, "clearing", "verify", "2026-06"); !strings.Contains(out, "2026-06 reported: cleared 1 ticket months, 49.00 EUR; billable items 1, 49.00 EUR; 0 differences") {
				t.Errorf("verify: %s", out)
			}
			if _, err := s.DB().Exec(`UPDATE billable_items SET amount_cents = 4655 WHERE amount_cents = 4900`); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			err = run(context.Background(), []string{"clearing", "verify", "2026-06"}, envFrom(env), nil, &out, &errb)
			if err == nil || !strings.Contains(out.String(), "amount differs (cleared 49.00, billable 46.55)") || !strings.Contains(out.String(), "totals differ") {
				t.Errorf("verify after the change: %v\n%s", err, out.String())
			}
			for _, bad := range []string{"2026-6", "2099-01", "2023-01"} {
				out.Reset()
				err := run(context.Background(), []string{"clearing", "export", "--month", bad}, envFrom(env), nil, &out, &errb)
				if err == nil || !strings.Contains(err.Error(), bad) || out.Len() != 0 {
					t.Errorf("--month %s: %v %q", bad, err, out.String())
				}
			}
			if pc := cli(t, env, "clearing", "postal-codes"); !strings.Contains(pc, "UNMAPPED 87491: no state in the source: Jungholz") ||
				!strings.Contains(pc, "MAJORITY 10875 → DE-BE") || !strings.Contains(pc, "6 cannot be mapped") {
				t.Errorf("postal-codes:\n%s", pc)
			}
		})
	}
}
