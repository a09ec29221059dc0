package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clearing"
	"github.com/farebox/farebox/internal/money"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestConformanceClearing(t *testing.T) { clearingConformance.run(t) }

// The clearing's months in the fixtures: June 2026 in Europe/Berlin.
var (
	junFrom  = time.Date(2026, 5, 31, 22, 0, 0, 0, time.UTC)
	junUntil = time.Date(2026, 6, 30, 21, 59, 59, 0, time.UTC)
	julFrom  = time.Date(2026, 6, 30, 22, 0, 0, 0, time.UTC)
	june     = clearing.Month{Year: 2026, Month: time.June}
	july     = clearing.Month{Year: 2026, Month: time.July}
)

// soldMonth is a ticket month the fixtures sold: its subscription, cycle,
// coupon and billable item.
type soldMonth struct {
	sub    string
	cycle  string
	coupon string
	from   time.Time // the cycle's start
	item   ticketing.BillableItem
}

// sellMonth writes ticket month id of acct in env: subscription sub-id
// with the ordered cycle cy-id starting at from, its coupon (ordered at
// at, tariff settings with postal) and billable item bi-id of amount
// cents.
func sellMonth(f *fixture, acct string, env account.Environment, id string, from, at time.Time, postal string, cents money.Cents) soldMonth {
	f.t.Helper()
	m := soldMonth{sub: "sub-" + id, cycle: "cy-" + id, coupon: "co-" + id, from: from}
	itemID := "bi-" + id
	m.item = ticketing.BillableItem{ID: itemID, AccountID: acct, Environment: env, ProductID: fxProduct, Description: "Deutschlandticket " + id,
		AmountCents: cents, Currency: "EUR", VATRateBP: 700, SubscriptionID: &m.sub, CycleID: &m.cycle, OrderedAt: at}
	f.write(func(q store.Q) error {
		_, err := q.InsertOrderRows(f.ctx, copyOrder(acct, env, "o-"+id, m.coupon, m.sub, at, postal),
			[]ticketing.Subscription{{ID: m.sub, AccountID: acct, Environment: env, ProductID: fxProduct, CreatedAt: at,
				Cycles: []ticketing.Cycle{{ID: m.cycle, SubscriptionID: m.sub, ProductID: fxProduct, ValidFrom: from,
					ValidUntil: from.AddDate(0, 1, 0).Add(-time.Second), Ordered: true, BillableItemID: &itemID, CreatedAt: at}}}},
			[]ticketing.BillableItem{m.item}, nil)
		return err
	})
	return m
}

// copyOrder is order id with the one coupon of subscription sub.
func copyOrder(acct string, env account.Environment, id, coupon, sub string, at time.Time, postal string) ticketing.Order {
	return ticketing.Order{ID: id, AccountID: acct, Environment: env, RestoreSecret: "secret", CreatedAt: at,
		Coupons: []ticketing.Coupon{{ID: coupon, OrderID: id, AccountID: acct, Environment: env, ProductID: fxProduct, SubscriptionID: &sub,
			TariffSettings: tariff(postal), Activated: true, CreatedAt: at}}}
}

// tariff is tariff settings with postal code postal.
func tariff(postal string) []byte { return []byte(`{"german_postal_code":"` + postal + `"}`) }

// restoreCopy writes a restore's copy of m (docs/clearing.md): subscription
// and cycle sub-id/cy-id of m's period with m's billable item, its coupon
// co-id ordered at at with postal.
func restoreCopy(f *fixture, m soldMonth, id string, at time.Time, postal string) soldMonth {
	f.t.Helper()
	c := soldMonth{sub: "sub-" + id, cycle: "cy-" + id, coupon: "co-" + id, from: m.from, item: m.item}
	f.write(func(q store.Q) error {
		_, err := q.InsertOrderRows(f.ctx, copyOrder(m.item.AccountID, m.item.Environment, "o-"+id, c.coupon, c.sub, at, postal),
			[]ticketing.Subscription{{ID: c.sub, AccountID: m.item.AccountID, Environment: m.item.Environment, ProductID: fxProduct, CreatedAt: at,
				Cycles: []ticketing.Cycle{{ID: c.cycle, SubscriptionID: c.sub, ProductID: fxProduct, ValidFrom: m.from,
					ValidUntil: m.from.AddDate(0, 1, 0).Add(-time.Second), Ordered: true, BillableItemID: &m.item.ID, CreatedAt: at}}}}, nil, nil)
		return err
	})
	return c
}

