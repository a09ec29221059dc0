package invoicing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/farebox/farebox/internal/list"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
)

// Limits of address_lines (interface section 8).
const (
	MinAddressLines   = 1
	MaxAddressLines   = invoicedoc.MaxAddressLines
	MaxAddressLineLen = invoicedoc.MaxAddressLineLen
	// MaxFieldLen bounds every electronic_invoicing string.
	MaxFieldLen = 200
)

// Electronic is a customer's electronic_invoicing object, in the API's
// nested structure. All strings are kept exactly as sent (leading zeros).
type Electronic struct {
	ElectronicAddress         string            `json:"electronic_address"`
	ElectronicAddressSchemeID string            `json:"electronic_address_scheme_id"`
	BuyerReference            string            `json:"buyer_reference"`
	Address                   ElectronicAddress `json:"address"`
}

// ElectronicAddress is electronic_invoicing.address.
type ElectronicAddress struct {
	Name                   string  `json:"name"`
	StreetWithNumber       string  `json:"street_with_number"`
	PostalCode             string  `json:"postal_code"`
	City                   string  `json:"city"`
	CountryCode            string  `json:"country_code"`
	AdditionAddressLineOne *string `json:"addition_address_line_one,omitempty"`
	AdditionAddressLineTwo *string `json:"addition_address_line_two,omitempty"`
}

// Customer is an invoice recipient of one account and environment.
type Customer struct {
	ID           string
	AccountID    string
	Environment  account.Environment
	AddressLines []string
	Electronic   *Electronic // nil: no electronic invoicing (PDF only)
	CreatedAt    time.Time
	// ErasedAt is when the partner requested erasure (docs/privacy.md):
	// the customer is no longer shown or used for new items and documents.
	// RestrictedUntil, while set, is when the retention duty of the
	// invoices issued to it ends; until then its data is kept for that
	// duty only, afterwards the retention job erases it.
	ErasedAt        *time.Time
	RestrictedUntil *time.Time
}

// Buyer converts the customer into the document model's buyer.
func (c Customer) Buyer() *invoicedoc.Buyer {
	b := &invoicedoc.Buyer{AddressLines: append([]string(nil), c.AddressLines...)}
	if e := c.Electronic; e != nil {
		b.Electronic = &invoicedoc.ElectronicInvoicing{ElectronicAddress: e.ElectronicAddress, Scheme: e.ElectronicAddressSchemeID,
			BuyerReference: e.BuyerReference, Address: invoicedoc.Address{Name: e.Address.Name, Street: e.Address.StreetWithNumber,
				PostalCode: e.Address.PostalCode, City: e.Address.City, CountryCode: e.Address.CountryCode}}
		if e.Address.AdditionAddressLineOne != nil {
			b.Electronic.Address.AdditionalLine1 = *e.Address.AdditionAddressLineOne
		}
		if e.Address.AdditionAddressLineTwo != nil {
			b.Electronic.Address.AdditionalLine2 = *e.Address.AdditionAddressLineTwo
		}
	}
	return b
}

// Name is the customer's display name (the first address line).
func (c Customer) Name() string {
	if len(c.AddressLines) == 0 {
		return ""
	}
	return c.AddressLines[0]
}

// CustomerInput is what POST …/customers.json carries inside "customer".
type CustomerInput struct {
	AddressLines []string
	// Electronic is the raw electronic_invoicing value; nil when the key
	// was omitted (only v9 accepts it).
	Electronic json.RawMessage
}

// ParseCustomer validates a customer request. allowElectronic is false on
// /v5, where electronic_invoicing is not part of the API. Every problem is
// reported at once as a 422 naming its JSON pointer.
func ParseCustomer(in CustomerInput, allowElectronic bool) ([]string, *Electronic, error) {
	const op = "invoicing.ParseCustomer"
	var probs []apperr.FieldError
	add := func(field, format string, args ...any) {
		probs = append(probs, apperr.FieldError{Field: field, Message: strings.TrimPrefix(field, "/customer/") + " " + fmt.Sprintf(format, args...)})
	}
	lines := in.AddressLines
	switch {
	case lines == nil:
		add("/customer/address_lines", "is required: 1 to %d lines of at most %d characters", MaxAddressLines, MaxAddressLineLen)
	case len(lines) < MinAddressLines || len(lines) > MaxAddressLines:
		add("/customer/address_lines", "must have 1 to %d lines, not %d", MaxAddressLines, len(lines))
	}
	for i, l := range lines {
		f := fmt.Sprintf("/customer/address_lines/%d", i)
		switch {
		case !utf8.ValidString(l) || strings.ContainsFunc(l, unicode.IsControl):
			add(f, "must be printable text")
		case utf8.RuneCountInString(l) > MaxAddressLineLen:
			add(f, "is %d characters long; at most %d are allowed", utf8.RuneCountInString(l), MaxAddressLineLen)
		case i == 0 && invoicedoc.Blank(l):
			add(f, "(the name) must not be empty")
		}
	}
	var e *Electronic
	if in.Electronic != nil {
		if !allowElectronic {
			add("/customer/electronic_invoicing", "is available from /v9/ticketing/customers.json")
		} else {
			var eprobs []apperr.FieldError
			e, eprobs = parseElectronic(in.Electronic)
			probs = append(probs, eprobs...)
		}
	}
	if len(probs) > 0 {
		return nil, nil, apperr.E(op, apperr.Unprocessable, CodeInvalidCustomer, probs[0].Message).WithDetails(probs...)
	}
	return lines, e, nil
}

