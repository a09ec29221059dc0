package httpapi_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/money"
	"github.com/farebox/farebox/internal/store"
)

// TestOverflowingSplitNeverInvoiced: a split whose shares wrap around int64
// to the item's price (as stored before the split validator checked its
// sum) cannot be invoiced: the invoice is a 422 naming the share, no
// invoice number is consumed, and the next invoice takes the first number
// (issue 14: invoices for 92.233.720.368.547.758,07 € with 0 € VAT).
func TestOverflowingSplitNeverInvoiced(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		items := orderSingles(t, e, key, 2)
		price := money.Cents(item(t, e, key, items[0])["amount_in_cents"].(float64))
		a := newCustomer(t, e, key, []string{"A GmbH"}, nil)
		b := newCustomer(t, e, key, []string{"B GmbH"}, nil)
		c := newCustomer(t, e, key, []string{"C GmbH"}, nil)
		// The wrapped int64 sum of the shares equals price.
		split := []invoicing.Share{{CustomerID: a, AmountInCents: math.MaxInt64}, {CustomerID: b, AmountInCents: math.MaxInt64}, {CustomerID: c, AmountInCents: price + 2}}
		var wrapped money.Cents
		for _, s := range split {
			wrapped += s.AmountInCents
		}
		if wrapped != price {
			t.Fatalf("shares wrap to %d, not %d", wrapped, price)
		}
		ctx := context.Background()
		if err := e.Store.Write(ctx, func(q store.Q) error {
			return q.SetAssignment(ctx, items[0], invoicing.Assignment{Split: split}, e.Clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		before := [2]int{count(t, e, "invoices"), count(t, e, "jobs")}
		for _, cust := range []string{a, c} {
			r := e.Do(apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_item/" + items[0] + "/invoice/" + cust + ".json", Key: key})
			if r.Status != 422 || !strings.Contains(string(r.Body), `"field":"/lines/0/split/1/amount"`) {
				t.Errorf("invoice of a wrapped split for %s: %d %s", cust, r.Status, r.Body)
			}
		}
		if after := [2]int{count(t, e, "invoices"), count(t, e, "jobs")}; after != before {
			t.Errorf("refused invoices wrote rows: %v → %v", before, after)
		}
		put(t, e, key, items[1], map[string]any{"customer_id": a})
		if inv := issue(t, e, key, items[1], a, nil); !strings.HasSuffix(inv.InvoiceNumber, "-000001") {
			t.Errorf("a refused invoice consumed a number: the next is %s", inv.InvoiceNumber)
		}
	})
}
