package invoicedoc

import (
	"strings"
	"time"

	"github.com/farebox/farebox/internal/money"
)

// Kind is the type of document.
type Kind int

const (
	// KindInvoice is an ordinary invoice (UNTDID 1001 code 380).
	KindInvoice Kind = iota + 1
	// KindCancellation is a Stornorechnung in credit-note form (code 381):
	// amounts stay positive, the type carries the direction, and Cancels
	// references the original invoice (BG-3).
	KindCancellation
	// KindPaymentNotice is a Zahlungsaufforderung for an invoice or a
	// collection. It uses the invoice structure (code 380) but does not claim
	// XRechnung or EN 16931 conformance and says so in a note.
	KindPaymentNotice
)

// String names the kind for logs and file names.
func (k Kind) String() string {
	switch k {
	case KindInvoice:
		return "invoice"
	case KindCancellation:
		return "cancellation"
	case KindPaymentNotice:
		return "payment_notice"
	}
	return "unknown"
}

// TypeCode is the UNTDID 1001 document type code (BT-3).
func (k Kind) TypeCode() string {
	if k == KindCancellation {
		return "381"
	}
	return "380"
}

// Currency is the only supported document currency (BT-5).
const Currency = "EUR"

// Address is a structured postal address. For the buyer it comes from
// electronic_invoicing.address; for the seller from configuration.
type Address struct {
	Name            string // company or person name (buyer BT-44; unused for the seller, see Seller.Name)
	Street          string // street with number (BT-35 / BT-50)
	AdditionalLine1 string // optional (BT-36 / BT-51)
	AdditionalLine2 string // optional (BT-162 / BT-163)
	PostalCode      string // always a string: leading zeros are kept (BT-38 / BT-53)
	City            string // BT-37 / BT-52
	CountryCode     string // ISO 3166-1 alpha-2 (BT-40 / BT-55)
}

// Seller is the issuing company. It is deployment configuration: the lead
// loads it once (config) and copies it into every Document.
type Seller struct {
	Name    string  // legal name (BT-27)
	Address Address // Street, PostalCode, City, CountryCode required; Name unused

	VATID     string // USt-IdNr, e.g. DE123456789 (BT-31); VATID or TaxNumber required
	TaxNumber string // Steuernummer, e.g. 143/123/45678 (BT-32)
	LegalInfo string // optional register details, e.g. "Amtsgericht Berlin HRB 12345" (BT-33)

	ContactName  string // BT-41
	ContactPhone string // BT-42, at least 3 digits
	ContactEmail string // BT-43

	ElectronicAddress       string // BT-34, e.g. rechnung@example.de
	ElectronicAddressScheme string // EAS code of BT-34, e.g. EM

	IBAN          string // BT-84, checked with the ISO 13616 checksum
	BIC           string // optional (BT-86)
	BankName      string // optional, printed on the PDF only
	AccountHolder string // optional (BT-85); defaults to Name on the PDF
}

// ElectronicInvoicing is the customer's electronic_invoicing object. A buyer
// without it gets a PDF only; the XML encoders refuse such documents.
type ElectronicInvoicing struct {
	ElectronicAddress string  // BT-49
	Scheme            string  // EAS code of BT-49 (EM, 0204, 9930 ...), kept as a string
	BuyerReference    string  // BT-10 (Leitweg-ID or the buyer's routing reference)
	Address           Address // Name, Street, PostalCode, City, CountryCode required
}

// Buyer is the invoice recipient. A document without customer (flow 1) has
// no Buyer at all.
type Buyer struct {
	AddressLines []string             // name and address as printed (1–5 lines, ≤ 35 characters)
	Electronic   *ElectronicInvoicing // nil: no electronic invoicing
}

// Name is the buyer's display name: the structured name when present,
// otherwise the first address line.
func (b *Buyer) Name() string {
	if b == nil {
		return ""
	}
	if b.Electronic != nil && strings.TrimSpace(b.Electronic.Address.Name) != "" {
		return b.Electronic.Address.Name
	}
	if len(b.AddressLines) > 0 {
		return b.AddressLines[0]
	}
	return ""
}

