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
	v := &validator{prefix: prefix}
	if f.Version != FormatVersion {
		v.add("/version", "must be %d", FormatVersion)
	}
	areas := v.areas(f.Areas)
	products := map[string]bool{}
	for i := range f.Products {
		products[f.Products[i].ID] = true
	}
	for i := range f.Products {
		pr := &f.Products[i]
		p := fmt.Sprintf("/products/%d", i)
		v.productLinks(f.Products[:i], pr, p, areas, func(id string) bool { return products[id] || existingProducts[id] })
		v.productKinds(pr, p)
		v.productDuration(pr, p)
		v.productSale(pr, p)
	}
	if len(v.probs) == 0 {
		return nil
	}
	return apperr.E("catalog.Validate", apperr.Unprocessable, CodeCatalogInvalid,
		fmt.Sprintf("catalog has %d problem(s); nothing was imported", len(v.probs))).WithDetails(v.probs...)
}

// validator collects the problems of one catalog file, in the order they
// are found, for the id prefix of the instance.
type validator struct {
	prefix string
	probs  []apperr.FieldError
}

func (v *validator) add(path, format string, args ...any) {
	v.probs = append(v.probs, apperr.FieldError{Field: path, Message: fmt.Sprintf(format, args...)})
}

// validID tells whether id is <prefix>-<kind>-<uuid>.
func (v *validator) validID(id, kind string) bool {
	head := v.prefix + "-" + kind + "-"
	return strings.HasPrefix(id, head) && uuidRE.MatchString(id[len(head):])
}

// areas checks every area and returns them by id (the last of a
// duplicated id).
func (v *validator) areas(list []Area) map[string]*Area {
	areas := map[string]*Area{}
	national := 0
	for i := range list {
		a := &list[i]
		p := fmt.Sprintf("/areas/%d", i)
		if !v.validID(a.ID, "area") {
			v.add(p+"/id", "must be %s-area-<uuid>", v.prefix)
		} else if areas[a.ID] != nil {
			v.add(p+"/id", "duplicate area id %s", a.ID)
		}
		areas[a.ID] = a
		if strings.TrimSpace(a.Name) == "" {
			v.add(p+"/name", "must not be empty")
		}
		if strings.TrimSpace(a.LocalZoneName) == "" {
			v.add(p+"/local_zone_name", "must not be empty")
		}
		if a.National {
			national++
		} else if len(a.CityNames) == 0 {
			v.add(p+"/city_names", "a local area needs at least one city name")
		}
		for j, c := range a.CityNames {
			if FoldName(c) == "" {
				v.add(fmt.Sprintf("%s/city_names/%d", p, j), "must contain letters")
			}
		}
		if _, err := ParseGeometry(a.Geometry); err != nil {
			v.add(p+"/geometry", "%v", err)
		}
	}
	if national > 1 {
		v.add("/areas", "at most one area may be national")
	}
	return areas
}

// productLinks checks product pr's id (against the products before it),
// its area and the products its successor links name (known tells whether
// a product id is in the file or the database).
func (v *validator) productLinks(before []Product, pr *Product, p string, areas map[string]*Area, known func(id string) bool) {
	if !v.validID(pr.ID, "product") {
		v.add(p+"/id", "must be %s-product-<uuid>", v.prefix)
	}
	for j := range before {
		if before[j].ID == pr.ID {
			v.add(p+"/id", "duplicate product id %s", pr.ID)
		}
	}
	if areas[pr.AreaID] == nil {
		v.add(p+"/area_id", "unknown area %q", pr.AreaID)
	}
	for _, l := range []struct {
		name string
		v    *string
	}{{"recommended_successor_is", pr.RecommendedSuccessorIs}, {"recommended_successor_of", pr.RecommendedSuccessorOf}} {
		if l.v != nil && !known(*l.v) {
			v.add(p+"/"+l.name, "unknown product %q", *l.v)
		}
	}
}

// productKinds checks the product's names, ticket type and customer type.
func (v *validator) productKinds(pr *Product, p string) {
	if strings.TrimSpace(pr.LocalTicketName) == "" {
		v.add(p+"/local_ticket_name", "must not be empty")
	}
	if strings.TrimSpace(pr.LocalValidityDescription) == "" {
		v.add(p+"/local_validity_description", "must not be empty")
	}
	switch pr.TicketType {
	case TicketSingle, TicketDay, TicketMonth:
	default:
		v.add(p+"/ticket_type", "must be single, day or month")
	}
	switch pr.CustomerType {
	case CustomerAdult, CustomerChild:
	default:
		v.add(p+"/customer_type", "must be adult or child")
	}
}

