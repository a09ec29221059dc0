package apitest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Field describes one JSON value as a client SDK decodes it. The shapes
// below are "shadow decoders" written from client-contract.md: a missing
// required key, a null in a non-optional field, a wrong type or a
// fractional timestamp fails, as it would crash the phone app.
type Field struct {
	Type     string // string, int, number, bool, object, array, any, time (string without fractions)
	Required bool   // the key must be present
	Nullable bool   // null allowed
	Object   Shape  // for object
	Elem     *Field // for array
	// Exact rejects keys not in Object (the strict Kotlin transit client).
	Exact bool
	// MapOf checks every value of an object with an unknown key set.
	MapOf *Field
}

// Shape is an object's fields by key.
type Shape map[string]Field

// R and O are shorthands: required non-null and optional-or-null.
func R(typ string) Field { return Field{Type: typ, Required: true} }
func O(typ string) Field { return Field{Type: typ, Nullable: true} }

// RObj and OObj describe nested objects.
func RObj(s Shape) Field { return Field{Type: "object", Required: true, Object: s} }
func OObj(s Shape) Field { return Field{Type: "object", Nullable: true, Object: s} }

// RArr describes a required array of elem.
func RArr(elem Field) Field { return Field{Type: "array", Required: true, Elem: &elem} }
func OArr(elem Field) Field { return Field{Type: "array", Nullable: true, Elem: &elem} }

var timeRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:?\d{2})$`)

// Check validates raw JSON against f and returns every problem.
func Check(raw []byte, f Field) []string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var probs []string
	check("", v, f, &probs)
	sort.Strings(probs)
	return probs
}

func check(path string, v any, f Field, probs *[]string) {
	bad := func(format string, args ...any) { *probs = append(*probs, path+": "+fmt.Sprintf(format, args...)) }
	if v == nil && f.Type != "absent" {
		if !f.Nullable {
			bad("null in a non-optional field")
		}
		return
	}
	switch f.Type {
	case "absent":
		bad("key must not be sent (the client decodes it as client-local state)")
	case "any":
	case "string":
		if _, ok := v.(string); !ok {
			bad("want a string, got %T", v)
		}
	case "time":
		s, ok := v.(string)
		if !ok || !timeRE.MatchString(s) {
			bad("want a timestamp without fractions, got %v", v)
		}
	case "int":
		n, ok := v.(float64)
		if !ok || n != float64(int64(n)) {
			bad("want an integer, got %v", v)
		}
	case "number":
		if _, ok := v.(float64); !ok {
			bad("want a number, got %T", v)
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			bad("want a boolean, got %T", v)
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			bad("want an array, got %T", v)
			return
		}
		if f.Elem != nil {
			for i, e := range a {
				check(fmt.Sprintf("%s/%d", path, i), e, *f.Elem, probs)
			}
		}
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			bad("want an object, got %T", v)
			return
		}
		for k, sub := range f.Object {
			val, present := m[k]
			if !present {
				if sub.Required {
					bad("required key %q missing", k)
				}
				continue
			}
			check(path+"/"+k, val, sub, probs)
		}
		if f.Exact {
			for k := range m {
				if _, ok := f.Object[k]; !ok {
					bad("unexpected key %q (the client rejects unknown keys)", k)
				}
			}
		}
		if f.MapOf != nil {
			for k, val := range m {
				check(path+"/"+k, val, *f.MapOf, probs)
			}
		}
	default:
		bad("shape has unknown type %q", f.Type)
	}
}

// stringMap is {<string>: <string>} (iOS oneOf/allOf properties values).
var stringMap = Field{Type: "object", Required: true, MapOf: &Field{Type: "string"}}

// schemaProperty is a Property of client-contract.md 3.2.
var schemaProperty = Field{Type: "object", Required: true, Object: Shape{
	"type": R("string"), "title": R("string"), "examples": OArr(R("string")), "enum": OArr(R("string")),
	"format": O("string"), "pattern": O("string"), "minLength": O("int"), "maxLength": O("int"),
}}

// IOSIdentificationMediumSchema is iOS IdentificationMediumSchema (3.2).
var IOSIdentificationMediumSchema = RObj(Shape{
	"$schema": R("string"), "type": R("string"), "$id": O("string"),
	"oneOf": RArr(RObj(Shape{"type": R("string"), "required": RArr(R("string")),
		"properties": Field{Type: "object", Required: true, MapOf: &stringMap}})),
	"definitions": Field{Type: "object", Required: true, MapOf: &Field{Type: "object", Object: Shape{
		"type": R("string"), "title": R("string"), "required": RArr(R("string")),
		"properties": Field{Type: "object", Required: true, MapOf: &schemaProperty},
	}}},
})

// IOSTariffSettingsSchema is iOS TariffSettingsSchema (3.3).
var IOSTariffSettingsSchema = Field{Type: "object", Nullable: true, Object: Shape{
	"$schema": R("string"), "type": R("string"), "$id": O("string"),
	"allOf": RArr(RObj(Shape{"type": R("string"), "required": RArr(R("string")),
		"properties": Field{Type: "object", Required: true, MapOf: &stringMap}})),
	"definitions": Field{Type: "object", Required: true, MapOf: &schemaProperty},
}}

// SDKProduct is the Product both ticketing SDKs decode (3.1).
var SDKProduct = RObj(Shape{
	"id": R("string"), "recommended_successor_is": O("string"), "recommended_successor_of": O("string"),
	"local_ticket_name": R("string"), "local_validity_description": R("string"), "ticket_type": R("string"),
	"customer_type": R("string"), "price_in_cents": R("int"), "currency": R("string"), "duration_definition": R("string"),
	"duration_in_minutes": O("int"), "validity_in_minutes": O("int"), "area_id": R("string"), "is_subscription": R("bool"),
	"identification_medium_schema": IOSIdentificationMediumSchema, "tariff_settings_schema": IOSTariffSettingsSchema,
	"sold_from": O("time"), "sold_until": O("time"),
})

// SDKCouponArea is the coupon area (3.5).
var SDKCouponArea = RObj(Shape{
	"id": R("string"), "type": R("string"),
	"properties": RObj(Shape{"city_name": R("string"), "local_zone_name": R("string")}),
	"geometry":   RObj(Shape{"type": R("string"), "coordinates": R("array")}),
})

// SDKTicketArea is the ticket area (3.5): geojson for iOS, geometry for Android.
var SDKTicketArea = RObj(Shape{
	"id": R("string"), "type": O("string"),
	"properties": RObj(Shape{"city_name": R("string"), "local_zone_name": R("string"), "relation_number": O("any"), "price_level": O("any")}),
	"geojson":    Field{Type: "any", Required: true, Nullable: true},
	"geometry":   RObj(Shape{"type": R("string"), "coordinates": R("array")}),
})

// MustMatch fails the test when raw does not fit f.
func (e *Env) MustMatch(name string, raw []byte, f Field) {
	e.T.Helper()
	if probs := Check(raw, f); len(probs) > 0 {
		e.T.Errorf("%s does not decode in the SDK shape:\n  %s\nbody: %.400s", name, strings.Join(probs, "\n  "), raw)
	}
}

// SDKSubscriptionCycle is a cycle (3.6).
var SDKSubscriptionCycle = RObj(Shape{
	"id": R("string"), "product_id": O("string"), "valid_from": O("time"), "valid_until": O("time"),
	"ordered": R("bool"), "coupon_activated": R("bool"), "billable_item_id": O("string"),
})

// SDKSubscription is the subscription both SDKs decode (3.6).
var SDKSubscription = OObj(Shape{
	"id": R("string"), "original_subscription_id": O("string"), "restored_subscription_id": O("string"),
	"active": R("bool"), "coupon_reactivatable": R("bool"), "subscription_reorderable": O("bool"),
	"current_cycle_valid_from": O("string"), "current_cycle_valid_until": O("string"), "ordered_until": O("string"),
	"current_subscription_cycle": SDKSubscriptionCycle,
	"next_subscription_cycle":    func() Field { f := SDKSubscriptionCycle; f.Required, f.Nullable = false, true; return f }(),
	"next_unordered_subscription_cycle": func() Field {
		f := SDKSubscriptionCycle
		f.Required, f.Nullable = false, true
		return f
	}(),
	"subscription_cycles": OArr(SDKSubscriptionCycle),
})

// SDKCoupon is the coupon both SDKs decode (3.4); createdAt must never be sent.
var SDKCoupon = RObj(Shape{
	"id": R("string"), "original_coupon_id": O("string"), "restored_coupon_id": O("string"),
	"product": SDKProduct, "area": SDKCouponArea, "activated": R("bool"), "environment": R("string"),
	"subscription": SDKSubscription, "tariff_settings_valid": O("bool"), "tariff_settings": O("object"),
	"earliest_activation_start_datetime": O("time"), "latest_activation_start_datetime": O("time"),
	"activatable_until": O("time"), "billable_item_id": O("string"),
	"createdAt": Field{Type: "absent"},
})

// SDKTicket is the ticket both SDKs decode (3.7–3.9).
var SDKTicket = RObj(Shape{
	"id": R("string"), "coupon_id": R("string"), "coupon_reactivation_key": O("string"),
	"product": RObj(Shape{"id": R("string"), "area_id": R("string"), "currency": R("string"), "ticket_type": R("string"),
		"customer_type": R("string"), "price_in_cents": R("int"), "local_ticket_name": R("string"), "duration_definition": R("string"),
		"local_validity_description": R("string"), "is_subscription": R("bool"), "duration_in_minutes": O("int"), "validity_in_minutes": O("int")}),
	"ticket": RObj(Shape{
		"meta": RObj(Shape{"version": R("string"), "template": R("string"), "requires_engine": R("string"),
			"available_rendering_options": OArr(R("string"))}),
		"properties": RObj(Shape{"identification_medium": R("object")}),
	}),
	"area": SDKTicketArea, "valid_from": R("time"), "valid_until": R("time"), "ticket_created_at": R("time"),
	"sold_at": R("time"), "environment": R("string"),
	"createdAt": Field{Type: "absent"}, "wasReactivated": Field{Type: "absent"},
})
