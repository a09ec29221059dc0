package billing_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/billing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/usage"
)

// midday is where the clock of TestUsageRanges stands.
var midday = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// TestUsageRanges: a report covers from one day to 366 (a leap year
// whole), both ends counted; a longer range, one ending before it starts
// or a date not of the calendar is refused naming the parameter, by both
// reports.
func TestUsageRanges(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		b := billing.New(s.Read(), clocktest.NewFixed(midday))
		ctx := context.Background()
		for _, c := range []struct {
			from, to string
			days     int    // of the dashboard's report
			field    string // "": accepted
		}{
			{"2026-06-15", "2026-06-15", 1, ""},
			{"2028-01-01", "2028-12-31", 366, ""},
			{"2027-01-01", "2028-01-01", 366, ""},
			{"2028-02-28", "2028-03-01", 3, ""},
			{"2026-03-28", "2026-03-30", 3, ""}, // over the change to summer time in Berlin
			{"2028-01-01", "2029-01-01", 0, "to"},
			{"2026-06-15", "2026-06-14", 0, "to"},
			{"2026-02-29", "2026-03-01", 0, "from"},
			{"2026-6-15", "2026-06-15", 0, "from"},
			{"2026-06-15", "", 0, "to"},
			{"", "", 0, "from"},
			{"2026-06-15T00:00:00Z", "2026-06-16", 0, "from"},
		} {
			rows, err := b.Usage(ctx, "", c.from, c.to)
			rep, derr := b.DashboardUsage(ctx, "acc_1", account.Live, c.from, c.to)
			if c.field == "" {
				if err != nil || derr != nil || len(rows) != 0 || len(rep.Days) != c.days || rep.Days[0].Day != c.from || rep.Days[c.days-1].Day != c.to || rep.Max != 0 {
					t.Errorf("%s..%s: %v, %v, %d days", c.from, c.to, err, derr, len(rep.Days))
				}
				continue
			}
			for _, err := range []error{err, derr} {
				if e := apperr.As(err); e == nil || e.Kind != apperr.Invalid || len(e.Details) != 1 || e.Details[0].Field != c.field {
					t.Errorf("%q..%q: %v, want a refusal naming %s", c.from, c.to, err, c.field)
				}
			}
		}
	})
}

// TestUsageReports: the requests are counted on the UTC day they were
// answered (the last microsecond of a day and the first of the next fall
// on two days), per endpoint (the operator's report, live and test added
// up, every account or one) and per endpoint group of one environment
// (the dashboard's, with every day of the range and the scale's maximum);
// a billed request is counted, the rest uncounted, a refusal by the rate
// limit among them.
func TestUsageReports(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		clk := clocktest.NewFixed(time.Date(2026, 6, 14, 23, 59, 59, 999_999_000, time.UTC))
		b := billing.New(s.Read(), clk)
		answered := func(acc string, env account.Environment, endpoint string, status int, uncounted string) {
			t.Helper()
			ev := b.UsageEvent(billing.RequestOutcome{RequestID: "req", Endpoint: endpoint, Status: status, AccountID: acc, Environment: env, Uncounted: uncounted})
			if err := s.Write(ctx, func(q store.Q) error { return q.InsertUsage(ctx, []usage.Event{ev.Row}) }); err != nil {
				t.Fatal(err)
			}
		}
		const deps, orders, coupon = "GET /v1/departures.json", "POST /v9/ticketing/orders.json", "POST /v6/ticketing/coupons/{id}/activate"
		answered("acc_1", account.Live, deps, 200, "")
		answered("acc_1", account.Live, deps, 429, "")
		clk.Advance(time.Microsecond) // 2026-06-15T00:00:00Z
		answered("acc_1", account.Live, deps, 404, "")
		answered("acc_1", account.Live, orders, 201, "")
		answered("acc_1", account.Live, coupon, 200, billing.ReasonReplay)
		answered("acc_1", account.Test, deps, 200, "")
		answered("acc_1", account.Live, orders, 503, "")
		answered("acc_2", account.Live, deps, 200, "")

		all, err := b.Usage(ctx, "", "2026-06-14", "2026-06-15")
		want := []billing.UsageRow{
			{AccountID: "acc_1", Day: "2026-06-14", Endpoint: deps, Counted: 1, Uncounted: 1, Refused: 1},
			{AccountID: "acc_1", Day: "2026-06-15", Endpoint: deps, Counted: 2},
			{AccountID: "acc_1", Day: "2026-06-15", Endpoint: coupon, Uncounted: 1},
			{AccountID: "acc_1", Day: "2026-06-15", Endpoint: orders, Counted: 1, Uncounted: 1},
			{AccountID: "acc_2", Day: "2026-06-15", Endpoint: deps, Counted: 1},
		}
		if err != nil || !slices.Equal(all, want) {
			t.Errorf("Usage = %+v, %v\nwant %+v", all, err, want)
		}
		if one, err := b.Usage(ctx, "acc_2", "2026-06-15", "2026-06-15"); err != nil || !slices.Equal(one, want[4:]) {
			t.Errorf("Usage of acc_2 = %+v, %v", one, err)
		}

		rep, err := b.DashboardUsage(ctx, "acc_1", account.Live, "2026-06-13", "2026-06-16")
		if err != nil || len(rep.Days) != 4 || len(rep.Rows) != 4 || rep.Max != 4 {
			t.Fatalf("DashboardUsage = %+v, %v", rep, err)
		}
		if g := rep.Groups; len(g) != 2 || g[0] != "departures" || g[1] != "ticketing" {
			t.Errorf("groups %v", g)
		}
		days := map[string]billing.UsageDay{}
		for _, d := range rep.Days {
			days[d.Day] = d
		}
		if d := days["2026-06-13"]; d.Counted+d.Uncounted != 0 || len(d.Groups) != 0 {
			t.Errorf("a day without requests: %+v", d)
		}
		if d := days["2026-06-14"]; d.Counted != 1 || d.Uncounted != 1 || len(d.Groups) != 1 {
			t.Errorf("the day's last microsecond: %+v", d)
		}
		d := days["2026-06-15"]
		if d.Counted != 2 || d.Uncounted != 2 || len(d.Groups) != 2 ||
			d.Groups[0] != (billing.UsageGroup{Group: "departures", Counted: 1}) || d.Groups[1] != (billing.UsageGroup{Group: "ticketing", Counted: 1, Uncounted: 2}) {
			t.Errorf("the next day's first microsecond: %+v", d)
		}
		if test, err := b.DashboardUsage(ctx, "acc_1", account.Test, "2026-06-15", "2026-06-15"); err != nil || test.Max != 1 || test.Days[0].Counted != 1 {
			t.Errorf("the test environment: %+v, %v", test, err)
		}
	})
}
