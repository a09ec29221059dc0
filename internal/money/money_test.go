package money

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"testing"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		gross    Cents
		rate     int64
		net, vat Cents
	}{
		{4900, 700, 4579, 321},
		{4655, 700, 4350, 305},
		{350, 700, 327, 23},
		{0, 700, 0, 0},
		{-4900, 700, -4579, -321},
		{1190, 1900, 1000, 190},
	}
	for _, c := range cases {
		net, vat := Split(c.gross, c.rate)
		if net != c.net || vat != c.vat {
			t.Errorf("Split(%d, %d) = %d, %d; want %d, %d", c.gross, c.rate, net, vat, c.net, c.vat)
		}
	}
}

func TestFormats(t *testing.T) {
	if got := Cents(465500).German(); got != "4.655,00 €" {
		t.Errorf("German = %q", got)
	}
	if got := Cents(4655).German(); got != "46,55 €" {
		t.Errorf("German = %q", got)
	}
	if got := Cents(-5).Decimal(); got != "-0.05" {
		t.Errorf("Decimal = %q", got)
	}
	if got := RatePercent(700); got != "7.00" {
		t.Errorf("RatePercent = %q", got)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add(int64(4900), int64(700))
	f.Add(int64(-1), int64(1900))
	f.Fuzz(func(t *testing.T, gross, rate int64) {
		if rate < 0 || rate > MaxRateBP {
			return
		}
		net, vat := Split(Cents(gross), rate)
		if net+vat != Cents(gross) {
			t.Fatalf("net %d + vat %d != gross %d", net, vat, gross)
		}
		if (gross >= 0 && (vat < 0 || net < 0)) || (gross < 0 && (vat > 0 || net > 0)) {
			t.Fatalf("sign mismatch: gross %d net %d vat %d", gross, net, vat)
		}
	})
}

// bigDivRound is a/b rounded half away from zero, in big integers (b > 0).
func bigDivRound(a, b *big.Int) *big.Int {
	neg := a.Sign() < 0
	q := new(big.Int).Abs(a)
	q.Add(q, new(big.Int).Quo(b, big.NewInt(2)))
	q.Quo(q, b)
	if neg {
		q.Neg(q)
	}
	return q
}

// checkArith compares Add, Sub, Split and Share with math/big: each
// result is exact, and ErrOverflow comes exactly when the true value leaves
// the int64 range.
func checkArith(t *testing.T, a, b int64, rate int64) {
	t.Helper()
	ba, bb := big.NewInt(a), big.NewInt(b)
	check := func(name string, got Cents, err error, want *big.Int) {
		t.Helper()
		if !want.IsInt64() {
			if !errors.Is(err, ErrOverflow) {
				t.Fatalf("%s(%d, %d) = %d, %v; want ErrOverflow (true value %s)", name, a, b, got, err, want)
			}
			return
		}
		if err != nil || int64(got) != want.Int64() {
			t.Fatalf("%s(%d, %d) = %d, %v; want %s", name, a, b, got, err, want)
		}
	}
	sum, err := Add(Cents(a), Cents(b))
	check("Add", sum, err, new(big.Int).Add(ba, bb))
	diff, err := Sub(Cents(a), Cents(b))
	check("Sub", diff, err, new(big.Int).Sub(ba, bb))
	if rate < 0 || rate > MaxRateBP {
		return
	}
	net, vat := Split(Cents(a), rate)
	wantVAT := bigDivRound(new(big.Int).Mul(ba, big.NewInt(rate)), big.NewInt(10000+rate))
	if vat != Cents(wantVAT.Int64()) || net+vat != Cents(a) {
		t.Fatalf("Split(%d, %d) = %d, %d; want vat %s", a, rate, net, vat, wantVAT)
	}
	// Share: k n-ths of a, for n from b's size and k at the ends and the
	// middle; consecutive shares add up to a.
	{
		n := b%1000 + 1000 // 1..1999
		for _, k := range []int64{0, 1, n / 2, n - 1, n} {
			want := bigDivRound(new(big.Int).Mul(ba, big.NewInt(k)), big.NewInt(n))
			if got := Share(Cents(a), k, n); got != Cents(want.Int64()) {
				t.Fatalf("Share(%d, %d, %d) = %d; want %s", a, k, n, got, want)
			}
		}
		if Share(Cents(a), n, n) != Cents(a) {
			t.Fatalf("Share(%d, %d, %d) is not the whole", a, n, n)
		}
	}
	// VAT on a net amount, as the invoice tests check it: rate/10000 of it.
	wantOn := bigDivRound(new(big.Int).Mul(ba, big.NewInt(rate)), big.NewInt(10000))
	if got := Share(Cents(a), rate, 10000); got != Cents(wantOn.Int64()) {
		t.Fatalf("Share(%d, %d, 10000) = %d; want %s", a, rate, got, wantOn)
	}
}

// TestArithmeticAtTheLimits runs the big-integer comparison over the edges
// of int64 (where the old unchecked sums wrapped around).
func TestArithmeticAtTheLimits(t *testing.T) {
	edges := []int64{0, 1, -1, 2, -2, 99, 380, 382, 1 << 31, -(1 << 31), 1 << 40, math.MaxInt64 / 10000, math.MaxInt64 / 2,
		math.MaxInt64/2 + 1, math.MaxInt64 - 1, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, math.MinInt64 / 2}
	for _, a := range edges {
		for _, b := range edges {
			for _, rate := range []int64{0, 1, 700, 1900, 9999, MaxRateBP} {
				checkArith(t, a, b, rate)
			}
		}
	}
	if got := Max.German(); got != "92.233.720.368.547.758,07 €" {
		t.Errorf("Max.German() = %q", got)
	}
	if got := Cents(math.MinInt64).Decimal(); got != "-92233720368547758.08" {
		t.Errorf("MinInt64.Decimal() = %q", got)
	}
}

func TestRateOutsideRangePanics(t *testing.T) {
	for _, rate := range []int64{-1, MaxRateBP + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Split(100, %d) did not refuse the rate", rate)
				}
			}()
			Split(100, rate)
		}()
	}
}

