package app

import (
	"encoding/json"
	"time"

	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/money"
)

// timestamp marshals as RFC 3339 UTC with whole seconds (kit.Timestamp).
type timestamp = kit.Timestamp

func tsPtr(t *time.Time) *timestamp { return kit.TimestampPtr(t) }

// productJSON is the Product of the interface and client-contract.md 3.1.
type productJSON struct {
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
	SoldFrom                   *timestamp      `json:"sold_from"`
	SoldUntil                  *timestamp      `json:"sold_until"`
	AreaID                     string          `json:"area_id"`
	IdentificationMediumSchema json.RawMessage `json:"identification_medium_schema"`
	TariffSettingsSchema       json.RawMessage `json:"tariff_settings_schema"`
	IsSubscription             bool            `json:"is_subscription"`
}

func productView(p *catalog.Product) productJSON {
	ts := p.TariffSettingsSchema
	if len(ts) == 0 {
		ts = json.RawMessage("null")
	}
	return productJSON{
		ID: p.ID, RecommendedSuccessorIs: p.RecommendedSuccessorIs, RecommendedSuccessorOf: p.RecommendedSuccessorOf,
		LocalTicketName: p.LocalTicketName, LocalValidityDescription: p.LocalValidityDescription,
		TicketType: p.TicketType, CustomerType: p.CustomerType, DurationDefinition: p.DurationDefinition,
		DurationInMinutes: p.DurationInMinutes, ValidityInMinutes: p.ValidityInMinutes,
		PriceInCents: p.PriceInCents, Currency: p.Currency, SoldFrom: tsPtr(p.SoldFrom), SoldUntil: tsPtr(p.SoldUntil),
		AreaID: p.AreaID, IdentificationMediumSchema: p.IdentificationMediumSchema, TariffSettingsSchema: ts,
		IsSubscription: p.IsSubscription,
	}
}

func productsView(ps []*catalog.Product) []productJSON {
	out := make([]productJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, productView(p))
	}
	return out
}

// areaJSON is the coupon area of client-contract.md 3.5, a GeoJSON Feature.
// Ticket areas add geojson (iOS) next to geometry (Android).
type areaJSON struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Properties areaProps       `json:"properties"`
	Geometry   json.RawMessage `json:"geometry"`
	GeoJSON    json.RawMessage `json:"geojson,omitempty"`
}

type areaProps struct {
	CityName      string   `json:"city_name"`
	LocalZoneName string   `json:"local_zone_name"`
	Name          string   `json:"name"`
	CityNames     []string `json:"city_names"`
}

func areaView(a *catalog.Area, withGeoJSON bool) areaJSON {
	city := ""
	if len(a.CityNames) > 0 {
		city = a.CityNames[0]
	}
	names := a.CityNames
	if names == nil {
		names = []string{}
	}
	v := areaJSON{ID: a.ID, Type: "Feature", Geometry: a.Geometry,
		Properties: areaProps{CityName: city, LocalZoneName: a.LocalZoneName, Name: a.Name, CityNames: names}}
	if withGeoJSON {
		v.GeoJSON = a.Geometry
	}
	return v
}
