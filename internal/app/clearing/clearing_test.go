package clearing_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/apptest"
	clearingapp "github.com/farebox/farebox/internal/app/clearing"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clearing"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
)

var berlin, _ = time.LoadLocation("Europe/Berlin")

func service(b *apptest.Bundle) *clearingapp.Service {
	return clearingapp.New(store.NewView[clearingapp.Queries](b.Store), b.Clock, "farebox", berlin, "Verkehrsgesellschaft Test GmbH",
		func() []string { return clearing.National(b.App.Catalog().File().Products) })
}

// sell orders the monthly subscription and activates it with postal code
// (June 2026 on the bundle's clock); it returns the order.
func sell(t *testing.T, b *apptest.Bundle, postal string) app.OrderRequest {
	t.Helper()
	o := b.Order(t, b.Product(t, apptest.Monthly).ID)
	b.Activate(t, o.Coupons[0].ID, `{"german_postal_code":"`+postal+`"}`)
	return app.OrderRequest{OptionalOrderReference: &o.ID}
}

func exportJSON(t *testing.T, s *clearingapp.Service, b *apptest.Bundle, month string) (report struct {
	Final  bool                `json:"final"`
	Issuer string              `json:"issuer"`
	Rows   []clearing.RowJSON  `json:"rows"`
	Totals clearing.TotalsJSON `json:"totals"`
}) {
	t.Helper()
	m, err := s.ParseMonth("month", month)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := s.Export(b.Ctx, m, "json", &buf); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &report); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	return report
}

func stateSum(tot clearing.TotalsJSON, st string) clearing.StateSum {
	for _, s := range tot.States {
		if s.State == st {
			return s
		}
	}
	return clearing.StateSum{}
}

