package schema

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Form is what an HTML form needs from a product's two schemas
// (client-contract.md 3.2 and 3.3): the identification options, each with
// its fields, and the tariff settings fields. The web traveller page
// (docs/web.md) builds its inputs from it; the server still validates the
// submitted values against the full schemas.
type Form struct {
	Options []FormOption
	Tariff  []FormField
}

// FormOption is one oneOf alternative of an identification_medium_schema.
type FormOption struct {
	Name   string // the option key, e.g. photo_id_lite
	Title  string
	Fields []FormField
}

// FormField is one string property.
type FormField struct {
	Name      string
	Title     string
	Format    string // "date", "phone", …
	Pattern   string
	MinLength int
	MaxLength int
	Enum      []string
	Example   string
	Required  bool
	// Literals are the pattern's word alternatives, such as not-germany in
	// ^([0-9]{5}|not-germany)$: a form offers them as choices beside the
	// input, whose own pattern (InputPattern) is then the rest of the
	// alternatives. Both are empty for any other pattern.
	Literals     []string
	InputPattern string
}

type formProperty struct {
	Type      string   `json:"type"`
	Title     string   `json:"title"`
	Format    string   `json:"format"`
	Pattern   string   `json:"pattern"`
	MinLength int      `json:"minLength"`
	MaxLength int      `json:"maxLength"`
	Enum      []string `json:"enum"`
	Examples  []string `json:"examples"`
}

type formGroup struct {
	Title      string                  `json:"title"`
	Required   []string                `json:"required"`
	Properties map[string]formProperty `json:"properties"`
}

// FormOf reads the identification medium schema and the tariff settings
// schema (either may be empty) in the shape the SDKs decode: options are
// oneOf[i].required[0] resolved in definitions, tariff fields are the
// allOf[i].required names resolved in definitions.
func FormOf(identification, tariff []byte) (Form, error) {
	var f Form
	if len(identification) > 0 && string(identification) != "null" {
		var s struct {
			OneOf []struct {
				Required []string `json:"required"`
			} `json:"oneOf"`
			Definitions map[string]formGroup `json:"definitions"`
		}
		if err := json.Unmarshal(identification, &s); err != nil {
			return f, fmt.Errorf("identification_medium_schema: %w", err)
		}
		for _, alt := range s.OneOf {
			if len(alt.Required) == 0 {
				continue
			}
			name := alt.Required[0]
			def, ok := s.Definitions[name]
			if !ok {
				return f, fmt.Errorf("identification_medium_schema: option %q has no definition", name)
			}
			o := FormOption{Name: name, Title: def.Title}
			if o.Title == "" {
				o.Title = name
			}
			o.Fields = fields(def.Properties, def.Required)
			f.Options = append(f.Options, o)
		}
	}
	if len(tariff) > 0 && string(tariff) != "null" {
		var s struct {
			AllOf []struct {
				Required []string `json:"required"`
			} `json:"allOf"`
			Definitions map[string]formProperty `json:"definitions"`
		}
		if err := json.Unmarshal(tariff, &s); err != nil {
			return f, fmt.Errorf("tariff_settings_schema: %w", err)
		}
		for _, alt := range s.AllOf {
			f.Tariff = append(f.Tariff, fields(s.Definitions, alt.Required)...)
		}
	}
	return f, nil
}

// fields lists props, the required ones first in their order, then the
// others by name.
func fields(props map[string]formProperty, required []string) []FormField {
	var out []FormField
	seen := map[string]bool{}
	add := func(name string, req bool) {
		p, ok := props[name]
		if !ok || seen[name] {
			return
		}
		seen[name] = true
		ff := FormField{Name: name, Title: p.Title, Format: p.Format, Pattern: p.Pattern,
			MinLength: p.MinLength, MaxLength: p.MaxLength, Enum: p.Enum, Required: req}
		if ff.Title == "" {
			ff.Title = name
		}
		ff.Literals, ff.InputPattern = literalAlternatives(p.Pattern)
		for _, ex := range p.Examples {
			if ff.Example == "" && !slices.Contains(ff.Literals, ex) {
				ff.Example = ex
			}
		}
		out = append(out, ff)
	}
	for _, n := range required {
		add(n, true)
	}
	var rest []string
	for n := range props {
		rest = append(rest, n)
	}
	sort.Strings(rest)
	for _, n := range rest {
		add(n, false)
	}
	return out
}

// literalWord is an alternative of a pattern that is a plain word.
var literalWord = regexp.MustCompile(`^[a-z][a-z-]*$`)

// literalAlternatives splits a pattern of the shape ^(A|B|…)$ into its
// plain-word alternatives and a pattern of the others (^(?:A|…)$), as an
// HTML input's pattern attribute takes it. A pattern of any other shape,
// or with no word or only words among its alternatives, gives nothing.
func literalAlternatives(pattern string) (literals []string, rest string) {
	inner, ok := strings.CutPrefix(pattern, "^(")
	if !ok {
		return nil, ""
	}
	if inner, ok = strings.CutSuffix(inner, ")$"); !ok || strings.ContainsAny(inner, "()") {
		return nil, ""
	}
	var others []string
	for _, alt := range strings.Split(inner, "|") {
		if literalWord.MatchString(alt) {
			literals = append(literals, alt)
		} else {
			others = append(others, alt)
		}
	}
	if len(literals) == 0 || len(others) == 0 {
		return nil, ""
	}
	return literals, "^(?:" + strings.Join(others, "|") + ")$"
}