// addCoupon writes another coupon co-id of m's subscription, ordered at at
// with postal.
func addCoupon(f *fixture, m soldMonth, id string, at time.Time, postal string) {
	f.t.Helper()
	f.write(func(q store.Q) error {
		_, err := q.InsertOrderRows(f.ctx, copyOrder(m.item.AccountID, m.item.Environment, "o-"+id, "co-"+id, m.sub, at, postal), nil, nil, nil)
		return err
	})
}

// issue writes ticket id of m's cycle at at with postal and points the
// cycle at it.
func issue(f *fixture, m soldMonth, id string, at time.Time, postal string) ticketing.Ticket {
	f.t.Helper()
	tk := ticketing.Ticket{ID: id, CouponID: m.coupon, AccountID: m.item.AccountID, Environment: m.item.Environment, ProductID: fxProduct,
		CycleID: m.cycle, IdentificationMedium: []byte(`{"type":"name"}`), MediumHash: "hash-" + id, TariffSettings: tariff(postal),
		ValidFrom: junFrom, ValidUntil: junUntil, CreatedAt: at}
	f.write(func(q store.Q) error {
		if err := q.InsertTicket(f.ctx, tk); err != nil {
			return err
		}
		cs, err := q.Cycles(f.ctx, m.sub)
		if err != nil {
			return err
		}
		cs[0].TicketID = &id
		return q.UpdateCycle(f.ctx, cs[0])
	})
	return tk
}

// source is the ticket month m as ClearingSources reads it.
func source(m soldMonth, from time.Time, ticket, coupon string, reported *clearing.Reported) clearing.Source {
	s := clearing.Source{BillableItemID: m.item.ID, AccountID: m.item.AccountID, ProductID: fxProduct, Description: m.item.Description,
		Gross: m.item.AmountCents, VATRateBP: 700, Currency: "EUR", ValidFrom: from, ValidUntil: from.AddDate(0, 1, 0).Add(-time.Second),
		Reported: reported}
	if ticket != "" {
		s.TicketTariff = tariff(ticket)
	}
	if coupon != "" {
		s.CouponTariff = tariff(coupon)
	}
	return s
}

// clearingRow is row seq of report m about billable item item of period p.
func clearingRow(m clearing.Month, seq int64, item string, p clearing.Month, count int, postal string, st clearing.State) clearing.Row {
	from := time.Date(p.Year, p.Month, 1, 0, 0, 0, 0, time.UTC).Add(-2 * time.Hour)
	gross := money.Cents(4900 * count)
	return clearing.Row{Month: m, Seq: seq, Kind: "sale", BillableItemID: item, Period: p, ValidFrom: from,
		ValidUntil: from.AddDate(0, 1, 0).Add(-time.Second), PostalCode: postal, State: st, ProductID: fxProduct, ProductName: "Deutschlandticket",
		AccountID: fxAccount, Issuer: "Verkehrsgesellschaft Test GmbH", Count: count, Gross: gross, Net: gross * 100 / 107,
		VAT: gross - gross*100/107, VATRateBP: 700, Currency: "EUR"}
}

// report writes report m's head, its rows and its totals, in one
// transaction.
func report(f *fixture, m clearing.Month, rows ...clearing.Row) clearing.Report {
	f.t.Helper()
	r := clearing.Report{Month: m, Issuer: "Verkehrsgesellschaft Test GmbH", ReportedAt: fxAt, Rows: int64(len(rows))}
	for _, row := range rows {
		r.Gross += row.Gross
	}
	f.write(func(q store.Q) error {
		if err := q.InsertClearingReport(f.ctx, clearing.Report{Month: m, Issuer: r.Issuer, ReportedAt: r.ReportedAt}); err != nil {
			return err
		}
		if err := q.InsertClearingRows(f.ctx, rows); err != nil {
			return err
		}
		return q.FinishClearingReport(f.ctx, r)
	})
	return r
}

// readReport is ClearingReport's answer for m.
func readReport(f *fixture, m clearing.Month) (clearing.Report, error) {
	r, ok, err := f.read().ClearingReport(f.ctx, m)
	if err == nil && !ok {
		err = fmt.Errorf("report %s not found", m)
	}
	return r, err
}

// sources are every ticket month of fxProduct starting in [from, to).
func sources(f *fixture, from, to time.Time) ([]clearing.Source, error) {
	return f.read().ClearingSources(f.ctx, []string{fxProduct}, from, to, clearing.After{ValidFrom: from}, 100)
}

