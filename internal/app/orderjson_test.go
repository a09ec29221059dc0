package app

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/products"
)

// TestOrderJSONAsMarshalled: appendOrder writes the bytes add writes for
// the same Order view (json.Marshal after refer and WithMarkers), for
// every shape the view takes: with and without parts, nil and set
// pointers, strings that json.Marshal escapes, raw tariff settings to
// compact, a subscription with and without cycles.
func TestOrderJSONAsMarshalled(t *testing.T) {
	str := func(s string) *string { return &s }
	at := func(s string) timestamp {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return timestamp(tm)
	}
	ts := func(s string) *timestamp { v := at(s); return &v }
	yes, no := true, false
	product := products.ProductJSON{ID: "p1", LocalTicketName: "Bus & <Bahn>", TicketType: "single",
		IdentificationMediumSchema: json.RawMessage(`{ "type" : "object", "x":"<&>" }`), TariffSettingsSchema: json.RawMessage("null")}
	area := products.AreaJSON{ID: "a1", Type: "Feature", Properties: products.AreaProps{Name: "Zone\u2028A", CityNames: []string{}},
		Geometry: json.RawMessage(`{"type":"Point","coordinates":[13.4, 52.5]}`)}
	cycle := cycleJSON{ID: "c1", ProductID: "p1", ValidFrom: ts("2026-06-01T00:00:00.5+02:00"), ValidUntil: ts("2026-07-01T00:00:00Z"),
		Ordered: true, BillableItemID: str("b1")}
	sub := SubscriptionJSON{ID: "s1", RestoredSubscriptionID: str("s0"), Active: true, Activate: true, CurrentSubscriptionCycle: cycle,
		CurrentCycleValidFrom: cycle.ValidFrom, NextUnorderedSubscriptionCycle: &cycleJSON{ID: "c2", ProductID: "p1"},
		SubscriptionCycles: []cycleJSON{cycle, {ID: "c2", ProductID: "p1"}}, EndsAt: ts("2027-01-01T00:00:00Z")}
	bare := SubscriptionJSON{ID: "s2", CurrentSubscriptionCycle: cycleJSON{ID: "c3"}}
	coupons := []CouponJSON{
		{ID: "k1", Product: product, Area: area, Environment: "live", TariffSettings: json.RawMessage("null"),
			EarliestActivationStartDatetime: at("2026-06-01T10:00:00Z"), LatestActivationStartDatetime: at("0001-01-01T00:00:00Z")},
		{ID: "k2", OriginalCouponID: str("k0"), RestoredCouponID: str("k3"), Product: product, Area: area, Subscription: &sub,
			Activated: true, Environment: "test", BillableItemID: str("b2"), TariffSettings: json.RawMessage(` {"zone" : "<A&B>", "n":[1, 2]} `),
			TariffSettingsValid: &yes, ActivatableUntil: ts("2026-06-02T10:00:00.999Z")},
		{ID: "k4\"\\\x01é\xff", Subscription: &bare, TariffSettingsValid: &no},
	}
	parts := products.Parts{"p1": {"0123456789abcdef0123456789abcdef"}, "a1": {"fedcba9876543210fedcba9876543210"}}
	for name, c := range map[string]struct {
		ps products.Parts
		v  OrderJSON
	}{
		"no parts":  {nil, OrderJSON{OrderID: "o1", Environment: "live", Coupons: coupons, CouponID: "k1"}},
		"parts":     {parts, OrderJSON{OrderID: "o1", OptionalOrderReference: str("ref <1> & \"2\""), Environment: "live", Coupons: coupons, CouponID: "k1"}},
		"secret":    {parts, OrderJSON{OrderID: "o2", RestoreSecret: "r1", Environment: "test", Coupons: coupons[1:2], TestClock: str("clock1")}},
		"empty":     {parts, OrderJSON{OrderID: "o3", Environment: "live", Coupons: []CouponJSON{}}},
		"nil lists": {parts, OrderJSON{OrderID: "o4"}},
		"nil both":  {nil, OrderJSON{OrderID: "o5"}},
	} {
		var obj any = c.v
		if c.ps != nil { // as add does
			obj = refer(c.ps, c.v)
		}
		want, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		want = products.WithMarkers(want)
		got, err := appendOrder(nil, c.ps, c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
