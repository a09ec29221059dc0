package invoicedoc_test

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/money"
)

// bigRound is a/b rounded half away from zero (b > 0).
func bigRound(a, b *big.Int) *big.Int {
	q := new(big.Int).Abs(a)
	q.Add(q, new(big.Int).Quo(b, big.NewInt(2)))
	q.Quo(q, b)
	if a.Sign() < 0 {
		q.Neg(q)
	}
	return q
}

// checkTotalsAgainstBig computes the totals of lines (gross ≥ 0, as
// Validate requires) in math/big and compares CheckedTotals: every amount
// exact when all totals fit in int64, an overflow error exactly when one
// does not.
func checkTotalsAgainstBig(t *testing.T, lines []invoicedoc.Line, paid money.Cents) {
	t.Helper()
	got, err := invoicedoc.CheckedTotals(lines, paid)
	rates := map[int64]bool{}
	for _, l := range lines {
		rates[l.RateBP] = true
	}
	var order []int64
	for r := range rates {
		order = append(order, r)
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	fits := true
	fit := func(v *big.Int) int64 {
		if !v.IsInt64() {
			fits = false
			return 0
		}
		return v.Int64()
	}
	var groups []invoicedoc.VATGroup
	lineNet := make([]int64, len(lines))
	netSum, vatSum, grossSum := new(big.Int), new(big.Int), new(big.Int)
	for _, r := range order {
		br := big.NewInt(r)
		den := big.NewInt(10000 + r)
		// Identical lines (same name, gross, quantity and rate; these have
		// no splits and one order time) form one position, in order of
		// first appearance. The group's net is spread over the positions
		// cumulatively, and each position's net over its items the same way.
		type position struct{ items []int }
		var positions []*position
		byKey := map[[4]any]*position{}
		for i, l := range lines {
			if l.RateBP != r {
				continue
			}
			k := [4]any{l.Name, l.Gross, l.Quantity, l.RateBP}
			if byKey[k] == nil {
				byKey[k] = &position{}
				positions = append(positions, byKey[k])
			}
			byKey[k].items = append(byKey[k].items, i)
		}
		cum, prevNet := new(big.Int), new(big.Int)
		for _, p := range positions {
			pGross := new(big.Int)
			for _, i := range p.items {
				pGross.Add(pGross, big.NewInt(int64(lines[i].Gross)))
			}
			cum.Add(cum, pGross)
			cumNet := new(big.Int).Sub(cum, bigRound(new(big.Int).Mul(cum, br), den))
			pNet := new(big.Int).Sub(cumNet, prevNet)
			prevNet = cumNet
			n := big.NewInt(int64(len(p.items)))
			prevShare := new(big.Int)
			for k, i := range p.items {
				share := bigRound(new(big.Int).Mul(pNet, big.NewInt(int64(k+1))), n)
				lineNet[i] = fit(new(big.Int).Sub(share, prevShare))
				prevShare = share
			}
		}
		vat := bigRound(new(big.Int).Mul(cum, br), den)
		net := new(big.Int).Sub(cum, vat)
		groups = append(groups, invoicedoc.VATGroup{RateBP: r, Net: money.Cents(fit(net)), VAT: money.Cents(fit(vat)), Gross: money.Cents(fit(cum))})
		netSum.Add(netSum, net)
		vatSum.Add(vatSum, vat)
		grossSum.Add(grossSum, cum)
	}
	wantNet, wantVAT, wantGross := fit(netSum), fit(vatSum), fit(grossSum)
	wantPayable := fit(new(big.Int).Sub(grossSum, big.NewInt(int64(paid))))
	if !fits {
		if !errors.Is(err, money.ErrOverflow) {
			t.Fatalf("totals beyond int64 (gross %s, paid %d) not refused: %+v, %v", grossSum, paid, got, err)
		}
		var te *invoicedoc.TotalsError
		if !errors.As(err, &te) || te.Field == "" {
			t.Fatalf("overflow error names no field: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("totals within int64 (gross %s) refused: %v", grossSum, err)
	}
	if int64(got.Net) != wantNet || int64(got.VAT) != wantVAT || int64(got.Gross) != wantGross || int64(got.Payable) != wantPayable || got.Paid != paid {
		t.Fatalf("totals %+v; big-integer reference net %d vat %d gross %d payable %d", got, wantNet, wantVAT, wantGross, wantPayable)
	}
	if len(got.Groups) != len(groups) {
		t.Fatalf("groups %+v, want %+v", got.Groups, groups)
	}
	for i := range groups {
		if got.Groups[i] != groups[i] {
			t.Fatalf("group %d = %+v, want %+v", i, got.Groups[i], groups[i])
		}
	}
	for i, l := range lines {
		if int64(got.Lines[i].Net) != lineNet[i] || got.Lines[i].Net+got.Lines[i].VAT != l.Gross {
			t.Fatalf("line %d = %+v, want net %d of gross %d", i, got.Lines[i], lineNet[i], l.Gross)
		}
	}
}

var propertyRates = []int64{0, 1, 700, 1900, 9999, 10000}

// TestTotalsProperty compares CheckedTotals with math/big over random
// baskets biased to the int64 edges.
func TestTotalsProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 8))
	gross := func() money.Cents {
		switch r.IntN(5) {
		case 0:
			return money.Max - money.Cents(r.Int64N(1000))
		case 1:
			return money.Max/money.Cents(2+r.IntN(4)) + money.Cents(r.Int64N(3))
		case 2:
			return money.Cents(r.Int64N(100000))
		default:
			return money.Cents(r.Int64N(math.MaxInt64))
		}
	}
	for n := 0; n < 5000; n++ {
		lines := make([]invoicedoc.Line, 1+r.IntN(8))
		for i := range lines {
			lines[i] = invoicedoc.Line{Gross: gross(), RateBP: propertyRates[r.IntN(len(propertyRates))], Quantity: 1}
		}
		paid := money.Cents(r.Int64())
		if r.IntN(2) == 0 {
			paid = money.Cents(r.Int64N(1000))
		}
		checkTotalsAgainstBig(t, lines, paid)
	}
}

