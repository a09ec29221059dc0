package invoice

import (
	"sort"

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
func ComputeTotals(lines []Line, paid money.Cents) Totals {
	positions := GroupPositions(lines)
	t := Totals{Positions: make([]LineAmounts, len(positions)), Lines: make([]LineAmounts, len(lines)), Paid: paid}
	rates := map[int64]bool{}
	for _, l := range lines {
		rates[l.RateBP] = true
	}
	order := make([]int64, 0, len(rates))
	for r := range rates {
		order = append(order, r)
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	for _, rate := range order {
		var cum money.Cents
		var prevNet money.Cents
		for i, p := range positions {
			if p.RateBP != rate {
				continue
			}
			cum += p.Gross
			cumNet, _ := money.Split(cum, rate)
			net := cumNet - prevNet
			t.Positions[i] = LineAmounts{Net: net, VAT: p.Gross - net}
			prevNet = cumNet
			// Each item's share: cumulative over the (identical) items.
			n := int64(len(p.Items))
			q, r := int64(net)/n, int64(net)%n // net·(k+1)/n without overflow
			var prevShare money.Cents
			for k, li := range p.Items {
				share := money.Cents(q*int64(k+1) + divRound(r*int64(k+1), n))
				t.Lines[li] = LineAmounts{Net: share - prevShare, VAT: lines[li].Gross - (share - prevShare)}
				prevShare = share
			}
		}
		net, vat := money.Split(cum, rate)
		t.Groups = append(t.Groups, VATGroup{RateBP: rate, Net: net, VAT: vat, Gross: cum})
		t.Net += net
		t.VAT += vat
		t.Gross += cum
	}
	t.Payable = t.Gross - paid
	return t
}

// divRound is a / b rounded half away from zero (b > 0).
func divRound(a, b int64) int64 {
	if a < 0 {
		return -divRound(-a, b)
	}
	return (a + b/2) / b
}

// Totals computes the document's totals (see ComputeTotals).
func (d *Document) Totals() Totals { return ComputeTotals(d.Lines, d.Payment.Paid) }
