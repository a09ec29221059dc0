package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
)

// seedOrders gives PostgreSQL's planner a table worth an index: n orders
// of one account over n seconds, then fresh statistics. (SQLite plans a
// LIMIT … ORDER BY from the schema alone.)
func seedOrders(t *testing.T, s *store.Store, accountID string, n int) {
	t.Helper()
	if s.Engine() != store.Postgres {
		return
	}
	ctx := context.Background()
	db := s.ReaderDB()
	if _, err := db.ExecContext(ctx, `INSERT INTO orders (id, account_id, environment, optional_order_reference, restore_secret, created_at)
		SELECT 'seed-' || g, $1, CASE WHEN g % 2 = 0 THEN 'live' ELSE 'test' END, 'ref-' || (g % 100), 's',
			TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 second' FROM generate_series(1, $2::int) g`, accountID, n); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ANALYZE orders`); err != nil {
		t.Fatal(err)
	}
}

// wantIndexPlan fails unless plan reads index and sorts nothing: the page
// is one range of the index, whatever the table's size.
func wantIndexPlan(t *testing.T, name string, plan []string, index string) {
	t.Helper()
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, index) || strings.Contains(text, "TEMP B-TREE") || strings.Contains(text, "Sort") {
		t.Errorf("%s: plan does not read %s in order:\n%s", name, index, text)
	}
}

// TestListPlans: every form of the orders list (first page, each cursor,
// the reference filter, the created range) is a range of its index on both
// engines, without a sort.
func TestListPlans(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		acc := account.Account{ID: "farebox-account-lists", Name: "Lists", CreatedAt: t0}
		if err := s.Write(ctx, func(q store.Q) error { return q.CreateAccount(ctx, acc) }); err != nil {
			t.Fatal(err)
		}
		seedOrders(t, s, acc.ID, 20000)
		base := list.Query{AccountID: acc.ID, Environment: account.Test, Limit: 10}
		cur := &list.Cursor{CreatedAt: time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC), ID: "seed-10801"}
		from, to := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 4, 0, 0, 0, time.UTC)
		ref := "ref-7"
		for _, c := range []struct {
			name  string
			f     ticketing.OrderFilter
			index string
		}{
			{"first page", ticketing.OrderFilter{Query: base}, "orders_list"},
			{"starting_after", ticketing.OrderFilter{Query: with(base, func(l *list.Query) { l.After = cur })}, "orders_list"},
			{"ending_before", ticketing.OrderFilter{Query: with(base, func(l *list.Query) { l.Before = cur })}, "orders_list"},
			{"created range", ticketing.OrderFilter{Query: with(base, func(l *list.Query) { l.CreatedGTE, l.CreatedLT = &from, &to })}, "orders_list"},
			{"reference", ticketing.OrderFilter{Query: with(base, func(l *list.Query) { l.After = cur }), OptionalOrderReference: &ref}, "orders_list_reference"},
		} {
			plan, err := s.Read().ExplainOrders(ctx, c.f)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s:\n%s", c.name, strings.Join(plan, "\n"))
			wantIndexPlan(t, fmt.Sprintf("%s %s", s.Engine(), c.name), plan, c.index)
		}
	})
}

func with(l list.Query, change func(*list.Query)) list.Query {
	change(&l)
	return l
}
