package xrechnung

import (
	"slices"
	"testing"

	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/money"
)

// view is the business terms read back from either syntax, so one set of
// rule checks covers UBL and CII.
type view struct {
	syntax, root                                string
	specID, profileID, number, typeCode         string
	issueDate, dueDate                          string // YYYYMMDD
	notes                                       []string
	buyerRef                                    string
	sellerName, sellerStreet, sellerCity        string
	sellerPost, sellerCountry, sellerVAT        string
	sellerTaxNo                                 string
	sellerEndpoint, sellerScheme                string
	contactName, contactPhone, contactEmail     string
	buyerName, buyerStreet, buyerCity           string
	buyerPost, buyerCountry                     string
	buyerEndpoint, buyerScheme                  string
	paymentCodes                                []string
	iban, terms, paymentRef                     string
	deliveryDate, periodStart, periodEnd        string // YYYYMMDD
	refNumber, refDate                          string
	refNumbers                                  []string // every BG-3 number (CII: header, then lines)
	groups                                      []group
	lineTotal, taxExcl, vatTotal, taxIncl, paid money.Cents
	payable                                     money.Cents
	lines                                       []vline
	amounts                                     []string // every monetary amount except unit prices
	tree                                        *node
}

type group struct {
	taxable, vat      money.Cents
	category, percent string
}

type vline struct {
	id, name, qty, unit, price, category, percent, note string
	net                                                 money.Cents
}

func opt(n *node, path string) string {
	if got := n.all(path); len(got) == 1 {
		return got[0].text
	}
	return ""
}

func ymd(s string) string {
	if len(s) == 10 {
		return s[:4] + s[5:7] + s[8:]
	}
	return s
}

func ublView(t *testing.T, doc []byte) *view {
	t.Helper()
	r := parse(t, doc)
	v := &view{syntax: "ubl", root: r.name, tree: r}
	v.specID, v.profileID = r.val(t, "CustomizationID"), r.val(t, "ProfileID")
	v.number, v.issueDate = r.val(t, "ID"), ymd(r.val(t, "IssueDate"))
	v.dueDate = ymd(opt(r, "DueDate"))
	v.typeCode = opt(r, "InvoiceTypeCode") + opt(r, "CreditNoteTypeCode")
	for _, n := range r.all("Note") {
		v.notes = append(v.notes, n.text)
	}
	v.buyerRef = r.val(t, "BuyerReference")
	s := r.one(t, "AccountingSupplierParty/Party")
	v.sellerName = s.val(t, "PartyLegalEntity/RegistrationName")
	v.sellerStreet, v.sellerCity = s.val(t, "PostalAddress/StreetName"), s.val(t, "PostalAddress/CityName")
	v.sellerPost, v.sellerCountry = s.val(t, "PostalAddress/PostalZone"), s.val(t, "PostalAddress/Country/IdentificationCode")
	for _, ts := range s.all("PartyTaxScheme") {
		if ts.val(t, "TaxScheme/ID") == "VAT" {
			v.sellerVAT = ts.val(t, "CompanyID")
		} else {
			v.sellerTaxNo = ts.val(t, "CompanyID")
		}
	}
	ep := s.one(t, "EndpointID")
	v.sellerEndpoint, v.sellerScheme = ep.text, ep.attrs["schemeID"]
	v.contactName, v.contactPhone, v.contactEmail = s.val(t, "Contact/Name"), s.val(t, "Contact/Telephone"), s.val(t, "Contact/ElectronicMail")
	b := r.one(t, "AccountingCustomerParty/Party")
	v.buyerName = b.val(t, "PartyLegalEntity/RegistrationName")
	v.buyerStreet, v.buyerCity = b.val(t, "PostalAddress/StreetName"), b.val(t, "PostalAddress/CityName")
	v.buyerPost, v.buyerCountry = b.val(t, "PostalAddress/PostalZone"), b.val(t, "PostalAddress/Country/IdentificationCode")
	ep = b.one(t, "EndpointID")
	v.buyerEndpoint, v.buyerScheme = ep.text, ep.attrs["schemeID"]
	for _, pm := range r.all("PaymentMeans") {
		v.paymentCodes = append(v.paymentCodes, pm.val(t, "PaymentMeansCode"))
		v.iban = opt(pm, "PayeeFinancialAccount/ID")
		v.paymentRef = opt(pm, "PaymentID")
	}
	v.terms = opt(r, "PaymentTerms/Note")
	v.deliveryDate = ymd(opt(r, "Delivery/ActualDeliveryDate"))
	v.periodStart, v.periodEnd = ymd(opt(r, "InvoicePeriod/StartDate")), ymd(opt(r, "InvoicePeriod/EndDate"))
	for i, ref := range r.all("BillingReference/InvoiceDocumentReference") {
		v.refNumbers = append(v.refNumbers, ref.val(t, "ID"))
		if i == 0 {
			v.refNumber, v.refDate = ref.val(t, "ID"), ymd(ref.val(t, "IssueDate"))
		}
	}
	tt := r.one(t, "TaxTotal")
	v.vatTotal = cents(t, tt.val(t, "TaxAmount"))
	for _, st := range tt.all("TaxSubtotal") {
		v.groups = append(v.groups, group{taxable: cents(t, st.val(t, "TaxableAmount")), vat: cents(t, st.val(t, "TaxAmount")),
			category: st.val(t, "TaxCategory/ID"), percent: opt(st, "TaxCategory/Percent")})
	}
	m := r.one(t, "LegalMonetaryTotal")
	v.lineTotal, v.taxExcl = cents(t, m.val(t, "LineExtensionAmount")), cents(t, m.val(t, "TaxExclusiveAmount"))
	v.taxIncl, v.payable = cents(t, m.val(t, "TaxInclusiveAmount")), cents(t, m.val(t, "PayableAmount"))
	if p := opt(m, "PrepaidAmount"); p != "" {
		v.paid = cents(t, p)
	}
	for _, l := range append(r.all("InvoiceLine"), r.all("CreditNoteLine")...) {
		q := append(l.all("InvoicedQuantity"), l.all("CreditedQuantity")...)
		if len(q) != 1 {
			t.Fatalf("line without quantity")
		}
		v.lines = append(v.lines, vline{id: l.val(t, "ID"), name: l.val(t, "Item/Name"), qty: q[0].text, unit: q[0].attrs["unitCode"],
			price: l.val(t, "Price/PriceAmount"), category: l.val(t, "Item/ClassifiedTaxCategory/ID"),
			percent: opt(l, "Item/ClassifiedTaxCategory/Percent"), note: opt(l, "Note"), net: cents(t, l.val(t, "LineExtensionAmount"))})
	}
	r.walk(func(n *node) {
		if _, ok := n.attrs["currencyID"]; ok && n.name != "PriceAmount" {
			v.amounts = append(v.amounts, n.text)
		}
	})
	return v
}

