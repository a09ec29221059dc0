package invoicedoc

import (
	"errors"
	"fmt"
	"slices"

	"github.com/farebox/farebox/internal/money"
)

// LineAmounts are a line's derived net and VAT (Net + VAT == Line.Gross).
type LineAmounts struct {
	Net money.Cents // BT-131 line net amount
	VAT money.Cents // the line's share of its group's VAT (PDF only; not an EN 16931 term)
}

// VATGroup is one VAT breakdown (BG-23): all lines of one rate.
type VATGroup struct {
	RateBP int64       // BT-119
	Net    money.Cents // BT-116 taxable amount = Σ line nets of the rate
	VAT    money.Cents // BT-117
	Gross  money.Cents // Net + VAT = Σ line gross of the rate
}

// Totals are the document's sums. All identities hold exactly:
// Σ Positions[i].Net = Net (BR-CO-10), Σ Lines[i].Net = Net, Σ Groups.Net =
// Net, Σ Groups.VAT = VAT, Net + VAT = Gross (BR-CO-15) = Σ line gross,
// Payable = Gross − Paid (BR-CO-16).
type Totals struct {
	Positions []LineAmounts // index-aligned with GroupPositions(lines): BT-131 of each document line
	Lines     []LineAmounts // index-aligned with Document.Lines: each item's share of its position
	Groups    []VATGroup    // ascending by rate
	Net       money.Cents   // BT-106 = BT-109 (no document allowances or charges)
	VAT       money.Cents   // BT-110
	Gross     money.Cents   // BT-112
	Paid      money.Cents   // BT-113
	Payable   money.Cents   // BT-115
}

// ComputeTotals derives net and VAT from the charged gross amounts.
//
// Rounding: per rate, the group's VAT is computed once from the summed gross,
// VAT = round(gross × rate / (1 + rate)) half away from zero (money.Split),
// and net = gross − VAT; so the document total always equals what was
// charged. The group net is then distributed over the group's positions
// (identical items grouped with a quantity, GroupPositions) by the
// cumulative method: position i gets round(G_i·k) − round(G_{i−1}·k), where
// G_i is the running gross sum and k = 1/(1 + rate). Each position net is
// within one cent of its exact value and the position nets add up to the
// group net exactly. Identical items share one position, so they never show
// different amounts (the unit price BT-146 = net / quantity carries the
// extra decimals). The group VAT differs from round(net × rate) by at most
// one cent, well inside the tolerance of BR-CO-17 / BR-S-09. Lines gets each
// item's share of its position's net, spread the same cumulative way.
//
// Every sum is overflow-checked (CheckedTotals). ComputeTotals is for
// documents that passed Validate, which refuses sums beyond money.Max; on
// any other document an overflow panics rather than producing a wrapped
// total.
func ComputeTotals(lines []Line, paid money.Cents) Totals {
	t, err := CheckedTotals(lines, paid)
	if err != nil {
		panic("invoicedoc.ComputeTotals on a document Validate refuses: " + err.Error())
	}
	return t
}

// TotalsError names the field whose amount made a total leave the int64
// cent range (or whose rate is outside 0 to 100 %).
type TotalsError struct {
	Field string // JSON pointer into the document, e.g. /lines/3/gross
	Err   error
}

func (e *TotalsError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *TotalsError) Unwrap() error { return e.Err }

// CheckedTotals is ComputeTotals with every sum and difference checked: a
// total that does not fit in int64 cents is a *TotalsError naming the line
// (or /payment/paid) whose amount overflowed it.
func CheckedTotals(lines []Line, paid money.Cents) (Totals, error) {
	positions := GroupPositions(lines)
	// A position's gross is a sum of its items' gross (GroupPositions adds
	// them unchecked): check each such sum before anything relies on it.
	for _, p := range positions {
		var sum money.Cents
		for _, li := range p.Items {
			var err error
			if sum, err = money.Add(sum, lines[li].Gross); err != nil {
				return Totals{}, &TotalsError{Field: fmt.Sprintf("/lines/%d/gross", li), Err: err}
			}
		}
	}
	t := Totals{Positions: make([]LineAmounts, len(positions)), Lines: make([]LineAmounts, len(lines)), Paid: paid}
	var order []int64 // the distinct rates, ascending
	for i, l := range lines {
		if l.RateBP < 0 || l.RateBP > money.MaxRateBP {
			return Totals{}, &TotalsError{Field: fmt.Sprintf("/lines/%d/rate_bp", i), Err: errRate}
		}
		if !slices.Contains(order, l.RateBP) {
			order = append(order, l.RateBP)
		}
	}
	slices.Sort(order)
	var err error
	for _, rate := range order {
		var cum money.Cents
		var prevNet money.Cents
		for i, p := range positions {
			if p.RateBP != rate {
				continue
			}
			if cum, err = money.Add(cum, p.Gross); err != nil {
				return Totals{}, &TotalsError{Field: fmt.Sprintf("/lines/%d/gross", p.Items[len(p.Items)-1]), Err: err}
			}
			cumNet, _ := money.Split(cum, rate)
			// |cumNet|, |prevNet| ≤ |cum| and both have cum's sign: no overflow.
			net := cumNet - prevNet
			t.Positions[i] = LineAmounts{Net: net, VAT: p.Gross - net}
			prevNet = cumNet
			// Each item's share: cumulative over the (identical) items.
			n := int64(len(p.Items))
			var prevShare money.Cents
			for k, li := range p.Items {
				share := money.Share(net, int64(k+1), n)
				t.Lines[li] = LineAmounts{Net: share - prevShare, VAT: lines[li].Gross - (share - prevShare)}
				prevShare = share
			}
		}
		net, vat := money.Split(cum, rate)
		t.Groups = append(t.Groups, VATGroup{RateBP: rate, Net: net, VAT: vat, Gross: cum})
		if err := addGroup(&t, lines, rate, net, vat, cum); err != nil {
			return Totals{}, err
		}
	}
	if t.Payable, err = money.Sub(t.Gross, paid); err != nil {
		return Totals{}, &TotalsError{Field: "/payment/paid", Err: err}
	}
	return t, nil
}

// addGroup adds one VAT group's net, VAT and gross to t's sums; an
// overflow names the last line of the rate, whose amount completes them.
func addGroup(t *Totals, lines []Line, rate int64, net, vat, gross money.Cents) (err error) {
	defer func() {
		if err != nil {
			err = &TotalsError{Field: fmt.Sprintf("/lines/%d/gross", lastOfRate(lines, rate)), Err: err}
		}
	}()
	if t.Net, err = money.Add(t.Net, net); err != nil {
		return err
	}
	if t.VAT, err = money.Add(t.VAT, vat); err != nil {
		return err
	}
	t.Gross, err = money.Add(t.Gross, gross)
	return err
}

var errRate = errors.New("VAT rate outside 0 to 100 %")

// lastOfRate is the index of the last line of rate (whose amount completes
// the group's sum).
func lastOfRate(lines []Line, rate int64) int {
	last := -1
	for i, l := range lines {
		if l.RateBP == rate {
			last = i
		}
	}
	return last
}

// Totals computes the document's totals (see ComputeTotals).
func (d *Document) Totals() Totals { return ComputeTotals(d.Lines, d.Payment.Paid) }
