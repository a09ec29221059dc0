package xrechnung

import (
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/money"
	"strconv"
)

const (
	nsUBLInvoice    = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
	nsUBLCreditNote = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
	nsCAC           = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
	nsCBC           = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
)

// EncodeUBL renders d as an XRechnung 3.0 UBL 2.1 document: an Invoice for
// invoices and payment notices, a CreditNote for cancellations. It fails
// with an apperr Unprocessable error when the buyer has no electronic
// invoicing details or the document breaks a rule (see Document.Validate).
func EncodeUBL(d *invoicedoc.Document) ([]byte, error) {
	return encode("xrechnung.EncodeUBL", d, func(w *writer, p *prepared) {
		credit := d.Kind == invoicedoc.KindCancellation
		root, ns, typeEl, lineEl, qtyEl := "Invoice", nsUBLInvoice, "cbc:InvoiceTypeCode", "cac:InvoiceLine", "cbc:InvoicedQuantity"
		if credit {
			root, ns, typeEl, lineEl, qtyEl = "CreditNote", nsUBLCreditNote, "cbc:CreditNoteTypeCode", "cac:CreditNoteLine", "cbc:CreditedQuantity"
		}
		w.open(root, "xmlns", ns, "xmlns:cac", nsCAC, "xmlns:cbc", nsCBC)
		w.leaf("cbc:CustomizationID", p.specID)
		w.leaf("cbc:ProfileID", ProfileID)
		w.leaf("cbc:ID", d.Number)
		w.leaf("cbc:IssueDate", ublDate(d.IssueDate))
		if p.hasDue && !credit {
			w.leaf("cbc:DueDate", ublDate(p.dueDate))
		}
		w.leaf(typeEl, d.Kind.TypeCode())
		for _, n := range p.notes {
			w.leaf("cbc:Note", n)
		}
		w.leaf("cbc:DocumentCurrencyCode", invoicedoc.Currency)
		w.leaf("cbc:BuyerReference", p.e.BuyerReference)
		start, end := p.period.Dates()
		if p.period.Kind != invoicedoc.PeriodPoint {
			w.open("cac:InvoicePeriod")
			w.leaf("cbc:StartDate", start.Format("2006-01-02"))
			w.leaf("cbc:EndDate", end.Format("2006-01-02"))
			w.close()
		}
		for _, r := range d.Preceding() {
			w.open("cac:BillingReference")
			w.open("cac:InvoiceDocumentReference")
			w.leaf("cbc:ID", r.Number)
			w.leaf("cbc:IssueDate", ublDate(r.IssueDate))
			w.close()
			w.close()
		}
		ublSeller(w, &d.Seller)
		ublBuyer(w, p.e)
		if p.period.Kind == invoicedoc.PeriodPoint {
			w.open("cac:Delivery")
			w.leaf("cbc:ActualDeliveryDate", start.Format("2006-01-02"))
			w.close()
		}
		w.open("cac:PaymentMeans")
		w.leaf("cbc:PaymentMeansCode", PaymentMeansCode)
		w.leaf("cbc:PaymentID", d.PaymentReference())
		w.open("cac:PayeeFinancialAccount")
		w.leaf("cbc:ID", p.iban)
		w.opt("cbc:Name", d.Seller.AccountHolder)
		if clean(d.Seller.BIC) != "" {
			w.open("cac:FinancialInstitutionBranch")
			w.leaf("cbc:ID", d.Seller.BIC)
			w.close()
		}
		w.close()
		w.close()
		w.open("cac:PaymentTerms")
		w.leaf("cbc:Note", p.terms)
		w.close()
		cur := []string{"currencyID", invoicedoc.Currency}
		t := p.totals
		w.open("cac:TaxTotal")
		w.leaf("cbc:TaxAmount", t.VAT.Decimal(), cur...)
		for _, g := range t.Groups {
			w.open("cac:TaxSubtotal")
			w.leaf("cbc:TaxableAmount", g.Net.Decimal(), cur...)
			w.leaf("cbc:TaxAmount", g.VAT.Decimal(), cur...)
			ublTaxCategory(w, "cac:TaxCategory", g.RateBP)
			w.close()
		}
		w.close()
		w.open("cac:LegalMonetaryTotal")
		w.leaf("cbc:LineExtensionAmount", t.Net.Decimal(), cur...)
		w.leaf("cbc:TaxExclusiveAmount", t.Net.Decimal(), cur...)
		w.leaf("cbc:TaxInclusiveAmount", t.Gross.Decimal(), cur...)
		if t.Paid != 0 {
			w.leaf("cbc:PrepaidAmount", t.Paid.Decimal(), cur...)
		}
		w.leaf("cbc:PayableAmount", t.Payable.Decimal(), cur...)
		w.close()
		for i, pos := range p.positions {
			ublLine(w, lineEl, qtyEl, pos, lineNote(d, pos), t.Positions[i].Net)
		}
		w.close()
	})
}

