package billing

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/usage"
)

// maxUsageDays bounds one usage query.
const maxUsageDays = 366

// days reads the range from..to of a usage query (YYYY-MM-DD, both ends
// count: from == to is one day, at most maxUsageDays).
func days(op, from, to string) (f, t time.Time, err error) {
	if f, err = time.Parse(time.DateOnly, from); err != nil {
		return f, t, apperr.Param(op, "from", "from must be a date YYYY-MM-DD")
	}
	if t, err = time.Parse(time.DateOnly, to); err != nil {
		return f, t, apperr.Param(op, "to", "to must be a date YYYY-MM-DD")
	}
	if t.Before(f) {
		return f, t, apperr.Param(op, "to", "to must not be before from")
	}
	if int(t.Sub(f)/(24*time.Hour))+1 > maxUsageDays {
		return f, t, apperr.Param(op, "to", "a usage query covers at most 366 days")
	}
	return f, t, nil
}

// UsageRow is the ledger's count of one account's requests to one
// endpoint on one day, as the usage report and the `usage` command write
// it.
type UsageRow struct {
	AccountID string `json:"account_id,omitempty"`
	Day       string `json:"date"`
	Endpoint  string `json:"endpoint"`
	Counted   int64  `json:"counted"`
	Uncounted int64  `json:"uncounted"` // every request not billed, refused ones included
	Refused   int64  `json:"refused"`   // of those, refused by a rate limit (429)
}

func usageRows(rows []usage.Row) []UsageRow {
	return kit.Each(rows, func(r usage.Row) UsageRow { return UsageRow(r) })
}

// Usage reports ledger counts by day and endpoint for days from..to
// (YYYY-MM-DD, inclusive). accountID "" reports every account (operator).
func (s *Service) Usage(ctx context.Context, accountID, from, to string) ([]UsageRow, error) {
	if _, _, err := days("app.Usage", from, to); err != nil {
		return nil, err
	}
	if err := s.flushed(ctx, "app.Usage"); err != nil {
		return nil, err
	}
	rows, err := s.db.UsageSummary(ctx, accountID, from, to)
	return usageRows(rows), err
}

// UsageGroup is one endpoint group's requests on one day.
type UsageGroup struct {
	Group              string
	Counted, Uncounted int64
}

// UsageDay is a day of the dashboard's usage page.
type UsageDay struct {
	Day                string
	Counted, Uncounted int64
	Groups             []UsageGroup
}

// UsageReport is the dashboard's usage of one environment over days.
type UsageReport struct {
	From, To string
	Days     []UsageDay // every day of the range, oldest first
	Groups   []string   // the groups that occur, sorted
	Rows     []UsageRow
	// Max is the largest day total (counted + uncounted), for the scale.
	Max int64
}

// EndpointGroup is the group an endpoint is counted in on the dashboard:
// the path's first segment after the version ("ticketing", "departures",
// "stations"…), or the first segment for unversioned paths.
func EndpointGroup(endpoint string) string {
	_, path, _ := strings.Cut(endpoint, " ")
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) > 1 && len(segs[0]) > 1 && segs[0][0] == 'v' && strings.Trim(segs[0][1:], "0123456789") == "" {
		segs = segs[1:]
	}
	g := strings.TrimSuffix(segs[0], ".json")
	if g == "" {
		return "other"
	}
	return g
}

// DashboardUsage reports the account's requests in env per day and
// endpoint group for days from..to (YYYY-MM-DD, at most 366 days), read
// from the per-day counters.
func (s *Service) DashboardUsage(ctx context.Context, accountID string, env account.Environment, from, to string) (UsageReport, error) {
	f, t, err := days("app.DashboardUsage", from, to)
	if err != nil {
		return UsageReport{}, err
	}
	if err := s.flushed(ctx, "app.DashboardUsage"); err != nil {
		return UsageReport{}, err
	}
	rows, err := s.db.UsageOfEnvironment(ctx, accountID, env, from, to)
	if err != nil {
		return UsageReport{}, err
	}
	rep := UsageReport{From: from, To: to, Rows: usageRows(rows)}
	idx := map[string]int{}
	for d := f; !d.After(t); d = d.AddDate(0, 0, 1) {
		idx[d.Format(time.DateOnly)] = len(rep.Days)
		rep.Days = append(rep.Days, UsageDay{Day: d.Format(time.DateOnly)})
	}
	groups := map[string]bool{}
	for _, r := range rows {
		d := &rep.Days[idx[r.Day]]
		g := EndpointGroup(r.Endpoint)
		groups[g] = true
		d.Counted += r.Counted
		d.Uncounted += r.Uncounted
		found := false
		for i := range d.Groups {
			if d.Groups[i].Group == g {
				d.Groups[i].Counted += r.Counted
				d.Groups[i].Uncounted += r.Uncounted
				found = true
			}
		}
		if !found {
			d.Groups = append(d.Groups, UsageGroup{Group: g, Counted: r.Counted, Uncounted: r.Uncounted})
		}
	}
	for g := range groups {
		rep.Groups = append(rep.Groups, g)
	}
	sort.Strings(rep.Groups)
	for i := range rep.Days {
		sort.Slice(rep.Days[i].Groups, func(x, y int) bool { return rep.Days[i].Groups[x].Group < rep.Days[i].Groups[y].Group })
		rep.Max = max(rep.Max, rep.Days[i].Counted+rep.Days[i].Uncounted)
	}
	return rep, nil
}
