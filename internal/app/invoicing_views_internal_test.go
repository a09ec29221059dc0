package app

import (
	"testing"

	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/testtool"
)

// TestInvoicingViewsEncodeAsTheDomain: an item's split writes byte for
// byte what the invoicing types wrote before the views existed (absent,
// empty and full; the customer's electronic_invoicing: kit's
// TestElectronicViewEncodesAsTheDomain).
func TestInvoicingViewsEncodeAsTheDomain(t *testing.T) {
	for _, s := range [][]invoicing.Share{nil, {}, {{CustomerID: "c1", AmountInCents: 200}, {CustomerID: "c2", AmountInCents: -1}}} {
		testtool.SameJSON(t, s, sharesView(s))
	}
}
