package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
)

// seedLists gives PostgreSQL's planner tables worth an index: n orders
// and n subscriptions (a quarter restored, a quarter with an end) of one
// account over n seconds, then fresh statistics. (SQLite plans a LIMIT …
// ORDER BY from the schema alone.)
func seedLists(t *testing.T, s *store.Store, accountID string, n int) {
	t.Helper()
	if s.Engine() != store.Postgres {
		return
	}
	ctx := context.Background()
	for _, stmt := range []string{
		`INSERT INTO areas (id, position, data) VALUES ('seed-area', 0, '{}')`,
		`INSERT INTO products (id, area_id, position, data) VALUES ('seed-product', 'seed-area', 0, '{}')`,
		`INSERT INTO orders (id, account_id, environment, optional_order_reference, restore_secret, created_at)
		SELECT 'seed-' || g, $1, CASE WHEN g % 2 = 0 THEN 'live' ELSE 'test' END, 'ref-' || (g % 100), 's',
			TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 second' FROM generate_series(1, $2::int) g`,
		`INSERT INTO subscriptions (id, account_id, environment, product_id, restored_subscription_id, ends_at, created_at)
		SELECT 'seed-sub-' || g, $1, CASE WHEN g % 2 = 0 THEN 'live' ELSE 'test' END, 'seed-product',
			CASE WHEN g % 4 = 0 THEN 'seed-sub-x' END,
			CASE WHEN g % 4 = 1 THEN TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 minute' END,
			TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 second' FROM generate_series(1, $2::int) g`,
		`INSERT INTO coupons (id, order_id, position, account_id, environment, product_id, restored_coupon_id, activated, created_at)
		SELECT 'seed-coupon-' || g, 'seed-' || g, 0, $1, CASE WHEN g % 2 = 0 THEN 'live' ELSE 'test' END, 'seed-product',
			CASE WHEN g % 5 = 0 THEN 'seed-coupon-x' END, g % 3 = 0,
			TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 second' FROM generate_series(1, $2::int) g`,
		`INSERT INTO tickets (id, coupon_id, account_id, environment, product_id, cycle_id, identification_medium, medium_hash,
			valid_from, valid_until, invalidated_at, created_at)
		SELECT 'seed-ticket-' || g, 'seed-coupon-' || g, $1, CASE WHEN g % 2 = 0 THEN 'live' ELSE 'test' END, 'seed-product', 'c', '{}', 'h',
			TIMESTAMPTZ '2026-01-01 00:00:00+00', TIMESTAMPTZ '2026-01-02 00:00:00+00',
			CASE WHEN g % 7 = 0 THEN TIMESTAMPTZ '2026-01-01 12:00:00+00' END,
			TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 second' FROM generate_series(1, $2::int) g`,
		`INSERT INTO customers (id, account_id, environment, address_lines, created_at)
		SELECT 'seed-customer-' || g, $1, CASE WHEN g % 2 = 0 THEN 'live' ELSE 'test' END, '["x"]',
			TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 second' FROM generate_series(1, $2::int) g`,
		`INSERT INTO invoices (id, account_id, environment, kind, number, identifier, customer_id, electronic, gross_cents, document, created_at)
		SELECT 'seed-invoice-' || g, $1, CASE WHEN g % 2 = 0 THEN 'live' ELSE 'test' END, 'invoice', 'SEED-' || g, 'i',
			'seed-customer-' || (g % 50), FALSE, 100, '{}',
			TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 second' FROM generate_series(1, $2::int) g`,
		`INSERT INTO billable_items (id, account_id, environment, product_id, description, amount_cents, currency, vat_rate_bp, ordered_at)
		SELECT 'seed-item-' || g, $1, CASE WHEN g % 2 = 0 THEN 'live' ELSE 'test' END, 'seed-product', 'd', 100, 'EUR', 700,
			TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 second' FROM generate_series(1, $2::int) g`,
		`INSERT INTO billable_collections (id, account_id, environment, created_at)
		SELECT 'seed-collection-' || g, $1, CASE WHEN g % 2 = 0 THEN 'live' ELSE 'test' END,
			TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 second' FROM generate_series(1, $2::int) g`,
		`INSERT INTO billable_item_assignments (billable_item_id, customer_id, collection_id, updated_at)
		SELECT 'seed-item-' || g, 'seed-customer-' || (g % 500 + 1), 'seed-collection-' || (g % 500 + 1), TIMESTAMPTZ '2026-01-02 00:00:00+00'
			FROM generate_series(1, $2::int) g WHERE g % 3 = 0 AND $1 <> ''`,
		`INSERT INTO invoice_claims (billable_item_id, customer_key, invoice_id)
		SELECT 'seed-item-' || g, '', 'seed-invoice-' || g FROM generate_series(1, $2::int) g WHERE g % 10 = 0 AND $1 <> ''`,
		`INSERT INTO test_clocks (id, account_id, environment, frozen_time, status, created_at)
		SELECT 'seed-clock-' || g, $1, CASE WHEN g % 2 = 0 THEN 'live' ELSE 'test' END, TIMESTAMPTZ '2026-01-01 00:00:00+00', 'ready',
			TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 second' FROM generate_series(1, $2::int) g`,
		`ANALYZE`,
	} {
		var args []any
		if strings.Contains(stmt, "$1") {
			args = []any{accountID, n}
		}
		if _, err := s.ReaderDB().ExecContext(ctx, stmt, args...); err != nil {
			t.Fatal(err)
		}
	}
}

