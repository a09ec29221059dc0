package invoicedoc

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/money"
)

// easCodes is the CEF Electronic Address Scheme code list as checked by
// BR-CL-25 in the EN 16931 validation artefacts 1.3.15.
var easCodes = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`0002 0007 0009 0037 0060 0088 0096 0097 0106 0130 0135 0142 0147
		0151 0154 0158 0170 0177 0183 0184 0188 0190 0191 0192 0193 0194 0195 0196 0198 0199 0200 0201
		0202 0203 0204 0205 0208 0209 0210 0211 0212 0213 0215 0216 0217 0218 0219 0220 0221 0225 0230
		0235 0240 9910 9913 9914 9915 9918 9919 9920 9922 9923 9924 9925 9926 9927 9928 9929 9930 9931
		9932 9933 9934 9935 9936 9937 9938 9939 9940 9941 9942 9943 9944 9945 9946 9947 9948 9949 9950
		9951 9952 9953 9957 9959 AN AQ AS AU EM`) {
		easCodes[c] = true
	}
}

// KnownScheme reports whether code is in the CEF EAS list (BR-CL-25).
func KnownScheme(code string) bool { return easCodes[code] }

// SmallInvoiceLimit is the gross limit of a Kleinbetragsrechnung (§ 33
// UStDV), the only kind of invoice that may omit the recipient.
const SmallInvoiceLimit money.Cents = 25000

// Validation limits taken from the interface document.
const (
	MaxAddressLines   = 5
	MaxAddressLineLen = 35
)

type checker struct{ details []apperr.FieldError }

