package customers

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/retention"
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

// TestErasedCustomer: an erased customer is shown with the neutral name
// and no electronic invoicing, and gets no new documents (409
// customer_erased); a standing one is shown as stored and is usable.
func TestErasedCustomer(t *testing.T) {
	at := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
	c := invoicing.Customer{ID: "farebox-customer-1", AddressLines: []string{"Anna Schmidt", "Hauptstraße 1"},
		Electronic: &invoicing.Electronic{BuyerReference: "991-1"}, Environment: "live", CreatedAt: at}
	if v := View(c); len(v.AddressLines) != 2 || v.ElectronicInvoicing == nil || v.CreatedAt != "2026-06-15T10:00:00Z" {
		t.Errorf("standing customer %+v", v)
	}
	if err := Usable("test", c); err != nil {
		t.Errorf("standing customer: %v", err)
	}
	c.ErasedAt = &at
	if v := View(c); len(v.AddressLines) != 1 || v.AddressLines[0] != retention.ErasedName || v.ElectronicInvoicing != nil {
		t.Errorf("erased customer %+v", v)
	}
	if e := apperr.As(Usable("test", c)); e == nil || e.Kind != apperr.Conflict || e.Code != CodeCustomerErased {
		t.Errorf("erased customer usable: %v", e)
	}
}