// clearingSourcesEdges: ClearingSources reads the newest ticket and coupon
// of a page's ticket months in one statement for the page. August 2026
// holds ticket months whose subscription has several coupons (the newest
// written first, or erased), restores whose original holds the newest
// ticket, a restore of a restore, an erased newest ticket; each read
// whole and in pages of 1 to 4, whose boundaries fall between any two.
func clearingSourcesEdges(t *testing.T, f *fixture) {
	t.Helper()
	aug, sep := julFrom.AddDate(0, 1, 0), julFrom.AddDate(0, 2, 0)
	h := func(n int) time.Time { return fxAt.Add(time.Duration(n) * time.Hour) }
	plain := sellMonth(f, fxAccount, account.Live, "ep", aug, fxAt, "10115", 4900)
	coupons := sellMonth(f, fxAccount, account.Live, "eq", aug, fxAt, "10115", 4900)
	addCoupon(f, coupons, "eq-3", h(2), "80331") // the newest, written before an older one
	addCoupon(f, coupons, "eq-2", h(1), "20095")
	erased := sellMonth(f, fxAccount, account.Live, "ee", aug, fxAt, "10115", 4900)
	addCoupon(f, erased, "ee-2", h(1), "50667")
	f.write(func(q store.Q) error { return q.EraseCouponSettings(f.ctx, "co-ee-2", h(4)) })
	orig := sellMonth(f, fxOther, account.Live, "er", aug, fxAt, "10115", 4655)
	issue(f, orig, "t-er1", h(5), "01067") // after the copy's ticket: the original's is the newest
	issue(f, restoreCopy(f, orig, "er-copy", h(1), "04109"), "t-er2", h(2), "99084")
	twice := sellMonth(f, fxAccount, account.Live, "ed", aug, fxAt, "10115", 4900)
	first := restoreCopy(f, twice, "ed-copy", h(1), "28195")
	issue(f, first, "t-ed1", h(3), "24103")
	restoreCopy(f, first, "ed-copy2", h(2), "39104")
	gone := sellMonth(f, fxAccount, account.Live, "ex", aug, fxAt, "10115", 4900)
	issue(f, gone, "t-ex1", h(1), "60311")
	tk := issue(f, restoreCopy(f, gone, "ex-copy", h(2), "55116"), "t-ex2", h(3), "66111")
	f.write(func(q store.Q) error { return q.EraseTicketData(f.ctx, []ticketing.Ticket{tk}) })
	later := sellMonth(f, fxAccount, account.Live, "ez", aug.Add(time.Hour), fxAt, "70173", 4900)

	want := []clearing.Source{
		source(twice, aug, "24103", "39104", nil),
		source(erased, aug, "", "", nil), // the newest coupon's settings are erased: no code, not the older coupon's
		source(plain, aug, "", "10115", nil),
		source(coupons, aug, "", "80331", nil),
		source(orig, aug, "01067", "04109", nil),
		source(gone, aug, "", "55116", nil),
		source(later, aug.Add(time.Hour), "", "70173", nil),
	}
	all, err := sources(f, aug, sep)
	if d := cmp.Diff(want, all); err != nil || d != "" {
		t.Errorf("August's ticket months (%v; -want +got):\n%s", err, d)
	}
	for limit := 1; limit <= 4; limit++ {
		var got []clearing.Source
		after := clearing.After{ValidFrom: aug}
		for range len(want) + 1 {
			page, err := f.read().ClearingSources(f.ctx, []string{fxProduct}, aug, sep, after, limit)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, page...)
			if len(page) < limit {
				break
			}
			after = clearing.After{ValidFrom: page[len(page)-1].ValidFrom, BillableItemID: page[len(page)-1].BillableItemID}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("August in pages of %d (-want +got):\n%s", limit, d)
		}
	}
}

