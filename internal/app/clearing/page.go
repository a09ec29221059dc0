package clearing

import (
	"context"
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/clearing"
	"github.com/farebox/farebox/internal/money"
)

// StateView is a state's row of the console's page: its outline on the
// map, coloured by its share of the month's revenue (Level 0–4).
type StateView struct {
	Code  string
	Name  string
	Path  string
	Count int
	Gross string // German decimal, "1.234,56 €"
	Level int
}

// ProductView is a product's row of the page.
type ProductView struct {
	ID, Name   string
	Count      int
	Gross, Net string
	VAT        string
}

// PageView is the console's clearing page: the month's map and totals.
type PageView struct {
	Month, Prev, Next string
	Final             bool
	ReportedAt        time.Time // zero when not reported
	Issuer            string
	ViewBox           string
	States            []StateView // the 16 states, map order
	Others            []StateView // not-germany, unmapped
	Products          []ProductView
	All               ProductView
}

// Page is month's page ("" the previous month). It reports nothing: a
// month not reported yet is shown as its preview.
func (s *Service) Page(ctx context.Context, month string) (PageView, error) {
	m := clearing.MonthOf(s.Clock.Now(), s.loc).Add(-1)
	if month != "" {
		var err error
		if m, err = s.ParseMonth("month", month); err != nil {
			return PageView{}, err
		}
	}
	v := PageView{Month: m.String(), Prev: m.Add(-1).String(), Next: m.Add(1).String(), ViewBox: clearing.MapViewBox, Issuer: s.issuer}
	r, final, err := s.DB.Read().ClearingReport(ctx, m)
	if err != nil {
		return v, err
	}
	t := clearing.NewTotals()
	add := func(row clearing.Row) error { t.Add(row); return nil }
	if final {
		v.Final, v.ReportedAt, v.Issuer = true, r.ReportedAt, r.Issuer
		err = s.eachReported(ctx, m, add)
	} else {
		err = s.generate(ctx, s.DB.Read(), m, add)
	}
	if err != nil {
		return v, err
	}
	var top money.Cents
	for _, st := range clearing.States {
		top = max(top, t.States[st].Gross)
	}
	for _, sh := range clearing.Shapes {
		sum := t.States[sh.State]
		v.States = append(v.States, StateView{Code: string(sh.State), Name: sh.Name, Path: sh.Path, Count: sum.Count,
			Gross: sum.Gross.German(), Level: level(sum.Gross, top)})
	}
	for _, st := range []clearing.State{clearing.Abroad, clearing.Unmapped} {
		sum := t.States[st]
		v.Others = append(v.Others, StateView{Code: string(st), Count: sum.Count, Gross: sum.Gross.German()})
	}
	for _, p := range t.JSON().Products {
		v.Products = append(v.Products, productView(p.ProductID, p.Name, p.Sum))
	}
	v.All = productView("", "", t.All)
	return v, nil
}

func productView(id, name string, s clearing.Sum) ProductView {
	return ProductView{ID: id, Name: name, Count: s.Count, Gross: s.Gross.German(), Net: s.Net.German(), VAT: s.VAT.German()}
}

// level is a state's colour class: 0 none, 1–4 quarters of the top state's revenue.
func level(g, top money.Cents) int {
	if g <= 0 || top <= 0 {
		return 0
	}
	return min(4, int(1+(4*int64(g)-1)/int64(top)))
}

// String is the view's month (for logs).
func (v PageView) String() string { return fmt.Sprintf("clearing %s", v.Month) }
