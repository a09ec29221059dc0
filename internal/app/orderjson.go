package app

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/farebox/farebox/internal/app/products"
)

// The order.created event's object, encoded without reflection: the
// event costs an order what encoding its object costs (docs/events.md,
// "Cost"), and json.Marshal of the Order view was most of it. appendOrder
// writes exactly the bytes json.Marshal writes for the same view after
// refer and products.WithMarkers (TestOrderJSONAsMarshalled holds it to
// that for every shape the views take); any value it has no fast path
// for goes through json.Marshal itself.

// appendOrder appends the Order v as an event's object: its products and
// areas as references to the parts of ps (as refer puts them).
func appendOrder(b []byte, ps products.Parts, v OrderJSON) ([]byte, error) {
	b = append(b, `{"order_id":`...)
	b = appendJSONString(b, v.OrderID)
	b = append(b, `,"optional_order_reference":`...)
	b = appendJSONStringPtr(b, v.OptionalOrderReference)
	if v.RestoreSecret != "" {
		b = append(b, `,"restore_secret":`...)
		b = appendJSONString(b, v.RestoreSecret)
	}
	b = append(b, `,"environment":`...)
	b = appendJSONString(b, v.Environment)
	if v.CouponID != "" {
		b = append(b, `,"coupon_id":`...)
		b = appendJSONString(b, v.CouponID)
	}
	b = append(b, `,"coupons":`...)
	if v.Coupons == nil && ps == nil { // refer makes a nil list empty
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range v.Coupons {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCoupon(b, ps, c); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	}
	if v.TestClock != nil {
		b = append(b, `,"test_clock":`...)
		b = appendJSONString(b, *v.TestClock)
	}
	return append(b, '}'), nil
}

// appendCoupon appends the Coupon c of an order's event object.
func appendCoupon(b []byte, ps products.Parts, c CouponJSON) ([]byte, error) {
	var err error
	b = append(b, `{"id":`...)
	b = appendJSONString(b, c.ID)
	b = append(b, `,"original_coupon_id":`...)
	b = appendJSONStringPtr(b, c.OriginalCouponID)
	b = append(b, `,"restored_coupon_id":`...)
	b = appendJSONStringPtr(b, c.RestoredCouponID)
	b = append(b, `,"product":`...)
	if b, err = products.AppendEmbedded(b, ps.ReferProduct(c.Product)); err != nil {
		return b, err
	}
	b = append(b, `,"area":`...)
	if b, err = products.AppendEmbedded(b, ps.ReferArea(c.Area)); err != nil {
		return b, err
	}
	b = append(b, `,"subscription":`...)
	if c.Subscription == nil {
		b = append(b, "null"...)
	} else if b, err = appendSubscription(b, c.Subscription); err != nil {
		return b, err
	}
	b = append(b, `,"activated":`...)
	b = strconv.AppendBool(b, c.Activated)
	b = append(b, `,"environment":`...)
	b = appendJSONString(b, c.Environment)
	b = append(b, `,"billable_item_id":`...)
	b = appendJSONStringPtr(b, c.BillableItemID)
	b = append(b, `,"tariff_settings":`...)
	if b, err = appendRawJSON(b, c.TariffSettings); err != nil {
		return b, err
	}
	b = append(b, `,"tariff_settings_valid":`...)
	if c.TariffSettingsValid == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendBool(b, *c.TariffSettingsValid)
	}
	b = append(b, `,"earliest_activation_start_datetime":`...)
	b = appendTimestamp(b, c.EarliestActivationStartDatetime)
	b = append(b, `,"latest_activation_start_datetime":`...)
	b = appendTimestamp(b, c.LatestActivationStartDatetime)
	if c.ActivatableUntil != nil {
		b = append(b, `,"activatable_until":`...)
		b = appendTimestamp(b, *c.ActivatableUntil)
	}
	return append(b, '}'), nil
}

// appendSubscription appends the Subscription s.
func appendSubscription(b []byte, s *SubscriptionJSON) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, s.ID)
	b = append(b, `,"original_subscription_id":`...)
	b = appendJSONStringPtr(b, s.OriginalSubscriptionID)
	b = append(b, `,"restored_subscription_id":`...)
	b = appendJSONStringPtr(b, s.RestoredSubscriptionID)
	for _, f := range [...]struct {
		key string
		v   bool
	}{{`,"active":`, s.Active}, {`,"activate":`, s.Activate}, {`,"coupon_reactivatable":`, s.CouponReactivatable},
		{`,"subscription_reorderable":`, s.SubscriptionReorderable}} {
		b = append(b, f.key...)
		b = strconv.AppendBool(b, f.v)
	}
	b = append(b, `,"current_cycle_valid_from":`...)
	b = appendTimestampPtr(b, s.CurrentCycleValidFrom)
	b = append(b, `,"current_cycle_valid_until":`...)
	b = appendTimestampPtr(b, s.CurrentCycleValidUntil)
	b = append(b, `,"ordered_until":`...)
	b = appendTimestampPtr(b, s.OrderedUntil)
	b = append(b, `,"current_subscription_cycle":`...)
	b = appendCycle(b, &s.CurrentSubscriptionCycle)
	b = append(b, `,"next_subscription_cycle":`...)
	b = appendCycle(b, s.NextSubscriptionCycle)
	b = append(b, `,"next_unordered_subscription_cycle":`...)
	b = appendCycle(b, s.NextUnorderedSubscriptionCycle)
	b = append(b, `,"subscription_cycles":`...)
	if s.SubscriptionCycles == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range s.SubscriptionCycles {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCycle(b, &s.SubscriptionCycles[i])
		}
		b = append(b, ']')
	}
	b = append(b, `,"cancelled_at":`...)
	b = appendTimestampPtr(b, s.CancelledAt)
	b = append(b, `,"ends_at":`...)
	b = appendTimestampPtr(b, s.EndsAt)
	return append(b, '}'), nil
}

