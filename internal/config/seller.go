package config

import "github.com/farebox/farebox/internal/invoicedoc"

// DevSellerName is the default seller name: a deployment that still issues
// invoices under it has not configured its company (serve logs a warning).
const DevSellerName = "farebox Entwicklung GmbH"

// sellerSettings are the issuing company's details printed on every invoice
// and written into the XRechnung files. The defaults are a fictitious
// development company that passes invoicedoc.ValidateSeller, so `farebox serve`
// starts without configuration; production sets every FAREBOX_SELLER_*.
func sellerSettings() []setting {
	return []setting{
		{name: "seller-name", env: "FAREBOX_SELLER_NAME", def: DevSellerName, help: "invoice seller: legal name (BT-27)"},
		{name: "seller-street", env: "FAREBOX_SELLER_STREET", def: "Musterstraße 1", help: "invoice seller: street and number"},
		{name: "seller-postal-code", env: "FAREBOX_SELLER_POSTAL_CODE", def: "10115", help: "invoice seller: postal code"},
		{name: "seller-city", env: "FAREBOX_SELLER_CITY", def: "Berlin", help: "invoice seller: city"},
		{name: "seller-country", env: "FAREBOX_SELLER_COUNTRY", def: "DE", help: "invoice seller: ISO country code"},
		{name: "seller-vat-id", env: "FAREBOX_SELLER_VAT_ID", def: "DE999999999", help: "invoice seller: USt-IdNr (VAT id or tax number required)"},
		{name: "seller-tax-number", env: "FAREBOX_SELLER_TAX_NUMBER", def: "", help: "invoice seller: Steuernummer"},
		{name: "seller-legal-info", env: "FAREBOX_SELLER_LEGAL_INFO", def: "Amtsgericht Berlin-Charlottenburg HRB 000000 (Entwicklung)", help: "invoice seller: register court and number"},
		{name: "seller-contact-name", env: "FAREBOX_SELLER_CONTACT_NAME", def: "Buchhaltung", help: "invoice seller: contact person (BR-DE-5)"},
		{name: "seller-contact-phone", env: "FAREBOX_SELLER_CONTACT_PHONE", def: "+49 30 0000000", help: "invoice seller: contact phone (BR-DE-6)"},
		{name: "seller-contact-email", env: "FAREBOX_SELLER_CONTACT_EMAIL", def: "buchhaltung@farebox.invalid", help: "invoice seller: contact e-mail (BR-DE-7)"},
		{name: "seller-electronic-address", env: "FAREBOX_SELLER_ELECTRONIC_ADDRESS", def: "rechnung@farebox.invalid", help: "invoice seller: electronic address (BT-34)"},
		{name: "seller-electronic-address-scheme", env: "FAREBOX_SELLER_ELECTRONIC_ADDRESS_SCHEME", def: "EM", help: "invoice seller: EAS scheme of the electronic address"},
		{name: "seller-iban", env: "FAREBOX_SELLER_IBAN", def: "DE89370400440532013000", help: "invoice seller: IBAN for payments (checksum verified)"},
		{name: "seller-bic", env: "FAREBOX_SELLER_BIC", def: "", help: "invoice seller: BIC (optional)"},
		{name: "seller-bank-name", env: "FAREBOX_SELLER_BANK_NAME", def: "", help: "invoice seller: bank name (optional, PDF only)"},
		{name: "invoice-payment-days", env: "FAREBOX_INVOICE_PAYMENT_DAYS", def: "14", help: "days from the invoice date to the due date"},
	}
}

func sellerFrom(get func(string) string) invoicedoc.Seller {
	return invoicedoc.Seller{
		Name: get("seller-name"),
		Address: invoicedoc.Address{Street: get("seller-street"), PostalCode: get("seller-postal-code"),
			City: get("seller-city"), CountryCode: get("seller-country")},
		VATID: get("seller-vat-id"), TaxNumber: get("seller-tax-number"), LegalInfo: get("seller-legal-info"),
		ContactName: get("seller-contact-name"), ContactPhone: get("seller-contact-phone"), ContactEmail: get("seller-contact-email"),
		ElectronicAddress: get("seller-electronic-address"), ElectronicAddressScheme: get("seller-electronic-address-scheme"),
		IBAN: get("seller-iban"), BIC: get("seller-bic"), BankName: get("seller-bank-name"),
	}
}
