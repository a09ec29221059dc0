package money

import "testing"

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
		if rate < 0 || rate > 10000 || gross > 1<<40 || gross < -(1<<40) {
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