// parseElectronic checks every field of electronic_invoicing: present, a
// string, not blank, and meeting the XRechnung rule it feeds.
func parseElectronic(raw json.RawMessage) (*Electronic, []apperr.FieldError) {
	const base = "/customer/electronic_invoicing"
	var probs []apperr.FieldError
	add := func(field, msg string) {
		probs = append(probs, apperr.FieldError{Field: base + field, Message: "electronic_invoicing" + strings.ReplaceAll(field, "/", ".") + " " + msg})
	}
	t := bytes.TrimSpace(raw)
	if bytes.Equal(t, []byte("null")) {
		add("", "must not be null; omit it to create a customer without electronic invoicing")
		return nil, probs
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(t, &top); err != nil || top == nil {
		add("", "must be an object")
		return nil, probs
	}
	if len(top) == 0 {
		add("", "must not be an empty object; omit it to create a customer without electronic invoicing")
		return nil, probs
	}
	str := func(m map[string]json.RawMessage, key, field string, required bool) (string, bool) {
		v, ok := m[key]
		if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			if required {
				add(field, "is required")
			}
			return "", false
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			add(field, "must be a string")
			return "", false
		}
		switch {
		case !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl):
			add(field, "must be printable text")
		case invoicedoc.Blank(s):
			add(field, "must not be empty or whitespace")
		case utf8.RuneCountInString(s) > MaxFieldLen:
			add(field, fmt.Sprintf("must be at most %d characters", MaxFieldLen))
		default:
			return s, true
		}
		return "", false
	}
	known := func(m map[string]json.RawMessage, prefix string, keys ...string) {
		for k := range m {
			found := false
			for _, want := range keys {
				found = found || k == want
			}
			if !found {
				add(prefix+"/"+k, "is not a known field")
			}
		}
	}
	e := &Electronic{}
	known(top, "", "electronic_address", "electronic_address_scheme_id", "buyer_reference", "address")
	e.ElectronicAddress, _ = str(top, "electronic_address", "/electronic_address", true)
	if s, ok := str(top, "electronic_address_scheme_id", "/electronic_address_scheme_id", true); ok {
		if !invoicedoc.KnownScheme(s) {
			add("/electronic_address_scheme_id", fmt.Sprintf("%q is not a code of the CEF EAS list (EM for e-mail, 0204 for a Leitweg-ID)", s))
		}
		e.ElectronicAddressSchemeID = s
	}
	if e.ElectronicAddressSchemeID == "EM" && e.ElectronicAddress != "" && !invoicedoc.ValidEmail(e.ElectronicAddress) {
		add("/electronic_address", "must be an e-mail address for scheme EM")
	}
	e.BuyerReference, _ = str(top, "buyer_reference", "/buyer_reference", true)
	var addr map[string]json.RawMessage
	if v, ok := top["address"]; !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		add("/address", "is required")
	} else if err := json.Unmarshal(v, &addr); err != nil || addr == nil {
		add("/address", "must be an object")
	} else {
		known(addr, "/address", "name", "street_with_number", "postal_code", "city", "country_code",
			"addition_address_line_one", "addition_address_line_two")
		a := &e.Address
		a.Name, _ = str(addr, "name", "/address/name", true)
		a.StreetWithNumber, _ = str(addr, "street_with_number", "/address/street_with_number", true)
		a.PostalCode, _ = str(addr, "postal_code", "/address/postal_code", true)
		a.City, _ = str(addr, "city", "/address/city", true)
		if s, ok := str(addr, "country_code", "/address/country_code", true); ok {
			if msg := invoicedoc.CountryProblem(s); msg != "" {
				add("/address/country_code", "must be an ISO 3166-1 alpha-2 country code such as DE: "+msg)
			}
			a.CountryCode = s
		}
		if s, ok := str(addr, "addition_address_line_one", "/address/addition_address_line_one", false); ok {
			a.AdditionAddressLineOne = &s
		}
		if s, ok := str(addr, "addition_address_line_two", "/address/addition_address_line_two", false); ok {
			a.AdditionAddressLineTwo = &s
		}
	}
	return e, probs
}

// CheckStored judges a customer as stored against the rules a new one
// meets where a document depends on them: a country code written by an
// older version (or by hand) that XRechnung refuses (BR-CL-14) would make
// every file of its invoices invalid. The error is a 422 invalid_customer
// naming the customer's field.
func (c Customer) CheckStored(op string) error {
	if c.Electronic == nil {
		return nil
	}
	if msg := invoicedoc.CountryProblem(c.Electronic.Address.CountryCode); msg != "" {
		const field = "/customer/electronic_invoicing/address/country_code"
		text := fmt.Sprintf("customer %s has electronic_invoicing.address.country_code: %s. Its XRechnung files would be invalid: create a customer with a valid code and assign the item to it", c.ID, msg)
		return apperr.E(op, apperr.Unprocessable, CodeInvalidCustomer, text).WithDetails(apperr.FieldError{Field: field, Message: text})
	}
	return nil
}

// CustomerFilter selects the customers of a list (docs/lists.md): only
// the common parameters.
type CustomerFilter struct {
	list.Query
}
