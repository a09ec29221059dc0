package schema

import (
	"encoding/json"
	"os"
	"strings"
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
		// "I live abroad" is a choice, not a word to type.
		if tf := form.Tariff[0]; len(tf.Literals) != 1 || tf.Literals[0] != "not-germany" || tf.InputPattern != "^(?:[0-9]{5})$" || tf.Example != "10115" {
			t.Errorf("monthly postal code: literals %q, input pattern %q, example %q", tf.Literals, tf.InputPattern, tf.Example)
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

// TestLiteralAlternatives: only a ^(…|…)$ pattern mixing words and other
// alternatives offers its words as choices.
func TestLiteralAlternatives(t *testing.T) {
	for _, c := range []struct {
		pattern, rest string
		literals      []string
	}{
		{"^([0-9]{5}|not-germany)$", "^(?:[0-9]{5})$", []string{"not-germany"}},
		{"^(abroad|[0-9]{4}|[0-9]{5}|unknown)$", "^(?:[0-9]{4}|[0-9]{5})$", []string{"abroad", "unknown"}},
		{"^([0-9]{5})$", "", nil},
		{"^(yes|no)$", "", nil},
		{"^[0-9]{5}$", "", nil},
		{"^(([0-9])|x)$", "", nil},
		{"", "", nil},
		{"^(ab|Not-Germany)$", "^(?:Not-Germany)$", []string{"ab"}},
	} {
		lit, rest := literalAlternatives(c.pattern)
		if rest != c.rest || strings.Join(lit, ",") != strings.Join(c.literals, ",") {
			t.Errorf("%q: %q %q, want %q %q", c.pattern, lit, rest, c.literals, c.rest)
		}
	}
}
