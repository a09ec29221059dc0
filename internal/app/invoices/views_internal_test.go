package invoices

import (
	"testing"

	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/testtool"
)

// TestSplitViewEncodesAsTheDomain: an item's split writes byte for byte
// what invoicing.Share wrote before the views existed (absent, empty and
// full); the customer's electronic_invoicing is package customers'.
func TestSplitViewEncodesAsTheDomain(t *testing.T) {
	for _, s := range [][]invoicing.Share{nil, {}, {{CustomerID: "c1", AmountInCents: 200}, {CustomerID: "c2", AmountInCents: -1}}} {
		testtool.SameJSON(t, s, sharesView(s))
	}
}
