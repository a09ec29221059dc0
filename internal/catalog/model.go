package catalog

import (
	"encoding/json"
	"time"

	"github.com/farebox/farebox/internal/money"
)

// FormatVersion is the version of the catalog file format.
const FormatVersion = 1

// File is the catalog file format (docs/catalog.md).
type File struct {
	Version  int       `json:"version"`
	Areas    []Area    `json:"areas"`
	Products []Product `json:"products"`
}

// Area is a tariff area.
type Area struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	CityNames     []string        `json:"city_names"`
	LocalZoneName string          `json:"local_zone_name"`
	National      bool            `json:"national,omitempty"`
	Geometry      json.RawMessage `json:"geometry"`
}

// Product is a ticket product; the JSON tags are the catalog file's (and,
// for the public fields, the API's) names.
type Product struct {
	ID                         string          `json:"id"`
	AreaID                     string          `json:"area_id"`
	RecommendedSuccessorIs     *string         `json:"recommended_successor_is"`
	RecommendedSuccessorOf     *string         `json:"recommended_successor_of"`
	LocalTicketName            string          `json:"local_ticket_name"`
	LocalValidityDescription   string          `json:"local_validity_description"`
	TicketType                 string          `json:"ticket_type"`
	CustomerType               string          `json:"customer_type"`
	DurationDefinition         string          `json:"duration_definition"`
	DurationInMinutes          *int            `json:"duration_in_minutes"`
	ValidityInMinutes          *int            `json:"validity_in_minutes"`
	PriceInCents               money.Cents     `json:"price_in_cents"`
	Currency                   string          `json:"currency"`
	SoldFrom                   *time.Time      `json:"sold_from"`
	SoldUntil                  *time.Time      `json:"sold_until"`
	IdentificationMediumSchema json.RawMessage `json:"identification_medium_schema"`
	TariffSettingsSchema       json.RawMessage `json:"tariff_settings_schema"`
	IsSubscription             bool            `json:"is_subscription"`
	// VATRateBP is the VAT rate in basis points (700 = 7 %); not part of the API.
	VATRateBP int64 `json:"vat_rate_bp"`
	// Restricted products are sold only to accounts granted them (job ticket).
	Restricted bool `json:"restricted,omitempty"`
	// BarcodeProfile is the inspection barcode format of the product's
	// tickets (BarcodeFarebox when empty); not part of the API.
	BarcodeProfile string `json:"barcode_profile,omitempty"`
	// BarcodeProductNumber is the product number the product owner assigned
	// (9999 for the Deutschlandticket), written into UIC barcodes; 0 = none
	// (the farebox product id is written instead). Not part of the API.
	BarcodeProductNumber int `json:"barcode_product_number,omitempty"`
	// InspectionProfile is InspectionStatic (default when empty) or
	// InspectionDynamic: tickets bound to one device whose barcode carries
	// a fresh device signature per time window (docs/barcodes.md, "Dynamic
	// barcodes"). Part of the API (Product.inspection_profile).
	InspectionProfile string `json:"inspection_profile,omitempty"`
}

// Inspection profiles a product may choose (docs/barcodes.md, "Dynamic
// barcodes").
const (
	InspectionStatic  = "static"
	InspectionDynamic = "dynamic"
)

// Inspection returns the product's inspection profile, InspectionStatic by
// default.
func (p *Product) Inspection() string {
	if p == nil || p.InspectionProfile == "" {
		return InspectionStatic
	}
	return p.InspectionProfile
}

// Dynamic reports whether the product's tickets are device-bound with a
// moving barcode.
func (p *Product) Dynamic() bool { return p.Inspection() == InspectionDynamic }

// Barcode profiles a product may choose (docs/barcodes.md).
const (
	BarcodeFarebox = "farebox"
	BarcodeUIC     = "uic-918-3-uflex"
	BarcodeVDV     = "vdv-ka-static"
)

// Barcode returns the product's barcode profile, BarcodeFarebox by default.
func (p *Product) Barcode() string {
	if p.BarcodeProfile == "" {
		return BarcodeFarebox
	}
	return p.BarcodeProfile
}

// Ticket types, customer types and duration definitions in use.
const (
	TicketSingle = "single"
	TicketDay    = "day"
	TicketMonth  = "month"

	CustomerAdult = "adult"
	CustomerChild = "child"

	DurationMinutes       = "duration_in_minutes"
	DurationCalendarMonth = "calendar_month"
)

// OnSale reports whether p may be searched and ordered at t.
func (p *Product) OnSale(t time.Time) bool {
	if p.SoldFrom != nil && t.Before(*p.SoldFrom) {
		return false
	}
	if p.SoldUntil != nil && !t.Before(*p.SoldUntil) {
		return false
	}
	return true
}

// HasTariffSettings reports whether the product asks for tariff settings.
func (p *Product) HasTariffSettings() bool {
	return len(p.TariffSettingsSchema) > 0 && string(p.TariffSettingsSchema) != "null"
}
