package schema

import (
	"encoding/json"
	"os"
	"testing"
)

// TestFormOfCatalog builds the form of every product of the default
// catalog: the monthly product's photo_id_lite with its three fields and
// the postal code of its tariff settings.
func TestFormOfCatalog(t *testing.T) {
	b, err := os.ReadFile("../catalog/default_catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Products []struct {
			TicketType                 string          `json:"ticket_type"`
			IdentificationMediumSchema json.RawMessage `json:"identification_medium_schema"`
			TariffSettingsSchema       json.RawMessage `json:"tariff_settings_schema"`
		} `json:"products"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	months := 0
	for _, p := range f.Products {
		form, err := FormOf(p.IdentificationMediumSchema, p.TariffSettingsSchema)
		if err != nil {
			t.Fatal(err)
		}
		if len(form.Options) == 0 {
			t.Errorf("a %s product has no identification option", p.TicketType)
		}
		if p.TicketType != "month" || len(form.Tariff) == 0 {
			continue
		}
		months++
		o := form.Options[0]
		if o.Name != "photo_id_lite" || len(o.Fields) != 3 || o.Fields[2].Name != "birth_date" || o.Fields[2].Format != "date" || !o.Fields[0].Required {
			t.Errorf("monthly option %+v", o)
		}
		if form.Tariff[0].Name != "german_postal_code" || form.Tariff[0].Pattern == "" || !form.Tariff[0].Required {
			t.Errorf("monthly tariff %+v", form.Tariff)
		}
	}
	if months == 0 {
		t.Error("no monthly product with tariff settings")
	}
	for _, bad := range []string{`{"oneOf":[{"required":["x"]}],"definitions":{}}`, `{"oneOf":`} {
		if _, err := FormOf([]byte(bad), nil); err == nil {
			t.Errorf("FormOf(%s) accepted", bad)
		}
	}
}