func ciiView(t *testing.T, doc []byte) *view {
	t.Helper()
	r := parse(t, doc)
	v := &view{syntax: "cii", root: r.name, tree: r}
	v.specID = r.val(t, "ExchangedDocumentContext/GuidelineSpecifiedDocumentContextParameter/ID")
	v.profileID = r.val(t, "ExchangedDocumentContext/BusinessProcessSpecifiedDocumentContextParameter/ID")
	ed := r.one(t, "ExchangedDocument")
	v.number, v.typeCode = ed.val(t, "ID"), ed.val(t, "TypeCode")
	v.issueDate = ed.val(t, "IssueDateTime/DateTimeString")
	for _, n := range ed.all("IncludedNote/Content") {
		v.notes = append(v.notes, n.text)
	}
	tx := r.one(t, "SupplyChainTradeTransaction")
	ag := tx.one(t, "ApplicableHeaderTradeAgreement")
	v.buyerRef = ag.val(t, "BuyerReference")
	s := ag.one(t, "SellerTradeParty")
	v.sellerName = s.val(t, "Name")
	v.sellerStreet, v.sellerCity = s.val(t, "PostalTradeAddress/LineOne"), s.val(t, "PostalTradeAddress/CityName")
	v.sellerPost, v.sellerCountry = s.val(t, "PostalTradeAddress/PostcodeCode"), s.val(t, "PostalTradeAddress/CountryID")
	for _, reg := range s.all("SpecifiedTaxRegistration/ID") {
		if reg.attrs["schemeID"] == "VA" {
			v.sellerVAT = reg.text
		} else if reg.attrs["schemeID"] == "FC" {
			v.sellerTaxNo = reg.text
		}
	}
	ep := s.one(t, "URIUniversalCommunication/URIID")
	v.sellerEndpoint, v.sellerScheme = ep.text, ep.attrs["schemeID"]
	c := s.one(t, "DefinedTradeContact")
	v.contactName, v.contactPhone = c.val(t, "PersonName"), c.val(t, "TelephoneUniversalCommunication/CompleteNumber")
	v.contactEmail = c.val(t, "EmailURIUniversalCommunication/URIID")
	b := ag.one(t, "BuyerTradeParty")
	v.buyerName = b.val(t, "Name")
	v.buyerStreet, v.buyerCity = b.val(t, "PostalTradeAddress/LineOne"), b.val(t, "PostalTradeAddress/CityName")
	v.buyerPost, v.buyerCountry = b.val(t, "PostalTradeAddress/PostcodeCode"), b.val(t, "PostalTradeAddress/CountryID")
	ep = b.one(t, "URIUniversalCommunication/URIID")
	v.buyerEndpoint, v.buyerScheme = ep.text, ep.attrs["schemeID"]
	del := tx.one(t, "ApplicableHeaderTradeDelivery")
	v.deliveryDate = opt(del, "ActualDeliverySupplyChainEvent/OccurrenceDateTime/DateTimeString")
	st := tx.one(t, "ApplicableHeaderTradeSettlement")
	for _, pm := range st.all("SpecifiedTradeSettlementPaymentMeans") {
		v.paymentCodes = append(v.paymentCodes, pm.val(t, "TypeCode"))
		v.iban = opt(pm, "PayeePartyCreditorFinancialAccount/IBANID")
		v.paymentRef = opt(st, "PaymentReference")
	}
	v.terms = opt(st, "SpecifiedTradePaymentTerms/Description")
	v.dueDate = opt(st, "SpecifiedTradePaymentTerms/DueDateDateTime/DateTimeString")
	v.periodStart = opt(st, "BillingSpecifiedPeriod/StartDateTime/DateTimeString")
	v.periodEnd = opt(st, "BillingSpecifiedPeriod/EndDateTime/DateTimeString")
	v.refNumber = opt(st, "InvoiceReferencedDocument/IssuerAssignedID")
	v.refDate = opt(st, "InvoiceReferencedDocument/FormattedIssueDateTime/DateTimeString")
	if v.refNumber != "" {
		v.refNumbers = append(v.refNumbers, v.refNumber)
	}
	for _, l := range tx.all("IncludedSupplyChainTradeLineItem") {
		if n := opt(l, "SpecifiedLineTradeSettlement/InvoiceReferencedDocument/IssuerAssignedID"); n != "" && !slices.Contains(v.refNumbers, n) {
			v.refNumbers = append(v.refNumbers, n)
		}
	}
	for _, g := range st.all("ApplicableTradeTax") {
		v.groups = append(v.groups, group{taxable: cents(t, g.val(t, "BasisAmount")), vat: cents(t, g.val(t, "CalculatedAmount")),
			category: g.val(t, "CategoryCode"), percent: opt(g, "RateApplicablePercent")})
		v.amounts = append(v.amounts, g.val(t, "BasisAmount"), g.val(t, "CalculatedAmount"))
	}
	m := st.one(t, "SpecifiedTradeSettlementHeaderMonetarySummation")
	v.lineTotal, v.taxExcl = cents(t, m.val(t, "LineTotalAmount")), cents(t, m.val(t, "TaxBasisTotalAmount"))
	v.vatTotal, v.taxIncl = cents(t, m.val(t, "TaxTotalAmount")), cents(t, m.val(t, "GrandTotalAmount"))
	v.payable = cents(t, m.val(t, "DuePayableAmount"))
	if p := opt(m, "TotalPrepaidAmount"); p != "" {
		v.paid = cents(t, p)
	}
	for _, c := range m.children {
		v.amounts = append(v.amounts, c.text)
	}
	for _, l := range tx.all("IncludedSupplyChainTradeLineItem") {
		q := l.one(t, "SpecifiedLineTradeDelivery/BilledQuantity")
		net := l.val(t, "SpecifiedLineTradeSettlement/SpecifiedTradeSettlementLineMonetarySummation/LineTotalAmount")
		v.amounts = append(v.amounts, net)
		v.lines = append(v.lines, vline{id: l.val(t, "AssociatedDocumentLineDocument/LineID"), name: l.val(t, "SpecifiedTradeProduct/Name"),
			qty: q.text, unit: q.attrs["unitCode"], price: l.val(t, "SpecifiedLineTradeAgreement/NetPriceProductTradePrice/ChargeAmount"),
			category: l.val(t, "SpecifiedLineTradeSettlement/ApplicableTradeTax/CategoryCode"),
			percent:  opt(l, "SpecifiedLineTradeSettlement/ApplicableTradeTax/RateApplicablePercent"),
			note:     opt(l, "AssociatedDocumentLineDocument/IncludedNote/Content"), net: cents(t, net)})
	}
	return v
}

// encodeBoth encodes d in UBL and in CII.
func encodeBoth(t *testing.T, d *invoicedoc.Document) (ubl, cii []byte) {
	t.Helper()
	u, err := EncodeUBL(d)
	if err != nil {
		t.Fatalf("EncodeUBL: %v", err)
	}
	c, err := EncodeCII(d)
	if err != nil {
		t.Fatalf("EncodeCII: %v", err)
	}
	return u, c
}

// views encodes d in both syntaxes and reads both back.
func views(t *testing.T, d *invoicedoc.Document) []*view {
	t.Helper()
	u, c := encodeBoth(t, d)
	return []*view{ublView(t, u), ciiView(t, c)}
}
