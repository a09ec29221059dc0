package invoices

import (
	"sort"

	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/money"
)

// The answer shapes of invoicing (api/openapi.yaml); the customer's is
// package customers'.

type shareJSON struct {
	CustomerID    string      `json:"customer_id"`
	AmountInCents money.Cents `json:"amount_in_cents"`
}

// sharesView keeps an absent split absent (null).
func sharesView(in []invoicing.Share) []shareJSON {
	return kit.Each(in, func(s invoicing.Share) shareJSON { return shareJSON(s) })
}

type invoicedForJSON struct {
	CustomerID *string `json:"customer_id"`
	InvoiceID  string  `json:"invoice_id"`
}

// BillableItemJSON is a BillableItem.
type BillableItemJSON struct {
	ID                    string            `json:"id"`
	Description           string            `json:"description"`
	ProductID             string            `json:"product_id"`
	AmountInCents         money.Cents       `json:"amount_in_cents"`
	Currency              string            `json:"currency"`
	VATRateBP             int64             `json:"vat_rate_bp"`
	OrderedAt             string            `json:"ordered_at"`
	CouponID              *string           `json:"coupon_id"`
	SubscriptionID        *string           `json:"subscription_id"`
	SubscriptionCycleID   *string           `json:"subscription_cycle_id"`
	CustomerID            *string           `json:"customer_id"`
	Split                 []shareJSON       `json:"split"`
	BillablableCollection *string           `json:"billablable_collection_id"`
	InvoicedFor           []invoicedForJSON `json:"invoiced_for"`
	Environment           string            `json:"environment"`
}

// BillableItemResponse is a BillableItem.
func BillableItemResponse(v BillableItemView) BillableItemJSON {
	out := BillableItemJSON{ID: v.ID, Description: v.Description, ProductID: v.ProductID, AmountInCents: v.AmountCents,
		Currency: v.Currency, VATRateBP: v.VATRateBP, OrderedAt: clock.Timestamp(v.OrderedAt), CouponID: v.CouponID,
		SubscriptionID: v.SubscriptionID, SubscriptionCycleID: v.CycleID, CustomerID: v.CustomerID, Split: sharesView(v.Split),
		BillablableCollection: v.CollectionID, InvoicedFor: []invoicedForJSON{}, Environment: string(v.Environment)}
	// Deterministic order: by customer key.
	keys := make([]string, 0, len(v.Invoiced))
	for k := range v.Invoiced {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := invoicedForJSON{InvoiceID: v.Invoiced[k]}
		if k != "" {
			k := k
			e.CustomerID = &k
		}
		out.InvoicedFor = append(out.InvoicedFor, e)
	}
	return out
}

type participantJSON struct {
	Name          string      `json:"name"`
	AmountInCents money.Cents `json:"amount_in_cents"`
	Beneficiary   bool        `json:"beneficiary"`
}

type invoiceLineJSON struct {
	BillableItemID      string            `json:"billable_item_id"`
	Position            int               `json:"position"`
	Description         string            `json:"description"`
	Quantity            int64             `json:"quantity"`
	OrderedAt           string            `json:"ordered_at"`
	VATRateBP           int64             `json:"vat_rate_bp"`
	GrossAmountInCents  money.Cents       `json:"gross_amount_in_cents"`
	NetAmountInCents    money.Cents       `json:"net_amount_in_cents"`
	VATAmountInCents    money.Cents       `json:"vat_amount_in_cents"`
	ItemAmountInCents   money.Cents       `json:"item_amount_in_cents"`
	PassiveParticipants []participantJSON `json:"passive_participants"`
	InvoicedBy          *string           `json:"invoiced_by_invoice_number"`
}

type vatGroupJSON struct {
	VATRateBP          int64       `json:"vat_rate_bp"`
	NetAmountInCents   money.Cents `json:"net_amount_in_cents"`
	VATAmountInCents   money.Cents `json:"vat_amount_in_cents"`
	GrossAmountInCents money.Cents `json:"gross_amount_in_cents"`
}

type totalsJSON struct {
	NetAmountInCents     money.Cents    `json:"net_amount_in_cents"`
	VATAmountInCents     money.Cents    `json:"vat_amount_in_cents"`
	GrossAmountInCents   money.Cents    `json:"gross_amount_in_cents"`
	PaidAmountInCents    money.Cents    `json:"paid_amount_in_cents"`
	PayableAmountInCents money.Cents    `json:"payable_amount_in_cents"`
	PayableAmountText    string         `json:"payable_amount_text"`
	VATBreakdown         []vatGroupJSON `json:"vat_breakdown"`
}

type servicePeriodJSON struct {
	Label string `json:"label"`
	Text  string `json:"text"`
	Start string `json:"start"`
	End   string `json:"end"`
}