func ublAddress(w *writer, a invoicedoc.Address) {
	w.open("cac:PostalAddress")
	w.leaf("cbc:StreetName", a.Street)
	w.opt("cbc:AdditionalStreetName", a.AdditionalLine1)
	w.leaf("cbc:CityName", a.City)
	w.leaf("cbc:PostalZone", a.PostalCode)
	if clean(a.AdditionalLine2) != "" {
		w.open("cac:AddressLine")
		w.leaf("cbc:Line", a.AdditionalLine2)
		w.close()
	}
	w.open("cac:Country")
	w.leaf("cbc:IdentificationCode", a.CountryCode)
	w.close()
	w.close()
}

func ublSeller(w *writer, s *invoicedoc.Seller) {
	w.open("cac:AccountingSupplierParty")
	w.open("cac:Party")
	w.leaf("cbc:EndpointID", s.ElectronicAddress, "schemeID", s.ElectronicAddressScheme)
	ublAddress(w, s.Address)
	for _, tx := range [][2]string{{s.VATID, "VAT"}, {s.TaxNumber, "FC"}} {
		if clean(tx[0]) == "" {
			continue
		}
		w.open("cac:PartyTaxScheme")
		w.leaf("cbc:CompanyID", tx[0])
		w.open("cac:TaxScheme")
		w.leaf("cbc:ID", tx[1])
		w.close()
		w.close()
	}
	w.open("cac:PartyLegalEntity")
	w.leaf("cbc:RegistrationName", s.Name)
	w.opt("cbc:CompanyLegalForm", s.LegalInfo)
	w.close()
	w.open("cac:Contact")
	w.leaf("cbc:Name", s.ContactName)
	w.leaf("cbc:Telephone", s.ContactPhone)
	w.leaf("cbc:ElectronicMail", s.ContactEmail)
	w.close()
	w.close()
	w.close()
}

func ublBuyer(w *writer, e *invoicedoc.ElectronicInvoicing) {
	w.open("cac:AccountingCustomerParty")
	w.open("cac:Party")
	w.leaf("cbc:EndpointID", e.ElectronicAddress, "schemeID", e.Scheme)
	ublAddress(w, e.Address)
	w.open("cac:PartyLegalEntity")
	w.leaf("cbc:RegistrationName", e.Address.Name)
	w.close()
	w.close()
	w.close()
}

func ublTaxCategory(w *writer, name string, rateBP int64) {
	w.open(name)
	w.leaf("cbc:ID", "S")
	w.leaf("cbc:Percent", percent(rateBP))
	w.open("cac:TaxScheme")
	w.leaf("cbc:ID", "VAT")
	w.close()
	w.close()
}

func ublLine(w *writer, lineEl, qtyEl string, l invoicedoc.Position, note string, net money.Cents) {
	cur := []string{"currencyID", invoicedoc.Currency}
	w.open(lineEl)
	w.leaf("cbc:ID", strconv.Itoa(l.Number))
	w.leaf("cbc:Note", note)
	w.leaf(qtyEl, quantity(l.Quantity), "unitCode", UnitCode)
	w.leaf("cbc:LineExtensionAmount", net.Decimal(), cur...)
	w.open("cac:Item")
	w.leaf("cbc:Name", l.Name)
	ublTaxCategory(w, "cac:ClassifiedTaxCategory", l.RateBP)
	w.close()
	w.open("cac:Price")
	w.leaf("cbc:PriceAmount", unitPrice(net, l.Quantity), cur...)
	w.close()
	w.close()
}
