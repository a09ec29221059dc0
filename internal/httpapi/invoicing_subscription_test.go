package httpapi_test

import (
	"testing"

	"github.com/farebox/farebox/internal/apitest"
)

// TestInvoiceSubscriptionCycles invoices ten ordered monthly cycles (the
// cycle billable items of ordering and reorder) in one collection: 10 ×
// 49,00 € gives 490,00 € gross, 457,94 € net and 32,06 € VAT at 7 %, the
// rounding docs/invoicing.md documents, with line nets adding up exactly.
func TestInvoiceSubscriptionCycles(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		ids := productIDs(t, e)
		var order struct {
			Coupons []struct {
				Subscription struct {
					ID     string `json:"id"`
					Cycles []struct {
						BillableItemID *string `json:"billable_item_id"`
					} `json:"subscription_cycles"`
				} `json:"subscription"`
			} `json:"coupons"`
		}
		var months []string
		for i := 0; i < 10; i++ {
			e.Must(201, apitest.Req{Method: "POST", Path: "/v6/ticketing/orders.json", Key: key,
				Body: map[string]any{"product_ids": []string{ids["month/adult"]}}}).JSON(t, &order)
			months = append(months, *order.Coupons[0].Subscription.Cycles[0].BillableItemID)
		}
		cust := newCustomer(t, e, key, []string{"Stadt Beispielstadt"},
			electronic("Stadt Beispielstadt", "0204", "04011000-12345-67", "04011000-12345-67", "04109"))
		coll := e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collections.json", Key: key}).Map(t)["id"].(string)
		for _, id := range months {
			put(t, e, key, id, map[string]any{"customer_id": cust})
		}
		e.Must(200, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collection/" + coll + "/billable_items.json", Key: key,
			Body: map[string]any{"billable_item_ids": months}})
		it := item(t, e, key, months[0])
		if it["subscription_cycle_id"] == nil || it["subscription_id"] == nil || it["amount_in_cents"] != float64(4900) {
			t.Errorf("cycle item: %v", it)
		}
		inv := issue(t, e, key, months[3], cust, nil)
		var net int64
		for _, l := range inv.Lines {
			net += l.Net
			if l.Gross != 4900 || l.Net+l.VAT != 4900 || l.VATRateBP != 700 {
				t.Errorf("line %+v", l)
			}
		}
		if len(inv.Lines) != 10 || inv.Totals.Gross != 49000 || inv.Totals.Net != 45794 || inv.Totals.VAT != 3206 || net != 45794 ||
			inv.Totals.PayableText != "490,00 €" || inv.ServicePeriod.Text != "Juni 2026" {
			t.Errorf("subscription invoice: %+v", inv)
		}
		runJobs(t, e)
		checkFiles(t, e, inv, []string{"490,00 €", "457,94 €", "32,06 €"})
	})
}