// InvoiceJSON is an invoice, cancellation or payment notice.
type InvoiceJSON struct {
	InvoiceID            string            `json:"invoice_id"`
	InvoiceNumber        string            `json:"invoice_number"`
	Kind                 string            `json:"kind"`
	TypeCode             string            `json:"type_code"`
	Environment          string            `json:"environment"`
	InvoicePDFURL        string            `json:"invoice_pdf_url"`
	InvoiceXRechnungURL  string            `json:"invoice_xrechnung_url"`
	InvoiceCIIURL        string            `json:"invoice_cii_url"`
	ElectronicInvoicing  bool              `json:"electronic_invoicing"`
	CustomerID           *string           `json:"customer_id"`
	CollectionID         *string           `json:"billablable_collection_id"`
	RefersToInvoiceID    *string           `json:"refers_to_invoice_id"`
	RefersToNumber       *string           `json:"refers_to_invoice_number"`
	CancelledByInvoiceID *string           `json:"cancelled_by_invoice_id"`
	IssueDate            string            `json:"issue_date"`
	DueDate              *string           `json:"due_date"`
	CreatedAt            string            `json:"created_at"`
	Currency             string            `json:"currency"`
	Recipient            []string          `json:"recipient_address_lines"`
	ServicePeriod        servicePeriodJSON `json:"service_period"`
	Lines                []invoiceLineJSON `json:"lines"`
	Totals               totalsJSON        `json:"totals"`
	Subject              *string           `json:"subject"`
	Notes                *string           `json:"notes"`
	CustomTextBefore     *string           `json:"custom_text_before_table"`
	CustomTextAfter      *string           `json:"custom_text_after_table"`
	PaymentTerms         string            `json:"payment_terms"`
}

func optText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// invoiceView is the JSON of an invoice, cancellation or payment notice.
func invoiceView(inv invoicing.Invoice, base string) InvoiceJSON {
	d := &inv.Document
	t := d.Totals()
	prefix := base + "/v9/ticketing/invoices/" + inv.ID + "/" + inv.Identifier
	out := InvoiceJSON{InvoiceID: inv.ID, InvoiceNumber: inv.Number, Kind: inv.Kind.String(), TypeCode: inv.Kind.TypeCode(),
		Environment: string(inv.Environment), InvoicePDFURL: prefix + ".pdf", InvoiceXRechnungURL: prefix + ".ubl.xml",
		InvoiceCIIURL: prefix + ".cii.xml", ElectronicInvoicing: inv.Electronic, CustomerID: inv.CustomerID,
		CollectionID: inv.CollectionID, RefersToInvoiceID: inv.RefersTo, CancelledByInvoiceID: inv.CancelledBy,
		IssueDate: invoicedoc.CalendarDate(d.IssueDate).Format("2006-01-02"), CreatedAt: clock.Timestamp(inv.CreatedAt),
		Currency: invoicedoc.Currency, Recipient: []string{}, Lines: []invoiceLineJSON{}, PaymentTerms: d.PaymentTerms()}
	if d.Cancels != nil {
		n := d.Cancels.Number
		out.RefersToNumber = &n
	}
	if !d.Payment.DueDate.IsZero() {
		s := invoicedoc.CalendarDate(d.Payment.DueDate).Format("2006-01-02")
		out.DueDate = &s
	}
	if d.Buyer != nil {
		out.Recipient = d.Buyer.AddressLines
	}
	if p, ok := d.ServicePeriod(); ok {
		out.ServicePeriod = servicePeriodJSON{Label: p.Label(), Text: p.Text(), Start: clock.Timestamp(p.First), End: clock.Timestamp(p.Last)}
	}
	position := make([]int, len(d.Lines))
	for _, p := range d.Positions() {
		for _, i := range p.Items {
			position[i] = p.Number
		}
	}
	for i, l := range d.Lines {
		lj := invoiceLineJSON{BillableItemID: l.BillableItemID, Position: position[i], Description: l.Name, Quantity: l.Quantity,
			OrderedAt: clock.Timestamp(l.OrderedAt), VATRateBP: l.RateBP, GrossAmountInCents: l.Gross,
			NetAmountInCents: t.Lines[i].Net, VATAmountInCents: t.Lines[i].VAT,
			ItemAmountInCents: l.Gross, PassiveParticipants: []participantJSON{}}
		if len(l.Split) > 0 {
			lj.ItemAmountInCents = l.SplitTotal()
		}
		if l.Invoice != nil {
			lj.InvoicedBy = &l.Invoice.Number
		}
		for j, s := range l.Split {
			if !s.Invoiced {
				lj.PassiveParticipants = append(lj.PassiveParticipants, participantJSON{Name: s.Name, AmountInCents: s.Amount, Beneficiary: j == 0})
			}
		}
		out.Lines = append(out.Lines, lj)
	}
	out.Totals = totalsJSON{NetAmountInCents: t.Net, VATAmountInCents: t.VAT, GrossAmountInCents: t.Gross,
		PaidAmountInCents: t.Paid, PayableAmountInCents: t.Payable, PayableAmountText: t.Payable.German(),
		VATBreakdown: []vatGroupJSON{}}
	for _, g := range t.Groups {
		out.Totals.VATBreakdown = append(out.Totals.VATBreakdown, vatGroupJSON{VATRateBP: g.RateBP,
			NetAmountInCents: g.Net, VATAmountInCents: g.VAT, GrossAmountInCents: g.Gross})
	}
	rt := d.ResolvedTexts()
	out.Subject, out.Notes = optText(rt.Subject), optText(rt.Notes)
	out.CustomTextBefore, out.CustomTextAfter = optText(rt.BeforeTable), optText(rt.AfterTable)
	return out
}

// Response is an invoice, cancellation or payment notice, with its
// download links under the base URL.
func (s *Service) Response(inv invoicing.Invoice) InvoiceJSON {
	return invoiceView(inv, s.links.Base())
}