// productDuration checks the duration definition and its minutes; the
// validity rule's own objection is reported only when these found none.
func (v *validator) productDuration(pr *Product, p string) {
	before := len(v.probs)
	switch pr.DurationDefinition {
	case DurationMinutes:
		if pr.DurationInMinutes == nil || *pr.DurationInMinutes <= 0 {
			v.add(p+"/duration_in_minutes", "must be a positive integer when duration_definition is duration_in_minutes")
		}
		if pr.ValidityInMinutes == nil || *pr.ValidityInMinutes <= 0 {
			v.add(p+"/validity_in_minutes", "must be a positive integer when duration_definition is duration_in_minutes")
		}
	case DurationCalendarMonth:
		if pr.DurationInMinutes != nil {
			v.add(p+"/duration_in_minutes", "must be null for calendar_month")
		}
		if pr.ValidityInMinutes != nil {
			v.add(p+"/validity_in_minutes", "must be null for calendar_month")
		}
	default:
		v.add(p+"/duration_definition", "must be duration_in_minutes or calendar_month")
	}
	if _, err := validity.FromProduct(pr.DurationDefinition, pr.DurationInMinutes, pr.ValidityInMinutes, pr.TicketType); err != nil && len(v.probs) == before {
		v.add(p+"/duration_definition", "%s", apperr.As(err).Msg)
	}
}

// productSale checks the price, the sale window, the barcode profile,
// the VAT rate, the schemas and that subscriptions are the calendar-month
// products.
func (v *validator) productSale(pr *Product, p string) {
	if pr.PriceInCents < 0 {
		v.add(p+"/price_in_cents", "must not be negative")
	}
	if pr.Currency != "EUR" {
		v.add(p+"/currency", "must be EUR")
	}
	if pr.SoldFrom != nil && pr.SoldUntil != nil && !pr.SoldFrom.Before(*pr.SoldUntil) {
		v.add(p+"/sold_until", "must be after sold_from")
	}
	switch pr.Barcode() {
	case BarcodeFarebox, BarcodeUIC:
	case BarcodeVDV:
		if pr.BarcodeProductNumber == 0 {
			v.add(p+"/barcode_product_number", "is required with barcode_profile vdv-ka-static (the VDV product number, e.g. 9999 for the Deutschlandticket)")
		}
	default:
		v.add(p+"/barcode_profile", "must be farebox, uic-918-3-uflex or vdv-ka-static")
	}
	switch pr.Inspection() {
	case InspectionStatic:
	case InspectionDynamic:
		if pr.Barcode() != BarcodeFarebox {
			v.add(p+"/inspection_profile", "dynamic needs barcode_profile farebox (the device signature extends farebox's own payload; docs/barcodes.md)")
		}
	default:
		v.add(p+"/inspection_profile", "must be static or dynamic")
	}
	if pr.BarcodeProductNumber < 0 || pr.BarcodeProductNumber > 32000 {
		v.add(p+"/barcode_product_number", "must be 1..32000 (the UIC FCB product id range), or 0 for none")
	}
	if pr.VATRateBP <= 0 || pr.VATRateBP > 10000 {
		v.add(p+"/vat_rate_bp", "must be a rate in basis points (700 = 7 %%)")
	}
	if !isObject(pr.IdentificationMediumSchema) {
		v.add(p+"/identification_medium_schema", "must be a JSON Schema object")
	}
	if len(pr.TariffSettingsSchema) > 0 && string(pr.TariffSettingsSchema) != "null" && !isObject(pr.TariffSettingsSchema) {
		v.add(p+"/tariff_settings_schema", "must be a JSON Schema object or null")
	}
	if pr.IsSubscription != (pr.DurationDefinition == DurationCalendarMonth) {
		v.add(p+"/is_subscription", "subscriptions are exactly the calendar_month products")
	}
}

func isObject(raw json.RawMessage) bool {
	var m map[string]any
	return json.Unmarshal(raw, &m) == nil && m != nil
}
