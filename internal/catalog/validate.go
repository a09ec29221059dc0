package catalog

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/validity"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Validate checks a whole catalog file and returns every problem with its
// JSON pointer, or nil. existing holds products already in the database
// (successor links may point to them). Nothing is imported unless this
// returns nil.
func Validate(f *File, prefix string, existingProducts map[string]bool) error {
	var probs []apperr.FieldError
	add := func(path, format string, args ...any) {
		probs = append(probs, apperr.FieldError{Field: path, Message: fmt.Sprintf(format, args...)})
	}
	if f.Version != FormatVersion {
		add("/version", "must be %d", FormatVersion)
	}
	validID := func(id, kind string) bool {
		head := prefix + "-" + kind + "-"
		return strings.HasPrefix(id, head) && uuidRE.MatchString(id[len(head):])
	}
	areas := map[string]*Area{}
	national := 0
	for i := range f.Areas {
		a := &f.Areas[i]
		p := fmt.Sprintf("/areas/%d", i)
		if !validID(a.ID, "area") {
			add(p+"/id", "must be %s-area-<uuid>", prefix)
		} else if areas[a.ID] != nil {
			add(p+"/id", "duplicate area id %s", a.ID)
		}
		areas[a.ID] = a
		if strings.TrimSpace(a.Name) == "" {
			add(p+"/name", "must not be empty")
		}
		if strings.TrimSpace(a.LocalZoneName) == "" {
			add(p+"/local_zone_name", "must not be empty")
		}
		if a.National {
			national++
		} else if len(a.CityNames) == 0 {
			add(p+"/city_names", "a local area needs at least one city name")
		}
		for j, c := range a.CityNames {
			if FoldName(c) == "" {
				add(fmt.Sprintf("%s/city_names/%d", p, j), "must contain letters")
			}
		}
		if _, err := ParseGeometry(a.Geometry); err != nil {
			add(p+"/geometry", "%v", err)
		}
	}
	if national > 1 {
		add("/areas", "at most one area may be national")
	}
	products := map[string]bool{}
	for i := range f.Products {
		products[f.Products[i].ID] = true
	}
	for i := range f.Products {
		pr := &f.Products[i]
		p := fmt.Sprintf("/products/%d", i)
		if !validID(pr.ID, "product") {
			add(p+"/id", "must be %s-product-<uuid>", prefix)
		}
		for j := 0; j < i; j++ {
			if f.Products[j].ID == pr.ID {
				add(p+"/id", "duplicate product id %s", pr.ID)
			}
		}
		if areas[pr.AreaID] == nil {
			add(p+"/area_id", "unknown area %q", pr.AreaID)
		}
		for _, l := range []struct {
			name string
			v    *string
		}{{"recommended_successor_is", pr.RecommendedSuccessorIs}, {"recommended_successor_of", pr.RecommendedSuccessorOf}} {
			if l.v != nil && !products[*l.v] && !existingProducts[*l.v] {
				add(p+"/"+l.name, "unknown product %q", *l.v)
			}
		}
		if strings.TrimSpace(pr.LocalTicketName) == "" {
			add(p+"/local_ticket_name", "must not be empty")
		}
		if strings.TrimSpace(pr.LocalValidityDescription) == "" {
			add(p+"/local_validity_description", "must not be empty")
		}
		switch pr.TicketType {
		case TicketSingle, TicketDay, TicketMonth:
		default:
			add(p+"/ticket_type", "must be single, day or month")
		}
		switch pr.CustomerType {
		case CustomerAdult, CustomerChild:
		default:
			add(p+"/customer_type", "must be adult or child")
		}
		before := len(probs)
		switch pr.DurationDefinition {
		case DurationMinutes:
			if pr.DurationInMinutes == nil || *pr.DurationInMinutes <= 0 {
				add(p+"/duration_in_minutes", "must be a positive integer when duration_definition is duration_in_minutes")
			}
			if pr.ValidityInMinutes == nil || *pr.ValidityInMinutes <= 0 {
				add(p+"/validity_in_minutes", "must be a positive integer when duration_definition is duration_in_minutes")
			}
		case DurationCalendarMonth:
			if pr.DurationInMinutes != nil {
				add(p+"/duration_in_minutes", "must be null for calendar_month")
			}
			if pr.ValidityInMinutes != nil {
				add(p+"/validity_in_minutes", "must be null for calendar_month")
			}
		default:
			add(p+"/duration_definition", "must be duration_in_minutes or calendar_month")
		}
		if _, err := validity.FromProduct(pr.DurationDefinition, pr.DurationInMinutes, pr.ValidityInMinutes, pr.TicketType); err != nil && len(probs) == before {
			add(p+"/duration_definition", "%s", apperr.As(err).Msg)
		}
		if pr.PriceInCents < 0 {
			add(p+"/price_in_cents", "must not be negative")
		}
		if pr.Currency != "EUR" {
			add(p+"/currency", "must be EUR")
		}
		if pr.SoldFrom != nil && pr.SoldUntil != nil && !pr.SoldFrom.Before(*pr.SoldUntil) {
			add(p+"/sold_until", "must be after sold_from")
		}
		switch pr.Barcode() {
		case BarcodeFarebox, BarcodeUIC:
		case BarcodeVDV:
			if pr.BarcodeProductNumber == 0 {
				add(p+"/barcode_product_number", "is required with barcode_profile vdv-ka-static (the VDV product number, e.g. 9999 for the Deutschlandticket)")
			}
		default:
			add(p+"/barcode_profile", "must be farebox, uic-918-3-uflex or vdv-ka-static")
		}
		if pr.BarcodeProductNumber < 0 || pr.BarcodeProductNumber > 32000 {
			add(p+"/barcode_product_number", "must be 1..32000 (the UIC FCB product id range), or 0 for none")
		}
		if pr.VATRateBP <= 0 || pr.VATRateBP > 10000 {
			add(p+"/vat_rate_bp", "must be a rate in basis points (700 = 7 %%)")
		}
		if !isObject(pr.IdentificationMediumSchema) {
			add(p+"/identification_medium_schema", "must be a JSON Schema object")
		}
		if len(pr.TariffSettingsSchema) > 0 && string(pr.TariffSettingsSchema) != "null" && !isObject(pr.TariffSettingsSchema) {
			add(p+"/tariff_settings_schema", "must be a JSON Schema object or null")
		}
		if pr.IsSubscription != (pr.DurationDefinition == DurationCalendarMonth) {
			add(p+"/is_subscription", "subscriptions are exactly the calendar_month products")
		}
	}
	if len(probs) == 0 {
		return nil
	}
	return apperr.E("catalog.Validate", apperr.Unprocessable, CodeCatalogInvalid,
		fmt.Sprintf("catalog has %d problem(s); nothing was imported", len(probs))).WithDetails(probs...)
}

func isObject(raw json.RawMessage) bool {
	var m map[string]any
	return json.Unmarshal(raw, &m) == nil && m != nil
}
