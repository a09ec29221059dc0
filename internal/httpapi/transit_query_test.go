package httpapi

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/google/go-cmp/cmp"
)

func TestTransitQuery(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]map[string]string{
		"":                                    {},
		"station_id=a&time=1&":                {"station_id": "a", "time": "1"},
		"&&query=Hbf%20S%C3%BCd&":             {"query": "Hbf Süd"},
		"query=Hbf+S%C3%BCd":                  {"query": "Hbf Süd"},
		"query=100%&x=%zz":                    {"query": "100%", "x": "%zz"},
		"query=a+b%":                          {"query": "a b%"},
		"line_name=S1&line_name=S2":           {"line_name": "S1"},
		"api_key=fbx_live_X&station_id=s_1~2": {"api_key": "fbx_live_X", "station_id": "s_1~2"},
		"flag":                                {"flag": ""},
		"=v":                                  {"": "v"},
	} {
		got := map[string]string{}
		for _, p := range transitQuery(raw) {
			got[p.name] = p.value
		}
		if !cmp.Equal(got, want) {
			t.Errorf("transitQuery(%q) = %v, want %v", raw, got, want)
		}
	}
}

// FuzzTransitQuery: the lenient parser never panics, agrees with
// url.ParseQuery wherever that succeeds, and keeps every non-empty pair.
func FuzzTransitQuery(f *testing.F) {
	for _, s := range []string{"station_id=a&time=1&", "query=Hbf S%C3%BCd", "q=100%", "a=%zz&a=2", "&&&", "x=+%2B+", "=;=&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := transitQuery(raw)
		if strings.Contains(raw, ";") {
			return // ParseQuery rejects ';', we treat it as data
		}
		std, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		for k, vs := range std {
			if v, _ := got.lookup(k); v != vs[0] {
				t.Fatalf("%q: %s = %q, url.ParseQuery says %q", raw, k, v, vs[0])
			}
		}
		if len(got) != len(std) {
			t.Fatalf("%q: %d names, url.ParseQuery %d", raw, len(got), len(std))
		}
		if _, err := epochMillis(got, "time", time.Time{}, false); err != nil && got.value("time") == "" {
			t.Fatalf("empty time rejected: %v", err)
		}
	})
}

// FuzzTransitParams drives every transit handler's parameter parsing with
// arbitrary query strings: it never panics, and every rejection is a 400
// naming one of the endpoint's parameters (or 503: no transit data here).
func FuzzTransitParams(f *testing.F) {
	for _, s := range []string{"station_id=x&time=1&max_departures=3&", "query=a&latitude=1&longitude=2", "latitude=91",
		"origins_from_station_id=a&origins_from_departure_time=1&destination_station_id=b&destination_arrival_time=x",
		"query=x&id_type=dhid", "time=99999999999999999999", "max_departures=-1", "latitude=NaN&longitude=1"} {
		f.Add(s)
	}
	s := New(Deps{App: app.New(app.Options{Clock: clocktest.NewFixed(time.Unix(1_700_000_000, 0))})})
	params := map[string]bool{"station_id": true, "time": true, "max_departures": true, "query": true, "latitude": true,
		"longitude": true, "id_type": true, "origins_from_station_id": true, "origins_from_departure_time": true,
		"destination_station_id": true, "destination_arrival_time": true}
	handlers := []handlerFunc{s.getDepartures, s.searchStationsByName, s.searchStationsByPosition, s.searchStationByID,
		s.searchTripByCharacteristics, s.getAttributions}
	f.Fuzz(func(t *testing.T, raw string) {
		for i, h := range handlers {
			r := httptest.NewRequest("GET", "/x", nil)
			r.URL.RawQuery = raw
			err := h(httptest.NewRecorder(), r)
			ae := apperr.As(err)
			switch {
			case err == nil:
				t.Fatalf("handler %d answered without transit data", i)
			case apperr.KindOf(err) == apperr.Unavailable:
			case apperr.KindOf(err) == apperr.Invalid && ae != nil && len(ae.Details) == 1 && params[ae.Details[0].Field]:
			default:
				t.Fatalf("handler %d, %q: %v", i, raw, err)
			}
		}
	})
}
