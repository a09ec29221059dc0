package departure

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// AppendDeparturesJSON appends deps as the JSON array encoding/json would
// write (HTML escaping off), without reflection: the departure board is the
// hottest response of the service. TestAppendDeparturesJSON keeps the two
// byte-identical.
func AppendDeparturesJSON(b []byte, deps []Departure) []byte {
	b = append(b, '[')
	for i := range deps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendDepartureJSON(b, &deps[i])
	}
	return append(b, ']')
}

// appendDepartureJSON appends one board entry as a JSON object.
func appendDepartureJSON(b []byte, d *Departure) []byte {
	b = append(b, `{"departure":{"scheduled_at":`...)
	b = strconv.AppendInt(b, d.Departure.ScheduledAt, 10)
	b = append(b, `,"predicted_at":`...)
	if p := d.Departure.PredictedAt; p != nil {
		b = strconv.AppendInt(b, *p, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"platform":`...)
	b = appendJSONString(b, d.Departure.Platform)
	t := &d.Trip
	b = append(b, `},"trip":{"id":`...)
	b = appendJSONString(b, t.ID)
	b = append(b, `,"headsign":`...)
	b = appendJSONString(b, t.Headsign)
	b = append(b, `,"line_name":`...)
	b = appendJSONString(b, t.LineName)
	b = append(b, `,"type":{"kind":`...)
	b = appendJSONString(b, t.Type.Kind)
	b = append(b, `,"product":`...)
	b = appendJSONString(b, t.Type.Product)
	b = append(b, `},"provider":`...)
	b = appendJSONString(b, t.Provider)
	b = append(b, `,"end_station_id":`...)
	b = appendJSONString(b, t.EndStationID)
	b = append(b, `,"cancelled":`...)
	b = strconv.AppendBool(b, t.Cancelled)
	b = append(b, `,"realtime":`...)
	b = strconv.AppendBool(b, t.Realtime)
	if t.Added {
		b = append(b, `,"added":true`...)
	}
	if t.ScheduledPlatform != nil {
		b = append(b, `,"scheduled_platform":`...)
		b = appendJSONString(b, *t.ScheduledPlatform)
	}
	if len(t.Alerts) > 0 {
		b = append(b, `,"alerts":`...)
		if t.alertsJSON != nil {
			b = append(b, t.alertsJSON...)
		} else {
			b = appendAlertsJSON(b, t.Alerts)
		}
	}
	return append(b, "}}"...)
}

// appendAlertsJSON appends alerts as encoding/json would.
func appendAlertsJSON(b []byte, as []Alert) []byte {
	b = append(b, '[')
	for i := range as {
		a := &as[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendJSONString(b, a.ID)
		b = append(b, `,"header":`...)
		b = appendJSONString(b, a.Header)
		b = append(b, `,"description":`...)
		b = appendJSONString(b, a.Description)
		b = append(b, `,"url":`...)
		b = appendJSONString(b, a.URL)
		b = append(b, `,"cause":`...)
		b = appendJSONString(b, a.Cause)
		b = append(b, `,"effect":`...)
		b = appendJSONString(b, a.Effect)
		b = append(b, `,"active_periods":`...)
		if a.ActivePeriods == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for j, p := range a.ActivePeriods {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"start":`...)
				b = appendOptInt(b, p.Start)
				b = append(b, `,"end":`...)
				b = appendOptInt(b, p.End)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendOptInt(b []byte, v *int64) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *v, 10)
}

// plainByte marks the bytes JSON copies verbatim (printable ASCII except
// the quote and backslash).
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString quotes s; plain printable ASCII (ids, most names) is
// copied directly, anything else goes through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s)
			return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