// Line is one billable item on the document.
type Line struct {
	BillableItemID string      // BT-126 line id
	Name           string      // local ticket name (BT-153)
	Quantity       int64       // units, usually 1 (BT-129, unit code C62)
	Gross          money.Cents // amount charged to this buyer for the line, VAT included
	RateBP         int64       // VAT rate in basis points: 700 = 7 %
	OrderedAt      time.Time   // order time of the billable item (service time)
	// Split lists every share of a split item in its original order (the
	// first entry is the beneficiary). Exactly one share has Invoiced set:
	// the buyer of this document, whose Amount equals Gross. The other
	// shares are the passive participants. Empty for unsplit items.
	Split []Share
	// Invoice is the standing invoice that already bills this item to the
	// buyer. Only a payment notice for a collection sets it, so that the
	// notice references every invoice it asks to pay (BG-3, BT-83).
	Invoice *Reference `json:",omitempty"`
}

// Share is one entry of a billable item's split.
type Share struct {
	Name     string      // the participant's name (first address line of the customer)
	Amount   money.Cents // the participant's share of the gross amount
	Invoiced bool        // true for the buyer of this document
}

// Passive returns the split shares other than the invoiced one.
func (l Line) Passive() []Share {
	var out []Share
	for _, s := range l.Split {
		if !s.Invoiced {
			out = append(out, s)
		}
	}
	return out
}

// SplitTotal is the full amount of a split item (the sum of all shares).
// Validate refuses a split whose sum leaves int64; on an unvalidated line
// such a sum panics rather than wrapping around.
func (l Line) SplitTotal() money.Cents {
	var t money.Cents
	for _, s := range l.Split {
		var err error
		if t, err = money.Add(t, s.Amount); err != nil {
			panic("invoicedoc.Line.SplitTotal on a line Validate refuses: " + err.Error())
		}
	}
	return t
}

// Reference identifies an earlier invoice (BG-3).
type Reference struct {
	Number    string    // BT-25
	IssueDate time.Time // BT-26
}

// Payment holds what the buyer must do (BG-16, BT-9, BT-20, BT-113).
type Payment struct {
	DueDate time.Time   // BT-9; zero: no due date
	Terms   string      // BT-20; empty: a default German sentence is generated
	Paid    money.Cents // BT-113, already paid amount (0 ≤ Paid ≤ gross total)
}

// Texts are the caller's optional meta fields, unresolved.
type Texts struct {
	Subject     string
	Notes       string
	BeforeTable string // custom_text_before_table
	AfterTable  string // custom_text_after_table
}

// Document is one invoice, cancellation or payment notice.
type Document struct {
	Kind      Kind
	Number    string    // BT-1, from the gap-free series of the environment
	IssueDate time.Time // BT-2, an instant; rendered as the Berlin calendar date
	Test      bool      // test environment: TEST mark on the PDF, test note in the XML
	Seller    Seller
	Buyer     *Buyer // nil: invoice without customer
	Lines     []Line
	Texts     Texts
	Payment   Payment
	// Cancels is the invoice a cancellation cancels (required for
	// KindCancellation), or the invoice a payment notice asks to pay
	// (optional for KindPaymentNotice; a collection has none).
	Cancels *Reference
}

// HasElectronic reports whether the buyer supplied electronic_invoicing, the
// precondition for UBL and CII files.
func (d *Document) HasElectronic() bool { return d.Buyer != nil && d.Buyer.Electronic != nil }

// Preceding are the earlier invoices the document refers to (BG-3, in this
// order): the cancelled or asked-for invoice (Cancels), otherwise the
// distinct invoices of the lines of a collection payment notice, in the
// order of the positions (order time).
func (d *Document) Preceding() []Reference {
	if d.Cancels != nil {
		return []Reference{*d.Cancels}
	}
	var out []Reference
	seen := map[string]bool{}
	for _, p := range d.Positions() {
		for _, r := range p.Invoices {
			if !seen[r.Number] {
				seen[r.Number] = true
				out = append(out, r)
			}
		}
	}
	return out
}