// FuzzCheckedTotals compares CheckedTotals with math/big for arbitrary
// lines (CI fuzzes it, .ci/run): paid first, then 9 bytes per line (rate
// selector, gross ≥ 0).
func FuzzCheckedTotals(f *testing.F) {
	enc := func(paid int64, grosses ...int64) []byte {
		b := binary.BigEndian.AppendUint64(nil, uint64(paid))
		for i, g := range grosses {
			b = append(b, byte(i))
			b = binary.BigEndian.AppendUint64(b, uint64(g)<<1)
		}
		return b
	}
	f.Add(enc(0, math.MaxInt64, math.MaxInt64, 382))
	f.Add(enc(500, 1190, 5800, 119))
	f.Add(enc(math.MinInt64, 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 8 {
			return
		}
		paid := money.Cents(binary.BigEndian.Uint64(data))
		var lines []invoicedoc.Line
		for rest := data[8:]; len(rest) >= 9 && len(lines) < 200; rest = rest[9:] {
			lines = append(lines, invoicedoc.Line{RateBP: propertyRates[int(rest[0])%len(propertyRates)],
				Gross: money.Cents(binary.BigEndian.Uint64(rest[1:9]) >> 1), Quantity: 1})
		}
		checkTotalsAgainstBig(t, lines, paid)
	})
}

// TestValidateRefusesOverflowingTotals: a document whose totals leave int64
// is a 422 naming the line, never a wrapped total (issue 14: 92.233.720.368.547.758,07 €
// invoices with 0 € VAT).
func TestValidateRefusesOverflowingTotals(t *testing.T) {
	d := invoicetest.CollectionMonths()
	d.Lines = d.Lines[:2]
	d.Lines[0].Gross, d.Lines[1].Gross = money.Max, 382
	err := d.Validate()
	ae := apperr.As(err)
	if ae == nil || ae.Kind != apperr.Unprocessable || !hasField(ae, "/lines/1/gross") {
		t.Fatalf("Validate with totals beyond int64 = %v", err)
	}
	d.Lines[0].Gross = money.Max - 382
	d.Buyer = invoicetest.CollectionMonths().Buyer
	if err := d.Validate(); err != nil && hasField(apperr.As(err), "/lines/1/gross") {
		t.Fatalf("the largest total that fits was refused: %v", err)
	}
	// A split whose shares sum beyond int64 is refused at the share.
	d = invoicetest.CollectionMonths()
	d.Lines[0].Split = []invoicedoc.Share{{Name: "A", Amount: d.Lines[0].Gross, Invoiced: true}, {Name: "B", Amount: money.Max}}
	if ae := apperr.As(d.Validate()); ae == nil || !hasField(ae, "/lines/0/split/1/amount") {
		t.Fatalf("split beyond int64 = %v", ae)
	}
}

func hasField(ae *apperr.Error, field string) bool {
	if ae == nil {
		return false
	}
	for _, d := range ae.Details {
		if d.Field == field {
			return true
		}
	}
	return false
}
