package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The iOS SDK decodes product schemas into fixed Swift structs
// (Models/IdentificationMediumSchema.swift, Models/TariffSettingsSchema.swift;
// client-contract.md 3.2 and 3.3). Swift's Decodable ignores unknown keys but
// fails on a missing required key, on null for a non-optional key and on a
// wrong type, and the app then crashes. These Go types mirror those structs:
// pointer fields are required keys (checked after decoding), slices and maps
// marked optional may be absent.

type iosProperty struct {
	Type      *string  `json:"type"`  // R, a string (["string","null"] breaks iOS)
	Title     *string  `json:"title"` // R
	Examples  []string `json:"examples"`
	Enum      []string `json:"enum"`
	Format    *string  `json:"format"`
	Pattern   *string  `json:"pattern"`
	MinLength *int     `json:"minLength"`
	MaxLength *int     `json:"maxLength"`
}

func (p iosProperty) check(where string) error {
	if p.Type == nil || p.Title == nil {
		return fmt.Errorf("%s: property needs string type and title", where)
	}
	return nil
}

// iosAlternative is an element of oneOf (medium) or allOf (tariff settings):
// properties values are maps of string to string.
type iosAlternative struct {
	Type       *string                      `json:"type"`
	Required   []string                     `json:"required"`
	Properties map[string]map[string]string `json:"properties"`
}

func (a iosAlternative) check(where string) error {
	if a.Type == nil || a.Required == nil || a.Properties == nil {
		return fmt.Errorf("%s: alternative needs type, required and properties", where)
	}
	return nil
}

type iosOption struct {
	Type       *string                `json:"type"`
	Title      *string                `json:"title"`
	Required   []string               `json:"required"`
	Properties map[string]iosProperty `json:"properties"`
}

type iosMediumSchema struct {
	Schema      *string              `json:"$schema"`
	Type        *string              `json:"type"`
	ID          *string              `json:"$id"`
	OneOf       []iosAlternative     `json:"oneOf"`
	Definitions map[string]iosOption `json:"definitions"`
}

type iosTariffSchema struct {
	Schema      *string                `json:"$schema"`
	Type        *string                `json:"type"`
	ID          *string                `json:"$id"`
	AllOf       []iosAlternative       `json:"allOf"`
	Definitions map[string]iosProperty `json:"definitions"`
}

func decodeIOSMedium(raw string) error {
	var s iosMediumSchema
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return err
	}
	if s.Schema == nil || s.Type == nil || s.OneOf == nil || s.Definitions == nil {
		return errors.New("top level needs $schema, type, oneOf and definitions")
	}
	for i, a := range s.OneOf {
		if err := a.check(fmt.Sprint("oneOf/", i)); err != nil {
			return err
		}
		// The old built-in form takes required[0] as the option name and
		// renders definitions[name].required as inputs.
		if len(a.Required) == 0 {
			return fmt.Errorf("oneOf/%d has no option name", i)
		}
		if _, ok := s.Definitions[a.Required[0]]; !ok {
			return fmt.Errorf("oneOf/%d names %q, which has no definition", i, a.Required[0])
		}
	}
	for name, o := range s.Definitions {
		if o.Type == nil || o.Title == nil || o.Required == nil || o.Properties == nil {
			return fmt.Errorf("definitions/%s needs type, title, required and properties", name)
		}
		for _, r := range o.Required {
			if _, ok := o.Properties[r]; !ok {
				return fmt.Errorf("definitions/%s requires %q without a property", name, r)
			}
		}
		for f, p := range o.Properties {
			if err := p.check("definitions/" + name + "/" + f); err != nil {
				return err
			}
		}
	}
	return nil
}

