// Package customers is the invoicing customer as every use case shows it
// (CustomerJSON: the invoicing answers and the privacy export) and the
// rule that an erased customer gets no new documents. It sits below the
// use cases that share it (usecase-shared): invoicing creates and lists
// customers, privacy exports and erases them.
package customers

import (
	"fmt"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/retention"
)

// CustomerJSON is a Customer.
type CustomerJSON struct {
	ID                  string          `json:"id"`
	AddressLines        []string        `json:"address_lines"`
	ElectronicInvoicing *ElectronicJSON `json:"electronic_invoicing"`
	Environment         string          `json:"environment"`
	CreatedAt           string          `json:"created_at"`
}

// View is customer c as its GET shows it.
func View(c invoicing.Customer) CustomerJSON {
	if c.ErasedAt != nil {
		// Erased, or restricted to the retention duty: shown with neutral
		// values in the same shape (docs/privacy.md).
		c.AddressLines, c.Electronic = []string{retention.ErasedName}, nil
	}
	return CustomerJSON{ID: c.ID, AddressLines: c.AddressLines, ElectronicInvoicing: electronicView(c.Electronic),
		Environment: string(c.Environment), CreatedAt: clock.Timestamp(c.CreatedAt)}
}

// ElectronicJSON is a customer's electronic_invoicing (XRechnung buyer data).
type ElectronicJSON struct {
	ElectronicAddress         string                `json:"electronic_address"`
	ElectronicAddressSchemeID string                `json:"electronic_address_scheme_id"`
	BuyerReference            string                `json:"buyer_reference"`
	Address                   electronicAddressJSON `json:"address"`
}

type electronicAddressJSON struct {
	Name                   string  `json:"name"`
	StreetWithNumber       string  `json:"street_with_number"`
	PostalCode             string  `json:"postal_code"`
	City                   string  `json:"city"`
	CountryCode            string  `json:"country_code"`
	AdditionAddressLineOne *string `json:"addition_address_line_one,omitempty"`
	AdditionAddressLineTwo *string `json:"addition_address_line_two,omitempty"`
}

func electronicView(e *invoicing.Electronic) *ElectronicJSON {
	if e == nil {
		return nil
	}
	return &ElectronicJSON{ElectronicAddress: e.ElectronicAddress, ElectronicAddressSchemeID: e.ElectronicAddressSchemeID,
		BuyerReference: e.BuyerReference, Address: electronicAddressJSON(e.Address)}
}

// Usable refuses (409 customer_erased) a new document for customer c once
// its erasure was requested: it is restricted to the retention duty of
// its old documents (docs/privacy.md).
func Usable(op string, c invoicing.Customer) error {
	if c.ErasedAt != nil {
		return apperr.E(op, apperr.Conflict, CodeCustomerErased, fmt.Sprintf("customer %q is erased: no new documents (docs/privacy.md)", c.ID))
	}
	return nil
}