// TestClearingMonthFrozenAndCorrected sells three ticket months in June
// (Bavaria, abroad, a postal code whose places lie as much in Berlin as in
// Brandenburg) and a reordered July month, reports June, restores a
// ticket (counted once: no row changes), reports July with the July
// month's postal code from its coupon, then the partner corrects the postal
// code of the coupon whose July ticket was never fetched: July's verify shows the change, July's
// report stays, and August's report carries the correction rows.
func TestClearingMonthFrozenAndCorrected(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, b *apptest.Bundle) {
		s := service(b)
		var orders []string
		for _, pc := range []string{"80331", clearing.NotGermany, "12529"} {
			orders = append(orders, *sell(t, b, pc).OptionalOrderReference)
		}
		o, err := b.App.Order(b.Ctx, b.Live, orders[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := b.App.Reorder(b.Ctx, idempotency.Claim{}, b.Live, *o.Coupons[0].SubscriptionID, ""); err != nil {
			t.Fatal(err)
		}
		preview := exportJSON(t, s, b, "2026-06")
		if preview.Final || len(preview.Rows) != 3 || preview.Totals.All.Gross != 3*4900 || preview.Totals.All.Count != 3 {
			t.Fatalf("June preview: %+v", preview)
		}
		for st, want := range map[string]int{"DE-BY": 1, "not-germany": 1, "unmapped": 1, "DE-BE": 0} {
			if got := stateSum(preview.Totals, st); got.Count != want || int64(got.Gross) != 4900*int64(want) {
				t.Errorf("June preview %s: %+v, want %d ticket month(s)", st, got, want)
			}
		}
		r := preview.Rows[0]
		if r.Kind != "sale" || r.TicketMonth != "2026-06" || r.ValidFrom != "2026-05-31T22:00:00Z" || r.Issuer != "Verkehrsgesellschaft Test GmbH" ||
			r.SellingPartner != b.Live.AccountID || r.Net+r.VAT != r.Gross || r.VATRateBP != 700 || r.ProductName != "Deutschlandticket" {
			t.Errorf("row: %+v", r)
		}

		b.Clock.Set(time.Date(2026, 7, 2, 8, 0, 0, 0, time.UTC))
		june := exportJSON(t, s, b, "2026-06")
		if !june.Final || len(june.Rows) != 3 {
			t.Fatalf("June report: %+v", june)
		}
		// The restore copies the subscription with its cycles and billable
		// items: every ticket month is still counted once.
		_, created, err := b.App.Restore(b.Ctx, idempotency.Claim{}, b.Live, o.ID, app.RestoreRequest{RestoreSecret: o.RestoreSecret, CouponIDs: []string{o.Coupons[0].ID}})
		if err != nil {
			t.Fatal(err)
		}
		b.Activate(t, created[0].ID, "")
		if v, err := s.Verify(b.Ctx, clearing.Month{Year: 2026, Month: 6}); err != nil || !v.OK || v.ClearedGross != 3*4900 || v.BillableMonths != 3 {
			t.Fatalf("verify June: %+v %v", v, err)
		}

		b.Clock.Set(time.Date(2026, 8, 1, 8, 0, 0, 0, time.UTC))
		july := exportJSON(t, s, b, "2026-07")
		if len(july.Rows) != 1 || july.Rows[0].Kind != "sale" || july.Rows[0].FederalState != "DE-BY" || july.Rows[0].PostalCode != "80331" {
			t.Fatalf("July: %+v", july.Rows)
		}
		// July's ticket was never fetched: its postal code is the coupon's,
		// which the partner corrects afterwards (the traveller had moved).
		if _, err := b.App.SetTariffSettings(b.Ctx, idempotency.Claim{}, created[0].ID, json.RawMessage(`{"german_postal_code":"20095"}`)); err != nil {
			t.Fatal(err)
		}
		v, err := s.Verify(b.Ctx, clearing.Month{Year: 2026, Month: 7})
		if err != nil || v.OK || v.DifferenceCount != 1 || !strings.Contains(v.Differences[0].Problem, "changed since reported") {
			t.Fatalf("verify July after the late ticket: %+v %v", v, err)
		}
		if again := exportJSON(t, s, b, "2026-07"); !sameRows(again.Rows, july.Rows) {
			t.Fatalf("July's report changed: %+v", again.Rows)
		}

		b.Clock.Set(time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC))
		aug := exportJSON(t, s, b, "2026-08")
		if len(aug.Rows) != 2 || aug.Rows[0].Kind != "correction" || aug.Rows[0].Count != -1 || aug.Rows[0].FederalState != "DE-BY" ||
			aug.Rows[1].FederalState != "DE-HH" || aug.Rows[1].PostalCode != "20095" || aug.Rows[1].TicketMonth != "2026-07" {
			t.Fatalf("August's corrections: %+v", aug.Rows)
		}
		if aug.Totals.All.Count != 0 || aug.Totals.All.Gross != 0 || stateSum(aug.Totals, "DE-HH").Count != 1 || stateSum(aug.Totals, "DE-BY").Gross != -4900 {
			t.Errorf("August's totals: %+v", aug.Totals)
		}
		for _, m := range []int{6, 7, 8} {
			if v, err := s.Verify(b.Ctx, clearing.Month{Year: 2026, Month: time.Month(m)}); err != nil || !v.OK {
				t.Errorf("verify 2026-%02d: %+v %v", m, v, err)
			}
		}
		// The CSV of the same report: header and the two rows.
		var buf bytes.Buffer
		if _, err := s.Export(b.Ctx, clearing.Month{Year: 2026, Month: 8}, "csv", &buf); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil || len(recs) != 3 || strings.Join(recs[0], ",") != strings.Join(clearing.CSVHeader, ",") || recs[1][8] != "DE-BY" || recs[1][14] != "-4900" {
			t.Errorf("CSV: %v %v", recs, err)
		}
		// A month before the newest report that was never reported is refused.
		_, err = s.Report(b.Ctx, clearing.Month{Year: 2026, Month: 5})
		testtool.WantErr(t, err, apperr.Conflict, clearingapp.CodeMonthSuperseded)
	})
}

func sameRows(a, b []clearing.RowJSON) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestClearingMonthInput: bad, early and far-future months are 400s
// naming the field.
func TestClearingMonthInput(t *testing.T) {
	b := apptest.New(t, "sqlite")
	s := service(b)
	for _, in := range []string{"", "2026-13", "2026-00", "26-11", "2026/11", "2026-1", "２０２６-11", "2023-04", "2026-10", "9999-12"} {
		_, err := s.ParseMonth("month", in)
		e := testtool.WantErr(t, err, apperr.Invalid, "invalid_parameter")
		testtool.WantFields(t, e, "month")
	}
	if m, err := s.ParseMonth("month", "2026-09"); err != nil || m.String() != "2026-09" {
		t.Errorf("2026-09 (three months ahead): %v %v", m, err)
	}
	if _, err := clearingapp.ParseFormat("format", "xml"); err == nil {
		t.Error("format xml accepted")
	}
}