// wantIndexPlan fails unless plan reads one of indexes (names separated
// by "|") and never scans the table, and, when ordered, sorts nothing: the
// page is one range of the index, whatever the table's size. A filter
// that compares a time (ends_at, cancelled against ended) may instead be
// planned as an index range of the matches, sorted; the engines choose by
// their estimates.
func wantIndexPlan(t *testing.T, name string, plan []string, indexes string, ordered bool) {
	t.Helper()
	text := strings.Join(plan, "\n")
	uses := false
	for _, ix := range strings.Split(indexes, "|") {
		uses = uses || strings.Contains(text, ix+" ")
	}
	sorted := strings.Contains(text, "TEMP B-TREE") || strings.Contains(text, "Sort")
	scans := strings.Contains(text, "Seq Scan") || strings.Contains(text, "SCAN orders") || strings.Contains(text, "SCAN subscriptions") ||
		strings.Contains(text, "SCAN coupons") ||
		strings.Contains(text, "SCAN tickets") ||
		strings.Contains(text, "SCAN customers") ||
		strings.Contains(text, "SCAN invoices") || strings.Contains(text, "SCAN b\n") || strings.HasSuffix(text, "SCAN b") ||
		strings.Contains(text, "SCAN billable_collections") || strings.Contains(text, "SCAN test_clocks")
	if !uses || scans || ordered && sorted {
		t.Errorf("%s: plan does not read %s (in order: %v):\n%s", name, indexes, ordered, text)
	}
}

