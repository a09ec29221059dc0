// Package money holds amounts as integer cents and does VAT arithmetic without
// floats. Rates are in basis points (700 = 7 %). Rounding is half away from
// zero at the cent, the commercial rule EN 16931 tools expect.
package money

import (
	"fmt"
	"strings"
)

// Cents is an amount in euro cents.
type Cents int64

// Split divides a gross amount into net and VAT at rate basis points so that
// net + vat == gross exactly: vat = round(gross * rate / (10000 + rate)).
func Split(gross Cents, rateBP int64) (net, vat Cents) {
	vat = Cents(divRound(int64(gross)*rateBP, 10000+rateBP))
	return gross - vat, vat
}

// VATOn computes the VAT of a net amount at rateBP: round(net * rate / 10000).
func VATOn(net Cents, rateBP int64) Cents { return Cents(divRound(int64(net)*rateBP, 10000)) }

// divRound is a/b rounded half away from zero (b > 0).
func divRound(a, b int64) int64 {
	if a >= 0 {
		return (a + b/2) / b
	}
	return -((-a + b/2) / b)
}

// Decimal formats c as "1234.50" (XML amounts: dot, two decimals, no grouping).
func (c Cents) Decimal() string {
	sign := ""
	v := int64(c)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// German formats c as "4.655,00 €" (comma decimal, dot thousands).
func (c Cents) German() string {
	sign := ""
	v := int64(c)
	if v < 0 {
		sign, v = "-", -v
	}
	whole := fmt.Sprintf("%d", v/100)
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	return fmt.Sprintf("%s%s,%02d €", sign, b.String(), v%100)
}

// RatePercent formats basis points as a decimal percent: 700 → "7.00".
func RatePercent(rateBP int64) string { return fmt.Sprintf("%d.%02d", rateBP/100, rateBP%100) }
