package xrechnung

import (
	"strconv"
	"time"

	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/money"
)

const (
	nsRSM = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
	nsRAM = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
	nsQDT = "urn:un:unece:uncefact:data:standard:QualifiedDataType:100"
	nsUDT = "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100"
)

// EncodeCII renders d as an XRechnung 3.0 UN/CEFACT CII D16B
// CrossIndustryInvoice (type 380, or 381 for cancellations). The same bytes
// are embedded in the PDF as factur-x.xml. Errors as for EncodeUBL.
func EncodeCII(d *invoicedoc.Document) ([]byte, error) {
	return encode("xrechnung.EncodeCII", d, func(w *writer, p *prepared) {
		w.open("rsm:CrossIndustryInvoice", "xmlns:rsm", nsRSM, "xmlns:ram", nsRAM, "xmlns:qdt", nsQDT, "xmlns:udt", nsUDT)
		w.open("rsm:ExchangedDocumentContext")
		w.open("ram:BusinessProcessSpecifiedDocumentContextParameter")
		w.leaf("ram:ID", ProfileID)
		w.close()
		w.open("ram:GuidelineSpecifiedDocumentContextParameter")
		w.leaf("ram:ID", p.specID)
		w.close()
		w.close()

		w.open("rsm:ExchangedDocument")
		w.leaf("ram:ID", d.Number)
		w.leaf("ram:TypeCode", d.Kind.TypeCode())
		ciiDateTime(w, "ram:IssueDateTime", invoicedoc.CalendarDate(d.IssueDate))
		for _, n := range p.notes {
			w.open("ram:IncludedNote")
			w.leaf("ram:Content", n)
			w.close()
		}
		w.close()

		w.open("rsm:SupplyChainTradeTransaction")
		for i, pos := range p.positions {
			ciiLine(w, pos, lineNote(d, pos), d.Kind == invoicedoc.KindPaymentNotice, p.totals.Positions[i].Net)
		}
		w.open("ram:ApplicableHeaderTradeAgreement")
		w.leaf("ram:BuyerReference", p.e.BuyerReference)
		ciiSeller(w, &d.Seller)
		ciiBuyer(w, p.e)
		w.close()

		start, end := p.period.Dates()
		if p.period.Kind == invoicedoc.PeriodPoint {
			w.open("ram:ApplicableHeaderTradeDelivery")
			w.open("ram:ActualDeliverySupplyChainEvent")
			ciiDateTime(w, "ram:OccurrenceDateTime", start)
			w.close()
			w.close()
		} else {
			// Required by the XSD even without content; exempt from R008.
			w.empty("ram:ApplicableHeaderTradeDelivery")
		}

		t := p.totals
		w.open("ram:ApplicableHeaderTradeSettlement")
		w.leaf("ram:PaymentReference", d.PaymentReference())
		w.leaf("ram:InvoiceCurrencyCode", invoicedoc.Currency)
		w.open("ram:SpecifiedTradeSettlementPaymentMeans")
		w.leaf("ram:TypeCode", PaymentMeansCode)
		w.open("ram:PayeePartyCreditorFinancialAccount")
		w.leaf("ram:IBANID", p.iban)
		w.opt("ram:AccountName", d.Seller.AccountHolder)
		w.close()
		if clean(d.Seller.BIC) != "" {
			w.open("ram:PayeeSpecifiedCreditorFinancialInstitution")
			w.leaf("ram:BICID", d.Seller.BIC)
			w.close()
		}
		w.close()
		for _, g := range t.Groups {
			w.open("ram:ApplicableTradeTax")
			w.leaf("ram:CalculatedAmount", g.VAT.Decimal())
			w.leaf("ram:TypeCode", "VAT")
			w.leaf("ram:BasisAmount", g.Net.Decimal())
			w.leaf("ram:CategoryCode", "S")
			w.leaf("ram:RateApplicablePercent", percent(g.RateBP))
			w.close()
		}
		if p.period.Kind != invoicedoc.PeriodPoint {
			w.open("ram:BillingSpecifiedPeriod")
			ciiDateTime(w, "ram:StartDateTime", start)
			ciiDateTime(w, "ram:EndDateTime", end)
			w.close()
		}
		w.open("ram:SpecifiedTradePaymentTerms")
		w.leaf("ram:Description", p.terms)
		if p.hasDue {
			ciiDateTime(w, "ram:DueDateDateTime", invoicedoc.CalendarDate(p.dueDate))
		}
		w.close()
		w.open("ram:SpecifiedTradeSettlementHeaderMonetarySummation")
		w.leaf("ram:LineTotalAmount", t.Net.Decimal())
		w.leaf("ram:TaxBasisTotalAmount", t.Net.Decimal())
		w.leaf("ram:TaxTotalAmount", t.VAT.Decimal(), "currencyID", invoicedoc.Currency)
		w.leaf("ram:GrandTotalAmount", t.Gross.Decimal())
		if t.Paid != 0 {
			w.leaf("ram:TotalPrepaidAmount", t.Paid.Decimal())
		}
		w.leaf("ram:DuePayableAmount", t.Payable.Decimal())
		w.close()
		// CII D16B allows one header reference (BG-3); a collection payment
		// notice for several invoices names the others on their lines.
		if refs := d.Preceding(); len(refs) > 0 {
			ciiReference(w, refs[0])
		}
		w.close() // ApplicableHeaderTradeSettlement
		w.close() // SupplyChainTradeTransaction
		w.close()
	})
}