// TestClearingCorrectionsAcrossPages reports June's ticket months 1 to
// 1,200 (more than a page, PageSize), then changes the postal code of
// months 1 to 700 and sells month 0 late. July's report holds month 0 as a
// correction (row 1), then the reversal and the correction of each changed
// month: 1,401 rows read from June in two pages of ticket months and
// written in two pages of rows, the second starting between the reversal
// (row 1,000) and the correction (row 1,001) of ticket month 500. Every
// row is checked; verify finds nothing in June or July.
func TestClearingCorrectionsAcrossPages(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, b *apptest.Bundle) {
		products := clearing.National(b.App.Catalog().File().Products)
		seedMonth(t, b, products, 1, clearingapp.PageSize+200)
		s := service(b)
		b.Clock.Set(time.Date(2026, 7, 1, 0, 30, 0, 0, time.UTC))
		june := exportJSON(t, s, b, "2026-06")
		if !june.Final || len(june.Rows) != clearingapp.PageSize+200 {
			t.Fatalf("June: final %v, %d rows", june.Final, len(june.Rows))
		}
		const changed, moved = 700, `{"german_postal_code":"20095"}`
		if _, err := b.Store.DB().ExecContext(b.Ctx, `UPDATE coupons SET tariff_settings = $1 WHERE order_id = 'gen-order' AND position <= $2`,
			moved, changed); err != nil {
			t.Fatal(err)
		}
		seedMonth(t, b, products, 0, 1) // gen-item-000000: first in June's order
		b.Clock.Set(time.Date(2026, 8, 1, 0, 30, 0, 0, time.UTC))
		july := exportJSON(t, s, b, "2026-07")
		if len(july.Rows) != 2*changed+1 {
			t.Fatalf("July: %d rows, want %d", len(july.Rows), 2*changed+1)
		}
		late := july.Rows[0]
		if late.Row != 1 || late.Kind != clearing.KindCorrection || late.BillableItemID != "gen-item-000000" || late.Count != 1 || late.TicketMonth != "2026-06" {
			t.Errorf("row 1, the late ticket month: %+v", late)
		}
		for i := 1; i <= changed; i++ {
			old, rev, cor := june.Rows[i-1], july.Rows[2*i-1], july.Rows[2*i]
			item := fmt.Sprintf("gen-item-%06d", i)
			if old.BillableItemID != item || old.PostalCode == "20095" {
				t.Fatalf("June's row %d: %+v (the test needs ticket month %s, reported with another postal code)", i, old, item)
			}
			if rev.Row != int64(2*i) || rev.Kind != clearing.KindCorrection || rev.BillableItemID != item || rev.Count != -1 ||
				rev.PostalCode != old.PostalCode || rev.FederalState != old.FederalState || rev.Gross != -old.Gross || rev.Net != -old.Net {
				t.Errorf("row %d, the reversal of %s: %+v; reported %+v", 2*i, item, rev, old)
			}
			if cor.Row != int64(2*i+1) || cor.Kind != clearing.KindCorrection || cor.BillableItemID != item || cor.Count != 1 ||
				cor.PostalCode != "20095" || cor.FederalState != "DE-HH" || cor.Gross != old.Gross || cor.TicketMonth != "2026-06" {
				t.Errorf("row %d, the correction of %s: %+v", 2*i+1, item, cor)
			}
		}
		if july.Totals.All.Count != 1 {
			t.Errorf("July's totals: %+v; want the late ticket month alone", july.Totals.All)
		}
		for _, m := range []clearing.Month{{Year: 2026, Month: 6}, {Year: 2026, Month: 7}} {
			if v, err := s.Verify(b.Ctx, m); err != nil || !v.OK {
				t.Errorf("verify %s: %+v %v", m, v, err)
			}
		}
	})
}