// FuzzArithmetic compares the checked arithmetic with math/big for any
// operands (CI fuzzes it, .ci/run).
func FuzzArithmetic(f *testing.F) {
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), int64(700))
	f.Add(int64(math.MinInt64), int64(-1), int64(1900))
	f.Add(int64(4900), int64(3), int64(700))
	f.Fuzz(func(t *testing.T, a, b, rate int64) {
		checkArith(t, a, b, rate)
	})
}

// TestCentsJSON pins the wire format: every *_in_cents field of the API is
// a money.Cents, and it must stay a bare JSON integer (no quotes, no
// decimal point), exact at both ends of the int64 range, in both directions.
func TestCentsJSON(t *testing.T) {
	type wire struct {
		Price Cents   `json:"price_in_cents"`
		Split []Cents `json:"split"`
	}
	in := wire{Price: 4655, Split: []Cents{Max, math.MinInt64, 0, -1}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"price_in_cents":4655,"split":[9223372036854775807,-9223372036854775808,0,-1]}`
	if string(b) != want {
		t.Fatalf("encoded %s, want %s", b, want)
	}
	var out wire
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Price != in.Price || len(out.Split) != len(in.Split) {
		t.Fatalf("decoded %+v, want %+v", out, in)
	}
	for i := range in.Split {
		if out.Split[i] != in.Split[i] {
			t.Errorf("split[%d] decoded %d, want %d", i, out.Split[i], in.Split[i])
		}
	}
	// Like int64: a string or a fraction is refused, not converted.
	for _, bad := range []string{`{"price_in_cents":"4655"}`, `{"price_in_cents":46.55}`, `{"price_in_cents":9223372036854775808}`} {
		if err := json.Unmarshal([]byte(bad), &out); err == nil {
			t.Errorf("%s decoded without error", bad)
		}
	}
}