// ciiDateTime writes name/udt:DateTimeString format 102 for a calendar
// date given as midnight UTC.
func ciiDateTime(w *writer, name string, day time.Time) {
	w.open(name)
	w.leaf("udt:DateTimeString", day.Format("20060102"), "format", "102")
	w.close()
}

func ciiAddress(w *writer, a invoicedoc.Address) {
	w.open("ram:PostalTradeAddress")
	w.leaf("ram:PostcodeCode", a.PostalCode)
	w.leaf("ram:LineOne", a.Street)
	w.opt("ram:LineTwo", a.AdditionalLine1)
	w.opt("ram:LineThree", a.AdditionalLine2)
	w.leaf("ram:CityName", a.City)
	w.leaf("ram:CountryID", a.CountryCode)
	w.close()
}

func ciiSeller(w *writer, s *invoicedoc.Seller) {
	w.open("ram:SellerTradeParty")
	w.leaf("ram:Name", s.Name)
	w.opt("ram:Description", s.LegalInfo)
	w.open("ram:DefinedTradeContact")
	w.leaf("ram:PersonName", s.ContactName)
	w.open("ram:TelephoneUniversalCommunication")
	w.leaf("ram:CompleteNumber", s.ContactPhone)
	w.close()
	w.open("ram:EmailURIUniversalCommunication")
	w.leaf("ram:URIID", s.ContactEmail)
	w.close()
	w.close()
	ciiAddress(w, s.Address)
	w.open("ram:URIUniversalCommunication")
	w.leaf("ram:URIID", s.ElectronicAddress, "schemeID", s.ElectronicAddressScheme)
	w.close()
	for _, tx := range [][2]string{{s.VATID, "VA"}, {s.TaxNumber, "FC"}} {
		if clean(tx[0]) == "" {
			continue
		}
		w.open("ram:SpecifiedTaxRegistration")
		w.leaf("ram:ID", tx[0], "schemeID", tx[1])
		w.close()
	}
	w.close()
}

func ciiBuyer(w *writer, e *invoicedoc.ElectronicInvoicing) {
	w.open("ram:BuyerTradeParty")
	w.leaf("ram:Name", e.Address.Name)
	ciiAddress(w, e.Address)
	w.open("ram:URIUniversalCommunication")
	w.leaf("ram:URIID", e.ElectronicAddress, "schemeID", e.Scheme)
	w.close()
	w.close()
}

// ciiReference writes an InvoiceReferencedDocument (BT-25, BT-26).
func ciiReference(w *writer, r invoicedoc.Reference) {
	w.open("ram:InvoiceReferencedDocument")
	w.leaf("ram:IssuerAssignedID", r.Number)
	w.open("ram:FormattedIssueDateTime")
	w.leaf("qdt:DateTimeString", ciiDate(r.IssueDate), "format", "102")
	w.close()
	w.close()
}

func ciiLine(w *writer, l invoicedoc.Position, note string, notice bool, net money.Cents) {
	w.open("ram:IncludedSupplyChainTradeLineItem")
	w.open("ram:AssociatedDocumentLineDocument")
	w.leaf("ram:LineID", strconv.Itoa(l.Number))
	w.open("ram:IncludedNote")
	w.leaf("ram:Content", note)
	w.close()
	w.close()
	w.open("ram:SpecifiedTradeProduct")
	w.leaf("ram:Name", l.Name)
	w.close()
	w.open("ram:SpecifiedLineTradeAgreement")
	w.open("ram:NetPriceProductTradePrice")
	w.leaf("ram:ChargeAmount", unitPrice(net, l.Quantity))
	w.close()
	w.close()
	w.open("ram:SpecifiedLineTradeDelivery")
	w.leaf("ram:BilledQuantity", quantity(l.Quantity), "unitCode", UnitCode)
	w.close()
	w.open("ram:SpecifiedLineTradeSettlement")
	w.open("ram:ApplicableTradeTax")
	w.leaf("ram:TypeCode", "VAT")
	w.leaf("ram:CategoryCode", "S")
	w.leaf("ram:RateApplicablePercent", percent(l.RateBP))
	w.close()
	w.open("ram:SpecifiedTradeSettlementLineMonetarySummation")
	w.leaf("ram:LineTotalAmount", net.Decimal())
	w.close()
	if notice && len(l.Invoices) == 1 { // D16B: at most one per line
		ciiReference(w, l.Invoices[0])
	}
	w.close()
	w.close()
}
