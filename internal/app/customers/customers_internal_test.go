package customers

import (
	"testing"

	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/testtool"
)

// TestElectronicViewEncodesAsTheDomain: the customer's electronic_invoicing
// writes byte for byte what invoicing.Electronic wrote before the views
// existed (absent, empty and full, every script).
func TestElectronicViewEncodesAsTheDomain(t *testing.T) {
	line := "شارع 5 – רחוב 東京 🚆 <&>"
	for _, e := range []*invoicing.Electronic{nil, {}, {ElectronicAddress: "a@b.example", ElectronicAddressSchemeID: "EM", BuyerReference: "04011000-1234512345-06",
		Address: invoicing.ElectronicAddress{Name: "Bahn GmbH", StreetWithNumber: "Straße 1", PostalCode: "10115", City: "Berlin", CountryCode: "DE",
			AdditionAddressLineOne: &line, AdditionAddressLineTwo: new(string)}}} {
		testtool.SameJSON(t, e, electronicView(e))
	}
}