// appendCycle appends the Subscription cycle c (null for nil).
func appendCycle(b []byte, c *cycleJSON) []byte {
	if c == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"id":`...)
	b = appendJSONString(b, c.ID)
	b = append(b, `,"product_id":`...)
	b = appendJSONString(b, c.ProductID)
	b = append(b, `,"valid_from":`...)
	b = appendTimestampPtr(b, c.ValidFrom)
	b = append(b, `,"valid_until":`...)
	b = appendTimestampPtr(b, c.ValidUntil)
	b = append(b, `,"ordered":`...)
	b = strconv.AppendBool(b, c.Ordered)
	b = append(b, `,"coupon_activated":`...)
	b = strconv.AppendBool(b, c.CouponActivated)
	b = append(b, `,"billable_item_id":`...)
	b = appendJSONStringPtr(b, c.BillableItemID)
	return append(b, '}')
}

// appendTimestamp appends t as timestamp.MarshalJSON writes it
// (clock.Timestamp: RFC 3339 UTC, whole seconds).
func appendTimestamp(b []byte, t timestamp) []byte {
	b = append(b, '"')
	b = time.Time(t).UTC().Truncate(time.Second).AppendFormat(b, time.RFC3339)
	return append(b, '"')
}

func appendTimestampPtr(b []byte, t *timestamp) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return appendTimestamp(b, *t)
}

// appendJSONString appends s as json.Marshal writes a string: quoted as
// it is when it holds only printable ASCII that needs no escape (ids,
// names of most catalogs), else through json.Marshal (escapes, HTML
// characters, invalid UTF-8).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s) // a string always marshals
			return append(b, raw...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendJSONStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

// appendRawJSON appends raw as json.Marshal writes a json.RawMessage
// (compacted, HTML characters escaped; null when empty).
func appendRawJSON(b []byte, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return append(b, "null"...), nil
	}
	out, err := json.Marshal(raw)
	if err != nil {
		return b, err
	}
	return append(b, out...), nil
}

// orderAnswer is the order POST's answer as the transport writes it
// (json.Encoder without HTML escaping, a final newline), made of the
// order.created object obj: the restore secret put in after
// optional_order_reference (the Order's field order) and the parts'
// answers in place of the references. ok is false when the bytes could
// differ from the encoder's: obj holds a \u00 escape (json.Marshal
// escapes <, > and & where the answer does not; a control character or a
// partner's own escape is left to the encoder too), or a part is not
// among answers (another catalog version).
func orderAnswer(obj []byte, secret string, answers products.PartAnswers) (answer []byte, ok bool) {
	at := bytes.Index(obj, environmentKey)
	if at < 0 || bytes.Contains(obj, []byte(`\u00`)) {
		return nil, false
	}
	out := make([]byte, 0, len(obj)+answerPartsSize)
	out = append(out, obj[:at]...)
	if secret != "" {
		out = append(out, `,"restore_secret":`...)
		if out = appendJSONString(out, secret); bytes.Contains(out[at:], []byte(`\u00`)) {
			return nil, false
		}
	}
	rest := obj[at:]
	for {
		i := bytes.Index(rest, partMarker)
		if i < 0 {
			break
		}
		out = append(out, rest[:i]...)
		rest = rest[i+len(partMarker):]
		if len(rest) < products.PartHashLen+2 {
			return nil, false
		}
		body, ok := answers[string(rest[:products.PartHashLen])]
		if !ok {
			return nil, false
		}
		out = append(out, body...)
		rest = rest[products.PartHashLen+2:] // the hash and `"}`
	}
	out = append(out, rest...)
	return append(out, '\n'), true
}

var (
	environmentKey = []byte(`,"environment":`) // the first is the Order's: a string's quotes are escaped
	partMarker     = []byte(products.PartMarker)
)

// answerPartsSize is room for the parts of most orders' answers.
const answerPartsSize = 8192