// clearingConformance: clearing.go (the clearing's ticket months, its
// frozen reports and their rows).
var clearingConformance = conformanceCases{
	"ClearingSources": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		a := sellMonth(f, fxAccount, account.Live, "a", junFrom, fxAt, "10115", 4900)
		b := sellMonth(f, fxOther, account.Live, "b", junFrom, fxAt, "80331", 4655)
		c := sellMonth(f, fxAccount, account.Live, "c", junFrom.Add(time.Hour), fxAt, "", 4900) // later start, no postal code
		sellMonth(f, fxAccount, account.Test, "test", junFrom, fxAt, "10115", 4900)             // test environment: bills nothing
		sellMonth(f, fxAccount, account.Live, "may", junFrom.AddDate(0, -1, 0), fxAt, "10115", 4900)
		sellMonth(f, fxAccount, account.Live, "jul", julFrom, fxAt, "10115", 4900) // at the end: excluded
		f.subscription(fxAccount, account.Live, "sub-undated", fxAt, 1)            // a first cycle never activated: no month yet
		// a: a ticket, then a restore whose copy has a newer coupon and ticket.
		issue(f, a, "t-a1", fxAt.Add(time.Hour), "20095")
		cp := restoreCopy(f, a, "a-copy", fxAt.Add(2*time.Hour), "50667")
		issue(f, cp, "t-a2", fxAt.Add(3*time.Hour), "01067")
		// b: what a report said of it.
		report(f, june, clearingRow(june, 1, b.item.ID, june, 1, "80331", "DE-BY"))

		all, err := sources(f, junFrom, julFrom)
		want := []clearing.Source{
			source(a, junFrom, "01067", "50667", nil), // the newest ticket and coupon of every copy of the cycle, counted once
			source(b, junFrom, "", "80331", &clearing.Reported{PostalCode: "80331", State: "DE-BY", Gross: 4900, Month: june}),
			source(c, junFrom.Add(time.Hour), "", "", nil),
		}
		want[2].CouponTariff = tariff("")
		if d := cmp.Diff(want, all); err != nil || d != "" {
			t.Errorf("June's ticket months (%v; -want +got):\n%s", err, d)
		}
		if before, err := f.read().ClearingSources(f.ctx, []string{fxProduct}, junFrom, julFrom, clearing.After{}, 100); err != nil || !cmp.Equal(before, all) {
			t.Errorf("a position before the period reads it from its start: %+v, %v", before, err)
		}
		page, err := f.read().ClearingSources(f.ctx, []string{fxProduct}, junFrom, julFrom, clearing.After{ValidFrom: junFrom}, 1)
		if err != nil || len(page) != 1 || page[0].BillableItemID != a.item.ID {
			t.Errorf("a page of 1: %+v, %v", page, err)
		}
		page, err = f.read().ClearingSources(f.ctx, []string{fxProduct}, junFrom, julFrom, clearing.After{ValidFrom: junFrom, BillableItemID: a.item.ID}, 1)
		if err != nil || len(page) != 1 || page[0].BillableItemID != b.item.ID {
			t.Errorf("the page after a (same start, next id): %+v, %v", page, err)
		}
		page, err = f.read().ClearingSources(f.ctx, []string{fxProduct}, junFrom, julFrom, clearing.After{ValidFrom: junFrom, BillableItemID: b.item.ID}, 10)
		if err != nil || len(page) != 1 || page[0].BillableItemID != c.item.ID {
			t.Errorf("the page after b (a later start): %+v, %v", page, err)
		}
		page, err = f.read().ClearingSources(f.ctx, []string{fxProduct}, junFrom, julFrom, clearing.After{ValidFrom: junFrom.Add(time.Hour), BillableItemID: c.item.ID}, 10)
		if err != nil || len(page) != 0 {
			t.Errorf("the page after the last: %+v, %v", page, err)
		}
		for _, products := range [][]string{nil, {"product-unknown"}} {
			if got, err := f.read().ClearingSources(f.ctx, products, junFrom, julFrom, clearing.After{ValidFrom: junFrom}, 10); err != nil || len(got) != 0 {
				t.Errorf("products %v: %+v, %v; want none", products, got, err)
			}
		}
		if got, err := sources(f, julFrom.AddDate(0, 1, 0), julFrom.AddDate(0, 2, 0)); err != nil || len(got) != 0 {
			t.Errorf("an empty month: %+v, %v", got, err)
		}
		clearingSourcesEdges(t, f)
	},
	"ClearingBillableTotals": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		a := sellMonth(f, fxAccount, account.Live, "a", junFrom, fxAt, "10115", 4900)
		sellMonth(f, fxOther, account.Live, "b", junFrom.Add(time.Hour), fxAt, "80331", 4655)
		sellMonth(f, fxAccount, account.Test, "test", junFrom, fxAt, "10115", 4900)
		sellMonth(f, fxAccount, account.Live, "may", junFrom.AddDate(0, -1, 0), fxAt, "10115", 4900)
		sellMonth(f, fxAccount, account.Live, "jul", julFrom, fxAt, "10115", 4900)
		restoreCopy(f, a, "a-copy", fxAt.Add(time.Hour), "50667") // the copy's cycle shares the item: counted once
		for _, c := range []struct {
			what     string
			products []string
			from, to time.Time
			n        int
			sum      money.Cents
		}{
			{"June", []string{fxProduct}, junFrom, julFrom, 2, 9555},
			{"May to July", []string{fxProduct, "product-unknown"}, junFrom.AddDate(0, -1, 0), julFrom.AddDate(0, 1, 0), 4, 19355},
			{"no products", nil, junFrom, julFrom, 0, 0},
			{"another product", []string{"product-unknown"}, junFrom, julFrom, 0, 0},
			{"an empty month", []string{fxProduct}, julFrom.AddDate(0, 1, 0), julFrom.AddDate(0, 2, 0), 0, 0},
		} {
			if n, sum, err := f.read().ClearingBillableTotals(f.ctx, c.products, c.from, c.to); err != nil || n != c.n || sum != c.sum {
				t.Errorf("%s: %d, %d, %v; want %d, %d", c.what, n, sum, err, c.n, c.sum)
			}
		}
	},
	"InsertClearingReport": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		r := clearing.Report{Month: june, Issuer: "Verkehrsgesellschaft Test GmbH", ReportedAt: fxAt}
		checkInsert(t, f, r, func(q store.Q) error { return q.InsertClearingReport(f.ctx, r) },
			func(q store.Q) (clearing.Report, error) { return readReport(f, june) })
	},
	"FinishClearingReport": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		r := clearing.Report{Month: june, Issuer: "Verkehrsgesellschaft Test GmbH", ReportedAt: fxAt}
		f.write(func(q store.Q) error { return q.InsertClearingReport(f.ctx, r) })
		r.Rows, r.Gross = 100_000, 489_512_300
		f.write(func(q store.Q) error { return q.FinishClearingReport(f.ctx, r) })
		if got, err := readReport(f, june); err != nil || !cmp.Equal(got, r) {
			t.Errorf("after FinishClearingReport: %+v, %v; want %+v", got, err, r)
		}
		f.write(func(q store.Q) error {
			return q.FinishClearingReport(f.ctx, clearing.Report{Month: july, Rows: 1, Gross: 1})
		})
		if _, ok, err := f.read().ClearingReport(f.ctx, july); ok || err != nil {
			t.Errorf("finishing a month never reported wrote it: %v, %v", ok, err)
		}
	},
	"ClearingReport": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if r, ok, err := f.read().ClearingReport(f.ctx, june); ok || err != nil || r.Month != june {
			t.Errorf("a month not reported: %+v, %v, %v", r, ok, err)
		}
		want := report(f, june, clearingRow(june, 1, "bi-a", june, 1, "10115", "DE-BE"), clearingRow(june, 2, "bi-b", june, 1, "80331", "DE-BY"))
		got, ok, err := f.read().ClearingReport(f.ctx, june)
		if !ok || err != nil || !cmp.Equal(got, want) || got.ReportedAt.Location() != time.UTC {
			t.Errorf("ClearingReport = %+v, %v, %v; want %+v (in UTC)", got, ok, err, want)
		}
	},
	"ClearingReportMonths": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if first, last, ok, err := f.read().ClearingReportMonths(f.ctx); ok || err != nil {
			t.Errorf("no reports: %v %v %v %v", first, last, ok, err)
		}
		for _, m := range []clearing.Month{june, {Year: 2025, Month: time.December}, july, {Year: 2026, Month: time.January}} {
			report(f, m)
		}
		first, last, ok, err := f.read().ClearingReportMonths(f.ctx)
		if !ok || err != nil || first != (clearing.Month{Year: 2025, Month: time.December}) || last != july {
			t.Errorf("ClearingReportMonths = %v, %v, %v, %v; want 2025-12 to 2026-07", first, last, ok, err)
		}
	},
	"InsertClearingRows": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		b := sellMonth(f, fxAccount, account.Live, "b", junFrom, fxAt, "80331", 4900)
		f.write(func(q store.Q) error { return q.InsertClearingRows(f.ctx, nil) })
		// 70 rows: more than one SQLite statement's chunk, with a reversal and its correction.
		var rows []clearing.Row
		for i := range 68 {
			rows = append(rows, clearingRow(june, int64(i+1), fmt.Sprintf("bi-%03d", i), june, 1, "10115", "DE-BE"))
		}
		rows[5].PostalCode, rows[5].State = "", clearing.Unmapped
		report(f, june, append(rows, clearingRow(june, 69, b.item.ID, june, 1, "80331", "DE-BY"))...)
		rev, cor := clearingRow(july, 1, b.item.ID, june, -1, "80331", "DE-BY"), clearingRow(july, 2, b.item.ID, june, 1, "60311", "DE-HE")
		cor.Kind = "correction"
		report(f, july, rev, cor)
		got, err := f.read().ClearingRows(f.ctx, june, 0, 1000)
		if d := cmp.Diff(append(rows, clearingRow(june, 69, b.item.ID, june, 1, "80331", "DE-BY")), got); err != nil || d != "" {
			t.Errorf("June's rows read back (%v; -want +got):\n%s", err, d)
		}
		// What the reports said last of b: the correction, not the reversal.
		src, err := sources(f, junFrom, julFrom)
		wantLast := &clearing.Reported{PostalCode: "60311", State: "DE-HE", Gross: 4900, Month: july}
		if err != nil || len(src) != 1 || !cmp.Equal(src[0].Reported, wantLast) {
			t.Errorf("b's last attribution: %+v, %v; want %+v", src, err, wantLast)
		}
		err = s.Write(f.ctx, func(q store.Q) error { return q.InsertClearingRows(f.ctx, []clearing.Row{rows[0]}) })
		wantCode(t, "a row number taken", err, apperr.Conflict, store.CodeConflict)
		if got, _ := f.read().ClearingRows(f.ctx, june, 0, 1000); len(got) != 69 {
			t.Errorf("the refused row changed the report: %d rows", len(got))
		}
	},
	"ClearingRows": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var rows []clearing.Row
		for i := range 5 {
			rows = append(rows, clearingRow(june, int64(i+1), fmt.Sprintf("bi-%d", i), june, 1, "10115", "DE-BE"))
		}
		report(f, june, rows...)
		report(f, july, clearingRow(july, 1, "bi-x", july, 1, "10115", "DE-BE"))
		for _, c := range []struct {
			m            clearing.Month
			after, limit int
			want         []clearing.Row
		}{
			{june, 0, 2, rows[:2]},
			{june, 2, 2, rows[2:4]},
			{june, 4, 2, rows[4:]},
			{june, 5, 2, nil},
			{clearing.Month{Year: 2026, Month: time.May}, 0, 10, nil},
		} {
			got, err := f.read().ClearingRows(f.ctx, c.m, int64(c.after), c.limit)
			if d := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); err != nil || d != "" {
				t.Errorf("%s after %d, limit %d (%v; -want +got):\n%s", c.m, c.after, c.limit, err, d)
			}
		}
	},
	"ClearingRowsOfPeriod": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		may := clearing.Month{Year: 2026, Month: time.May}
		j1, j2, m1 := clearingRow(june, 1, "bi-1", june, 1, "10115", "DE-BE"), clearingRow(june, 2, "bi-2", june, 1, "80331", "DE-BY"),
			clearingRow(june, 3, "bi-m", may, 1, "10115", "DE-BE") // a correction of May in June's report
		rev, cor := clearingRow(july, 1, "bi-2", june, -1, "80331", "DE-BY"), clearingRow(july, 2, "bi-2", june, 1, "60311", "DE-HE")
		report(f, july, rev, cor) // the newer report written first: the order is by report, not by writing
		report(f, june, j1, j2, m1)
		var got []clearing.Row
		collectRows := func(r clearing.Row) error { got = append(got, r); return nil }
		if err := f.read().ClearingRowsOfPeriod(f.ctx, june, collectRows); err != nil || !cmp.Equal(got, []clearing.Row{j1, j2, rev, cor}) {
			t.Errorf("June's rows of every report: %v\n%s", err, cmp.Diff([]clearing.Row{j1, j2, rev, cor}, got))
		}
		got = nil
		if err := f.read().ClearingRowsOfPeriod(f.ctx, clearing.Month{Year: 2026, Month: time.April}, collectRows); err != nil || len(got) != 0 {
			t.Errorf("a month without rows: %+v, %v", got, err)
		}
		stop := errors.New("stop")
		n := 0
		err := f.read().ClearingRowsOfPeriod(f.ctx, june, func(clearing.Row) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Errorf("fn's error: %v after %d rows; want it returned after the first", err, n)
		}
	},
}
