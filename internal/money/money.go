// Package money holds amounts as integer cents and does VAT arithmetic without
// floats. Rates are in basis points (700 = 7 %). Rounding is half away from
// zero at the cent, the commercial rule EN 16931 tools expect.
//
// Amounts are exact or refused: every sum, difference and product of amounts
// goes through Add, Sub, Mul or Sum, which report an overflow of int64 cents
// (ErrOverflow) instead of wrapping around. Split is exact for every
// int64 amount (128-bit intermediates).
package money

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// Cents is an amount in euro cents.
type Cents int64

// Max is the largest representable amount (92.233.720.368.547.758,07 €).
const Max = Cents(math.MaxInt64)

// ErrOverflow reports an amount outside the int64 cent range.
var ErrOverflow = errors.New("money: amount overflows int64 cents")

// Add returns a + b, or ErrOverflow when the sum does not fit.
func Add(a, b Cents) (Cents, error) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, ErrOverflow
	}
	return s, nil
}

// Sub returns a − b, or ErrOverflow when the difference does not fit.
func Sub(a, b Cents) (Cents, error) {
	d := a - b
	if (b > 0 && d > a) || (b < 0 && d < a) {
		return 0, ErrOverflow
	}
	return d, nil
}

// Split divides a gross amount into net and VAT at rate basis points (0 to
// MaxRateBP) so that net + vat == gross exactly: vat = round(gross × rate /
// (10000 + rate)). |vat| ≤ |gross|, so it is exact for every amount.
func Split(gross Cents, rateBP int64) (net, vat Cents) {
	checkRate(rateBP)
	vat = Cents(mulDivRound(int64(gross), rateBP, 10000+rateBP))
	return gross - vat, vat
}

// MaxRateBP is the largest rate Split accepts (100 %).
const MaxRateBP = 10000

// checkRate enforces the rate precondition of Split. Callers
// validate rates first (invoicedoc.Validate); a rate outside 0..MaxRateBP here is
// a bug, and a wrong VAT amount must never be computed silently.
func checkRate(rateBP int64) {
	if rateBP < 0 || rateBP > MaxRateBP {
		panic(fmt.Sprintf("money: VAT rate %d basis points outside 0..%d", rateBP, MaxRateBP))
	}
}

// Share is k n-ths of c, rounded half away from zero (0 ≤ k ≤ n, n > 0):
// the first k of n equal shares together, so consecutive Shares split c
// into n parts that differ by at most a cent and add up to c exactly.
func Share(c Cents, k, n int64) Cents {
	if n <= 0 || k < 0 || k > n {
		panic(fmt.Sprintf("money: share %d of %d", k, n))
	}
	return Cents(mulDivRound(int64(c), k, n))
}

// mulDivRound is a × b / d rounded half away from zero, with a 128-bit
// intermediate product. b ≥ 0, d > 0 and |a × b / d| ≤ |a| (b ≤ d), so the
// result fits in int64.
func mulDivRound(a, b, d int64) int64 {
	neg := a < 0
	ua := uint64(a)
	if neg {
		ua = -ua // two's complement magnitude, also right for math.MinInt64
	}
	hi, lo := bits.Mul64(ua, uint64(b))
	lo, carry := bits.Add64(lo, uint64(d)/2, 0)
	hi += carry
	q, _ := bits.Div64(hi, lo, uint64(d))
	if neg {
		return -int64(q)
	}
	return int64(q)
}

// Decimal formats c as "1234.50" (XML amounts: dot, two decimals, no grouping).
func (c Cents) Decimal() string {
	sign, whole, frac := c.parts()
	return fmt.Sprintf("%s%d.%02d", sign, whole, frac)
}

// German formats c as "4.655,00 €" (comma decimal, dot thousands).
func (c Cents) German() string {
	sign, whole, frac := c.parts()
	digits := fmt.Sprintf("%d", whole)
	var b strings.Builder
	for i, r := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	return fmt.Sprintf("%s%s,%02d €", sign, b.String(), frac)
}

// parts splits c into sign, whole euros and cents (right for math.MinInt64 too).
func (c Cents) parts() (sign string, whole, frac uint64) {
	v := uint64(c)
	if c < 0 {
		sign, v = "-", -v
	}
	return sign, v / 100, v % 100
}

// RatePercent formats basis points as a decimal percent: 700 → "7.00".
func RatePercent(rateBP int64) string { return fmt.Sprintf("%d.%02d", rateBP/100, rateBP%100) }
