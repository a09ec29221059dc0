package products

import (
	"encoding/json"

	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/money"
)

// ProductJSON is the Product of the interface and client-contract.md 3.1.
type ProductJSON struct {
	ID                         string          `json:"id"`
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
	SoldFrom                   *kit.Timestamp  `json:"sold_from"`
	SoldUntil                  *kit.Timestamp  `json:"sold_until"`
	AreaID                     string          `json:"area_id"`
	IdentificationMediumSchema json.RawMessage `json:"identification_medium_schema"`
	TariffSettingsSchema       json.RawMessage `json:"tariff_settings_schema"`
	IsSubscription             bool            `json:"is_subscription"`
	// InspectionProfile is "static" or "dynamic" (device-bound tickets
	// with a moving barcode, docs/barcodes.md).
	InspectionProfile string `json:"inspection_profile"`
}

// ProductView is the Product p.
func ProductView(p *catalog.Product) ProductJSON {
	ts := p.TariffSettingsSchema
	if len(ts) == 0 {
		ts = json.RawMessage("null")
	}
	return ProductJSON{
		ID: p.ID, RecommendedSuccessorIs: p.RecommendedSuccessorIs, RecommendedSuccessorOf: p.RecommendedSuccessorOf,
		LocalTicketName: p.LocalTicketName, LocalValidityDescription: p.LocalValidityDescription,
		TicketType: p.TicketType, CustomerType: p.CustomerType, DurationDefinition: p.DurationDefinition,
		DurationInMinutes: p.DurationInMinutes, ValidityInMinutes: p.ValidityInMinutes,
		PriceInCents: p.PriceInCents, Currency: p.Currency, SoldFrom: kit.TimestampPtr(p.SoldFrom), SoldUntil: kit.TimestampPtr(p.SoldUntil),
		AreaID: p.AreaID, IdentificationMediumSchema: p.IdentificationMediumSchema, TariffSettingsSchema: ts,
		IsSubscription: p.IsSubscription, InspectionProfile: p.Inspection(),
	}
}

// ProductsView is a list of Products (never null).
func ProductsView(ps []*catalog.Product) []ProductJSON {
	out := make([]ProductJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, ProductView(p))
	}
	return out
}

// AreaJSON is the coupon area of client-contract.md 3.5, a GeoJSON Feature.
// Ticket areas add geojson (iOS) next to geometry (Android).
type AreaJSON struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Properties AreaProps       `json:"properties"`
	Geometry   json.RawMessage `json:"geometry"`
	GeoJSON    json.RawMessage `json:"geojson,omitempty"`
}

// AreaProps are an area's properties.
type AreaProps struct {
	CityName      string   `json:"city_name"`
	LocalZoneName string   `json:"local_zone_name"`
	Name          string   `json:"name"`
	CityNames     []string `json:"city_names"`
}

// AreaView is the Area a, with geojson next to geometry when withGeoJSON
// (a ticket's area).
func AreaView(a *catalog.Area, withGeoJSON bool) AreaJSON {
	city := ""
	if len(a.CityNames) > 0 {
		city = a.CityNames[0]
	}
	names := a.CityNames
	if names == nil {
		names = []string{}
	}
	v := AreaJSON{ID: a.ID, Type: "Feature", Geometry: a.Geometry,
		Properties: AreaProps{CityName: city, LocalZoneName: a.LocalZoneName, Name: a.Name, CityNames: names}}
	if withGeoJSON {
		v.GeoJSON = a.Geometry
	}
	return v
}

// AreaResponse is the Area a as GET …/areas/{id} answers it.
func AreaResponse(a *catalog.AreaEntry) AreaJSON { return AreaView(&a.Area, false) }