func decodeIOSTariff(raw string) error {
	var s iosTariffSchema
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return err
	}
	if s.Schema == nil || s.Type == nil || s.AllOf == nil || s.Definitions == nil {
		return errors.New("top level needs $schema, type, allOf and definitions")
	}
	for i, a := range s.AllOf {
		if err := a.check(fmt.Sprint("allOf/", i)); err != nil {
			return err
		}
	}
	for name, p := range s.Definitions {
		if err := p.check("definitions/" + name); err != nil {
			return err
		}
	}
	return nil
}

func TestMonthlySchemasFitIOS(t *testing.T) {
	if err := decodeIOSMedium(MonthlyIdentificationMedium); err != nil {
		t.Errorf("identification medium schema breaks iOS: %v", err)
	}
	if err := decodeIOSTariff(MonthlyTariffSettings); err != nil {
		t.Errorf("tariff settings schema breaks iOS: %v", err)
	}
	// The content the interface fixes.
	var m struct {
		OneOf []struct {
			Required             []string       `json:"required"`
			AdditionalProperties bool           `json:"additionalProperties"`
			Properties           map[string]any `json:"properties"`
		} `json:"oneOf"`
		Definitions map[string]struct {
			Title      string   `json:"title"`
			Required   []string `json:"required"`
			Properties map[string]struct {
				Type, Format string
			} `json:"properties"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal([]byte(MonthlyIdentificationMedium), &m); err != nil {
		t.Fatal(err)
	}
	lite := m.Definitions["photo_id_lite"]
	if len(m.OneOf) != 1 || fmt.Sprint(m.OneOf[0].Required) != "[photo_id_lite]" || m.OneOf[0].AdditionalProperties || len(m.OneOf[0].Properties) != 1 ||
		lite.Title != "Photo-Id" || fmt.Sprint(lite.Required) != "[first_name last_name birth_date]" ||
		lite.Properties["birth_date"].Format != "date" || lite.Properties["first_name"].Type != "string" || lite.Properties["last_name"].Type != "string" {
		t.Errorf("monthly medium schema differs from the interface: %+v", m)
	}
}

// The shadow decoders must catch the regressions that crash iOS.
func TestShadowDecodersCatchRegressions(t *testing.T) {
	medium := []struct{ name, from, to string }{
		{"type array", `"first_name": {"type": "string"`, `"first_name": {"type": ["string", "null"]`},
		{"missing title", `"title": "Nachname", `, ``},
		{"inline option", `"photo_id_lite": {"$ref": "#/definitions/photo_id_lite"}`, `"photo_id_lite": {"type": "object", "properties": {}}`},
		{"no $schema", `"$schema": "http://json-schema.org/draft-04/schema#",`, ``},
		{"option title null", `"title": "Photo-Id"`, `"title": null`},
		{"minLength as string", `"minLength": 1,`, `"minLength": "1",`},
	}
	for _, c := range medium {
		bad := strings.Replace(MonthlyIdentificationMedium, c.from, c.to, 1)
		if bad == MonthlyIdentificationMedium {
			t.Fatalf("%s: mutation did not apply", c.name)
		}
		if err := decodeIOSMedium(bad); err == nil {
			t.Errorf("%s: shadow decoder accepted a schema iOS cannot decode", c.name)
		}
	}
	tariff := []struct{ name, from, to string }{
		{"no title", `"title": "Postleitzahl des Wohnorts (not-germany bei Wohnsitz im Ausland)",`, ``},
		{"allOf renamed", `"allOf"`, `"anyOf"`},
		{"pattern not string", `"pattern": "^([0-9]{5}|not-germany)$"`, `"pattern": ["^[0-9]{5}$"]`},
	}
	for _, c := range tariff {
		bad := strings.Replace(MonthlyTariffSettings, c.from, c.to, 1)
		if bad == MonthlyTariffSettings {
			t.Fatalf("%s: mutation did not apply", c.name)
		}
		if err := decodeIOSTariff(bad); err == nil {
			t.Errorf("%s: shadow decoder accepted a schema iOS cannot decode", c.name)
		}
	}
}