func (c *checker) add(field, format string, args ...any) {
	c.details = append(c.details, apperr.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) required(field, value, rule string) {
	if Blank(value) {
		c.add(field, "is required (%s)", rule)
	}
}

// Validate reports everything that would make the document break German
// invoice law (§ 14 UStG) or an EN 16931 / XRechnung business rule. The
// error is an apperr Unprocessable with one FieldError per problem. Seller
// problems are configuration errors; the caller should also call
// ValidateSeller at startup.
func (d *Document) Validate() error {
	var c checker
	switch d.Kind {
	case KindInvoice, KindCancellation, KindPaymentNotice:
	default:
		c.add("/kind", "unknown document kind %d", d.Kind)
	}
	c.required("/number", d.Number, "BT-1")
	if d.IssueDate.IsZero() {
		c.add("/issue_date", "is required (BT-2)")
	}
	c.seller(&d.Seller, "/seller")
	if d.Buyer != nil {
		c.buyer(d.Buyer)
	}
	if len(d.Lines) == 0 {
		c.add("/lines", "at least one line is required (BG-25)")
	}
	seen := map[string]bool{}
	for i, l := range d.Lines {
		c.line(l, fmt.Sprintf("/lines/%d", i))
		if seen[l.BillableItemID] {
			c.add(fmt.Sprintf("/lines/%d/billable_item_id", i), "appears twice; line identifiers must be unique (BT-126)")
		}
		seen[l.BillableItemID] = true
	}
	if t, err := CheckedTotals(d.Lines, d.Payment.Paid); err != nil {
		// A rate outside 0 to 100 % is already reported by c.line.
		var te *TotalsError
		if errors.As(err, &te) && errors.Is(err, money.ErrOverflow) {
			c.add(te.Field, "makes the document's totals exceed the largest amount %s", money.Max.German())
		}
	} else {
		if d.Buyer == nil && t.Gross > SmallInvoiceLimit {
			c.add("/buyer", "an invoice above %s needs a recipient (§ 14 UStG; § 33 UStDV covers only up to that amount)", SmallInvoiceLimit.German())
		}
		if d.Payment.Paid < 0 || d.Payment.Paid > t.Gross {
			c.add("/payment/paid", "must be between 0 and the gross total %s", t.Gross.Decimal())
		}
	}
	if !d.Payment.DueDate.IsZero() && CalendarDate(d.Payment.DueDate).Before(CalendarDate(d.IssueDate)) {
		c.add("/payment/due_date", "must not be before the issue date")
	}
	switch {
	case d.Kind == KindCancellation && d.Cancels == nil:
		c.add("/cancels", "a cancellation must reference the cancelled invoice (BG-3)")
	case d.Cancels != nil:
		c.required("/cancels/number", d.Cancels.Number, "BT-25")
		if d.Cancels.IssueDate.IsZero() {
			c.add("/cancels/issue_date", "is required (BT-26)")
		}
	}
	for i, l := range d.Lines {
		if l.Invoice == nil {
			continue
		}
		if d.Kind != KindPaymentNotice {
			c.add(fmt.Sprintf("/lines/%d/invoice", i), "only a payment notice references an invoice per line")
			continue
		}
		c.required(fmt.Sprintf("/lines/%d/invoice/number", i), l.Invoice.Number, "BT-25")
		if l.Invoice.IssueDate.IsZero() {
			c.add(fmt.Sprintf("/lines/%d/invoice/issue_date", i), "is required (BT-26)")
		}
	}
	if len(c.details) > 0 {
		return apperr.E("invoicedoc.Validate", apperr.Unprocessable, CodeInvoiceInvalid,
			"the invoice document breaks "+fmt.Sprint(len(c.details))+" rule(s): "+c.details[0].Field+" "+c.details[0].Message).
			WithDetails(c.details...)
	}
	return nil
}

// ValidateSeller checks the seller configuration alone, for startup.
func ValidateSeller(s *Seller) error {
	var c checker
	c.seller(s, "/seller")
	if len(c.details) > 0 {
		return apperr.E("invoicedoc.ValidateSeller", apperr.Invalid, CodeSellerConfigInvalid,
			"seller configuration incomplete: "+c.details[0].Field+" "+c.details[0].Message).WithDetails(c.details...)
	}
	return nil
}

func (c *checker) address(a Address, field string, name bool) {
	if name {
		c.required(field+"/name", a.Name, "BT-44")
	}
	c.required(field+"/street", a.Street, "BR-DE-3 / BR-DE-8")
	c.required(field+"/postal_code", a.PostalCode, "BR-DE-4 / BR-DE-9")
	c.required(field+"/city", a.City, "BR-DE-3 / BR-DE-8")
	if msg := CountryProblem(a.CountryCode); msg != "" {
		c.add(field+"/country_code", "%s (BR-09 / BR-11)", msg)
	}
}

func (c *checker) seller(s *Seller, f string) {
	c.required(f+"/name", s.Name, "BR-06")
	c.address(s.Address, f+"/address", false)
	if Blank(s.VATID) && Blank(s.TaxNumber) {
		c.add(f+"/vat_id", "a VAT id or a tax number is required (BR-DE-16, BR-CO-26)")
	}
	if !Blank(s.VATID) && (len(s.VATID) < 3 || !isCountryCode(s.VATID[:2])) {
		c.add(f+"/vat_id", "must start with the two-letter country prefix, e.g. DE123456789 (BR-CO-09)")
	}
	c.required(f+"/contact_name", s.ContactName, "BR-DE-5")
	if digits(s.ContactPhone) < 3 {
		c.add(f+"/contact_phone", "needs at least 3 digits (BR-DE-6, BR-DE-27)")
	}
	if !ValidEmail(s.ContactEmail) {
		c.add(f+"/contact_email", "must be an e-mail address (BR-DE-7, BR-DE-28)")
	}
	c.required(f+"/electronic_address", s.ElectronicAddress, "BR-62")
	if !KnownScheme(s.ElectronicAddressScheme) {
		c.add(f+"/electronic_address_scheme", "%q is not in the CEF EAS code list (BR-CL-25)", s.ElectronicAddressScheme)
	}
	if !ValidIBAN(s.IBAN) {
		c.add(f+"/iban", "is not a valid IBAN (BR-DE-19, BR-DE-23-a)")
	}
}

func (c *checker) buyer(b *Buyer) {
	if len(b.AddressLines) < 1 || len(b.AddressLines) > MaxAddressLines {
		c.add("/buyer/address_lines", "needs 1 to %d lines", MaxAddressLines)
	}
	for i, l := range b.AddressLines {
		if utf8.RuneCountInString(l) > MaxAddressLineLen {
			c.add(fmt.Sprintf("/buyer/address_lines/%d", i), "is longer than %d characters", MaxAddressLineLen)
		}
	}
	if len(b.AddressLines) > 0 && Blank(b.AddressLines[0]) {
		c.add("/buyer/address_lines/0", "the first line (the name) must not be blank")
	}
	e := b.Electronic
	if e == nil {
		return
	}
	f := "/buyer/electronic_invoicing"
	c.required(f+"/electronic_address", e.ElectronicAddress, "BR-63")
	if !KnownScheme(e.Scheme) {
		c.add(f+"/electronic_address_scheme_id", "%q is not in the CEF EAS code list (BR-CL-25)", e.Scheme)
	}
	c.required(f+"/buyer_reference", e.BuyerReference, "BR-DE-15")
	c.address(e.Address, f+"/address", true)
}

func (c *checker) line(l Line, f string) {
	c.required(f+"/billable_item_id", l.BillableItemID, "BT-126")
	c.required(f+"/name", l.Name, "BT-153")
	if l.Quantity < 1 {
		c.add(f+"/quantity", "must be at least 1")
	}
	if l.Gross < 0 {
		c.add(f+"/gross", "must not be negative (BR-27: prices stay positive; cancellations use the credit-note form)")
	}
	if l.RateBP <= 0 || l.RateBP >= 10000 {
		c.add(f+"/rate_bp", "must be a positive VAT rate below 100 %% for category S (BR-S-05, BR-DE-14)")
	}
	if l.OrderedAt.IsZero() {
		c.add(f+"/ordered_at", "is required (service time)")
	}
	if len(l.Split) == 0 {
		return
	}
	invoiced := 0
	var total money.Cents
	overflow := false
	for i, s := range l.Split {
		var err error
		if total, err = money.Add(total, s.Amount); err != nil && !overflow {
			overflow = true
			c.add(fmt.Sprintf("%s/split/%d/amount", f, i), "makes the split's total exceed the largest amount %s", money.Max.German())
		}
		c.required(fmt.Sprintf("%s/split/%d/name", f, i), s.Name, "split participant")
		if s.Amount < 0 {
			c.add(fmt.Sprintf("%s/split/%d/amount", f, i), "must not be negative")
		}
		if s.Invoiced {
			invoiced++
			if s.Amount != l.Gross {
				c.add(fmt.Sprintf("%s/split/%d/amount", f, i), "the invoiced share %s differs from the line amount %s", s.Amount.Decimal(), l.Gross.Decimal())
			}
		}
	}
	if invoiced != 1 {
		c.add(f+"/split", "exactly one share must be the invoiced buyer, found %d", invoiced)
	}
}

// Blank reports whether s has no visible content: only whitespace, control
// characters or invalid UTF-8. Such a value would become an empty XML element.
func Blank(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				continue
			}
		}
		if !unicode.IsSpace(r) && !unicode.IsControl(r) && r != '\uFFFE' && r != '\uFFFF' && !(r >= 0xD800 && r <= 0xDFFF) {
			return false
		}
	}
	return true
}

