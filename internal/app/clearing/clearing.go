// Package clearing is the revenue clearing of the national ticket
// (docs/clearing.md): the report of a month (every sold ticket month with
// its postal code and federal state, its amounts, partner and issuer,
// totals per state and product), frozen the first time a month that has
// ended is exported, with the corrections of earlier months; the preview
// of a month still running; and the reconciliation against the billable
// items (Verify). It reaches the database only through Queries.
package clearing

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clearing"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/money"
)

// Queries are the store methods the clearing calls (store.Q implements them).
type Queries interface {
	ClearingSources(ctx context.Context, products []string, from, to time.Time, after clearing.After, limit int) ([]clearing.Source, error)
	ClearingReport(ctx context.Context, m clearing.Month) (clearing.Report, bool, error)
	ClearingReportMonths(ctx context.Context) (first, last clearing.Month, ok bool, err error)
	InsertClearingReport(ctx context.Context, r clearing.Report) error
	FinishClearingReport(ctx context.Context, r clearing.Report) error
	InsertClearingRows(ctx context.Context, rows []clearing.Row) error
	ClearingRows(ctx context.Context, m clearing.Month, afterSeq int64, limit int) ([]clearing.Row, error)
	ClearingRowsOfPeriod(ctx context.Context, p clearing.Month, fn func(clearing.Row) error) error
	ClearingBillableTotals(ctx context.Context, products []string, from, to time.Time) (int, money.Cents, error)
}

// DB is the database as the clearing sees it.
type DB = kit.DB[Queries]

// PageSize is how many ticket months or rows are read at a time: what an
// export holds in memory, whatever the month's size.
const PageSize = 1000

// CorrectionMonths is how far back a report looks for changed ticket
// months (docs/clearing.md "Corrections").
const CorrectionMonths = 12

// AheadMonths is how far after the current month a month can be asked
// for: cycles are ordered at most three calendar months ahead.
const AheadMonths = 3

// Service is the revenue clearing.
type Service struct {
	kit.Base[DB]
	loc      *time.Location
	issuer   string
	products func() []string
}

// New returns the clearing over db. loc is the time zone of the ticket
// months (Europe/Berlin), issuer the issuing company's name (the seller),
// products the ids of the national products (clearing.National over the
// loaded catalog).
func New(db DB, c clock.Clock, ids ident.Prefix, loc *time.Location, issuer string, products func() []string) *Service {
	if loc == nil {
		loc = time.UTC
	}
	return &Service{Base: kit.NewBase(db, c, ids), loc: loc, issuer: issuer, products: products}
}

// ParseMonth checks a month asked for by field: YYYY-MM, from the
// national ticket's first month to AheadMonths after the current one
// (400 invalid_parameter naming the field).
func (s *Service) ParseMonth(field, v string) (clearing.Month, error) {
	const op = "clearing.ParseMonth"
	if v == "" {
		return clearing.Month{}, apperr.Param(op, field, field+" is required (YYYY-MM)")
	}
	m, err := clearing.ParseMonth(v)
	if err != nil {
		return m, apperr.Param(op, field, err.Error())
	}
	if last := clearing.MonthOf(s.Clock.Now(), s.loc).Add(AheadMonths); last.Before(m) {
		return m, apperr.Param(op, field, fmt.Sprintf("month %q is too far ahead: at most %s (%d months after the current one)", v, last, AheadMonths))
	}
	return m, nil
}

// ParseFormat checks an export format (csv or json; "" is json).
func ParseFormat(field, v string) (string, error) {
	switch v {
	case "", "json":
		return "json", nil
	case "csv":
		return "csv", nil
	}
	return "", apperr.Param("clearing.ParseFormat", field, fmt.Sprintf("format %q: want csv or json", clipped(v)))
}