// TestListPlans: every form of each list (first page, each cursor, each
// filter) is a range of its index on both engines, without a sort.
func TestListPlans(t *testing.T) {
	storetest.ForEachEngineLoaded(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		acc := account.Account{ID: "farebox-account-lists", Name: "Lists", CreatedAt: t0}
		mustWrite(t, s, func(q store.Q) error { return q.CreateAccount(ctx, acc) })
		seedLists(t, s, acc.ID, 20000)
		base := list.Query{AccountID: acc.ID, Environment: account.Test, Limit: 10}
		cur := &list.Cursor{CreatedAt: time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC), ID: "seed-10801"}
		from, to := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 4, 0, 0, 0, time.UTC)
		after := with(base, func(l *list.Query) { l.After = cur })
		before := with(base, func(l *list.Query) { l.Before = cur })
		ranged := with(base, func(l *list.Query) { l.CreatedGTE, l.CreatedLT = &from, &to })
		ref, customer, number, collection := "ref-7", "seed-customer-7", "SEED-10801", "seed-collection-7"
		yes, no := true, false
		orders := func(f ticketing.OrderFilter) func() ([]string, error) {
			return func() ([]string, error) { return s.Read().ExplainList(ctx, f) }
		}
		subs := func(f ticketing.SubscriptionFilter) func() ([]string, error) {
			f.Now = to
			return func() ([]string, error) { return s.Read().ExplainList(ctx, f) }
		}
		coupons := func(f ticketing.CouponFilter) func() ([]string, error) {
			return func() ([]string, error) { return s.Read().ExplainList(ctx, f) }
		}
		explainOf := func(f any) func() ([]string, error) {
			return func() ([]string, error) { return s.Read().ExplainList(ctx, f) }
		}
		tickets := func(f ticketing.TicketFilter) func() ([]string, error) {
			return func() ([]string, error) { return s.Read().ExplainList(ctx, f) }
		}
		for _, c := range []struct {
			name    string
			explain func() ([]string, error)
			index   string
			ordered bool
		}{
			{"orders first page", orders(ticketing.OrderFilter{Query: base}), "orders_list", true},
			{"orders starting_after", orders(ticketing.OrderFilter{Query: after}), "orders_list", true},
			{"orders ending_before", orders(ticketing.OrderFilter{Query: before}), "orders_list", true},
			{"orders created range", orders(ticketing.OrderFilter{Query: ranged}), "orders_list", true},
			{"orders reference", orders(ticketing.OrderFilter{Query: after, OptionalOrderReference: &ref}), "orders_list_reference", true},
			{"subscriptions first page", subs(ticketing.SubscriptionFilter{Query: base}), "subscriptions_list", true},
			{"subscriptions ending_before", subs(ticketing.SubscriptionFilter{Query: before}), "subscriptions_list", true},
			{"subscriptions ends_at range", subs(ticketing.SubscriptionFilter{Query: after, EndsGTE: &from, EndsLT: &to}), "subscriptions_ends|subscriptions_list", false},
			{"subscriptions active", subs(ticketing.SubscriptionFilter{Query: after, State: ticketing.SubscriptionActive}), "subscriptions_list_active", true},
			{"subscriptions cancelled", subs(ticketing.SubscriptionFilter{Query: base, State: ticketing.SubscriptionCancelled}), "subscriptions_list_ending|subscriptions_ends", false},
			{"subscriptions ended", subs(ticketing.SubscriptionFilter{Query: before, State: ticketing.SubscriptionEnded}), "subscriptions_list_ending|subscriptions_ends", false},
			{"subscriptions restored", subs(ticketing.SubscriptionFilter{Query: ranged, State: ticketing.SubscriptionRestored}), "subscriptions_list_restored", true},
			{"coupons first page", coupons(ticketing.CouponFilter{Query: base}), "coupons_list", true},
			{"coupons starting_after", coupons(ticketing.CouponFilter{Query: after}), "coupons_list", true},
			{"coupons not_activated", coupons(ticketing.CouponFilter{Query: before, State: ticketing.CouponNotActivated}), "coupons_list_new", true},
			{"coupons activated", coupons(ticketing.CouponFilter{Query: after, State: ticketing.CouponActivated}), "coupons_list_activated", true},
			{"coupons restored", coupons(ticketing.CouponFilter{Query: ranged, State: ticketing.CouponRestored}), "coupons_list_restored", true},
			{"tickets first page", tickets(ticketing.TicketFilter{Query: base}), "tickets_list", true},
			{"tickets ending_before", tickets(ticketing.TicketFilter{Query: before}), "tickets_list", true},
			// Valid tickets are most of them (the seed invalidates about one in
			// seven), so PostgreSQL may as well read tickets_list in order and
			// drop the invalidated ones as a filter: both are an ordered range
			// without a sort, and ANALYZE's statistics pick either (CI saw both).
			{"tickets valid", tickets(ticketing.TicketFilter{Query: after, State: ticketing.TicketValid}), "tickets_list_valid|tickets_list", true},
			{"tickets invalidated", tickets(ticketing.TicketFilter{Query: ranged, State: ticketing.TicketInvalidated}), "tickets_list_invalidated", true},
			{"customers first page", explainOf(invoicing.CustomerFilter{Query: base}), "customers_list", true},
			{"customers starting_after", explainOf(invoicing.CustomerFilter{Query: after}), "customers_list", true},
			{"invoices first page", explainOf(invoicing.InvoiceFilter{Query: base}), "invoices_list", true},
			{"invoices ending_before", explainOf(invoicing.InvoiceFilter{Query: before}), "invoices_list", true},
			{"invoices created range", explainOf(invoicing.InvoiceFilter{Query: ranged}), "invoices_list", true},
			{"invoices customer", explainOf(invoicing.InvoiceFilter{Query: after, CustomerID: &customer}), "invoices_list_customer", true},
			{"invoices number", explainOf(invoicing.InvoiceFilter{Query: base, Number: &number}), "invoices_number_key|sqlite_autoindex_invoices_2", false},
			{"customers created range", explainOf(invoicing.CustomerFilter{Query: ranged}), "customers_list", true},
			{"billable items first page", explainOf(invoicing.BillableItemFilter{Query: base}), "billable_items_list", true},
			{"billable items starting_after", explainOf(invoicing.BillableItemFilter{Query: after}), "billable_items_list", true},
			{"billable items ending_before", explainOf(invoicing.BillableItemFilter{Query: before}), "billable_items_list", true},
			{"billable items not invoiced", explainOf(invoicing.BillableItemFilter{Query: after, Invoiced: &no}), "billable_items_list", true},
			{"billable items invoiced", explainOf(invoicing.BillableItemFilter{Query: base, Invoiced: &yes}), "billable_items_list|invoice_claims_pkey|sqlite_autoindex_invoice_claims_1", false},
			{"billable items customer", explainOf(invoicing.BillableItemFilter{Query: after, CustomerID: &customer}), "billable_item_assignments_customer|billable_items_list", false},
			{"billable items collection", explainOf(invoicing.BillableItemFilter{Query: base, CollectionID: &collection}), "billable_item_assignments_collection|billable_items_list", false},
			{"collections first page", explainOf(invoicing.CollectionFilter{Query: base}), "billable_collections_list", true},
			{"collections starting_after", explainOf(invoicing.CollectionFilter{Query: after}), "billable_collections_list", true},
			{"test clocks first page", explainOf(ticketing.TestClockFilter{Query: base}), "test_clocks_list", true},
			{"test clocks ending_before", explainOf(ticketing.TestClockFilter{Query: before}), "test_clocks_list", true},
		} {
			plan, err := c.explain()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s:\n%s", c.name, strings.Join(plan, "\n"))
			wantIndexPlan(t, fmt.Sprintf("%s %s", s.Engine(), c.name), plan, c.index, c.ordered)
		}
	})
}

func with(l list.Query, change func(*list.Query)) list.Query {
	change(&l)
	return l
}