func isCountryCode(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

func digits(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsDigit(r) {
			n++
		}
	}
	return n
}

// ValidEmail applies BR-DE-28 as the XRechnung 3.0 schematron checks it
// (XR-EMAIL-REGEX ^[^@\s]+@([^@.\s]+\.)+[^@.\s]+$): exactly one @, a
// non-empty local part, and a domain of at least two non-empty dot-separated
// labels; no whitespace anywhere. x@example.com and a@bc.de are addresses.
func ValidEmail(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || strings.ContainsFunc(s, unicode.IsSpace) || strings.Contains(domain, "@") {
		return false
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" {
			return false
		}
	}
	return true
}

// ValidIBAN checks an IBAN's form and its ISO 13616 mod-97 checksum; spaces
// are ignored.
func ValidIBAN(iban string) bool {
	s := strings.ToUpper(strings.ReplaceAll(iban, " ", ""))
	if len(s) < 15 || len(s) > 34 || !isCountryCode(s[:2]) || s[2] < '0' || s[2] > '9' || s[3] < '0' || s[3] > '9' {
		return false
	}
	var b strings.Builder
	for _, r := range s[4:] + s[:4] {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			fmt.Fprintf(&b, "%d", r-'A'+10)
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(b.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// NormalizeIBAN removes spaces and upper-cases, the form written into XML.
func NormalizeIBAN(iban string) string { return strings.ToUpper(strings.ReplaceAll(iban, " ", "")) }