func clipped(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// Status is the state of a month's report.
type Status struct {
	Month      string     `json:"month"`
	Final      bool       `json:"final"` // frozen: a reported month
	ReportedAt *time.Time `json:"reported_at"`
	Issuer     string     `json:"issuer"`
}

// ended reports whether m is over at the clock's now.
func (s *Service) ended(m clearing.Month) bool { return !s.Clock.Now().Before(m.End(s.loc)) }

// Export writes month m's report to w in format (csv or json), a page of
// rows at a time, and returns its totals. A month that has ended is
// reported the first time it is exported: its rows are frozen in one
// transaction and every later export writes the same rows. A month still
// running (or ahead) is a preview, computed now and not kept.
func (s *Service) Export(ctx context.Context, m clearing.Month, format string, w io.Writer) (*clearing.Totals, error) {
	st, err := s.Report(ctx, m)
	if err != nil {
		return nil, err
	}
	head := map[string]any{"object": "clearing_report", "month": m.String(), "final": st.Final, "reported_at": st.ReportedAt, "issuer": st.Issuer}
	wr, err := clearing.NewWriter(w, format, head)
	if err != nil {
		return nil, err
	}
	if st.Final {
		err = s.eachReported(ctx, m, wr.Write)
	} else {
		err = s.generate(ctx, s.DB.Read(), m, wr.Write)
	}
	if err != nil {
		return nil, err
	}
	return wr.Close()
}

// Report freezes m when it has ended and is not reported yet, and
// returns its status.
func (s *Service) Report(ctx context.Context, m clearing.Month) (Status, error) {
	st := Status{Month: m.String(), Issuer: s.issuer}
	r, ok, err := s.DB.Read().ClearingReport(ctx, m)
	if err != nil {
		return st, err
	}
	if !ok && s.ended(m) {
		r, err = s.freeze(ctx, m)
		if e := apperr.As(err); e != nil && e.Kind == apperr.Conflict && e.Code != CodeMonthSuperseded {
			// Another instance reported it at the same time: its rows stand.
			r, _, err = s.DB.Read().ClearingReport(ctx, m)
		}
		ok = err == nil
	}
	if err != nil || !ok {
		return st, err
	}
	at := r.ReportedAt
	st.Final, st.ReportedAt, st.Issuer = true, &at, r.Issuer
	return st, nil
}

// Totals are month m's totals (reporting it when it has ended).
func (s *Service) Totals(ctx context.Context, m clearing.Month) (Status, *clearing.Totals, error) {
	st, err := s.Report(ctx, m)
	if err != nil {
		return st, nil, err
	}
	t := clearing.NewTotals()
	add := func(r clearing.Row) error { t.Add(r); return nil }
	if st.Final {
		err = s.eachReported(ctx, m, add)
	} else {
		err = s.generate(ctx, s.DB.Read(), m, add)
	}
	return st, t, err
}

// eachReported calls fn for every frozen row of m, a page at a time.
func (s *Service) eachReported(ctx context.Context, m clearing.Month, fn func(clearing.Row) error) error {
	var after int64
	for {
		rows, err := s.DB.Read().ClearingRows(ctx, m, after, PageSize)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
			after = r.Seq
		}
		if len(rows) < PageSize {
			return nil
		}
	}
}

// freeze writes m's report: the head, its rows a page at a time, the
// totals, in one transaction.
func (s *Service) freeze(ctx context.Context, m clearing.Month) (clearing.Report, error) {
	r := clearing.Report{Month: m, Issuer: s.issuer, ReportedAt: s.Clock.Now()}
	err := s.DB.Write(ctx, func(q Queries) error {
		if _, ok, err := q.ClearingReport(ctx, m); err != nil || ok {
			return err // reported meanwhile by another instance: its rows stand
		}
		if _, last, ok, err := q.ClearingReportMonths(ctx); err != nil {
			return err
		} else if ok && m.Before(last) {
			return apperr.E("clearing.Report", apperr.Conflict, CodeMonthSuperseded,
				fmt.Sprintf("month %s was not reported and %s already is: its ticket months are corrections of a later report", m, last))
		}
		if err := q.InsertClearingReport(ctx, r); err != nil {
			return err
		}
		r.Rows, r.Gross = 0, 0
		var batch []clearing.Row
		flush := func() error {
			err := q.InsertClearingRows(ctx, batch)
			batch = batch[:0]
			return err
		}
		err := s.generate(ctx, q, m, func(row clearing.Row) error {
			batch = append(batch, row)
			r.Rows++
			r.Gross += row.Gross
			if len(batch) == PageSize {
				return flush()
			}
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return err
		}
		return q.FinishClearingReport(ctx, r)
	})
	if err != nil {
		return r, err
	}
	got, _, err := s.DB.Read().ClearingReport(ctx, m)
	return got, err
}

// generate calls fn with the rows m's report has if made now, numbered
// from 1: the ticket months of m (sales), then the corrections of the
// earlier months since the first report, at most CorrectionMonths back.
func (s *Service) generate(ctx context.Context, q Queries, m clearing.Month, fn func(clearing.Row) error) error {
	products := s.products()
	var seq int64
	emit := func(r clearing.Row) error {
		seq++
		r.Seq = seq
		return fn(r)
	}
	err := s.eachSource(ctx, q, products, m.Start(s.loc), m.End(s.loc), func(src clearing.Source) error {
		return emit(src.Sale(m, clearing.KindSale, s.loc, s.issuer))
	})
	if err != nil {
		return err
	}
	first, _, ok, err := q.ClearingReportMonths(ctx)
	if err != nil || !ok {
		return err
	}
	from := m.Add(-CorrectionMonths)
	if from.Before(first) {
		from = first
	}
	if !from.Before(m) {
		return nil
	}
	return s.eachSource(ctx, q, products, from.Start(s.loc), m.Start(s.loc), func(src clearing.Source) error {
		for _, r := range src.Corrections(m, s.loc, s.issuer) {
			if err := emit(r); err != nil {
				return err
			}
		}
		return nil
	})
}

// eachSource calls fn for every ticket month starting in [from, to), a
// page at a time.
func (s *Service) eachSource(ctx context.Context, q Queries, products []string, from, to time.Time, fn func(clearing.Source) error) error {
	after := clearing.After{ValidFrom: from}
	for {
		page, err := q.ClearingSources(ctx, products, from, to, after, PageSize)
		if err != nil {
			return err
		}
		for _, src := range page {
			if err := fn(src); err != nil {
				return err
			}
			after = clearing.After{ValidFrom: src.ValidFrom, BillableItemID: src.BillableItemID}
		}
		if len(page) < PageSize {
			return nil
		}
	}
}
