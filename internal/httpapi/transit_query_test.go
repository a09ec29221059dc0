package httpapi

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTransitQuery(t *testing.T) {
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
		if got := transitQuery(raw); !cmp.Equal(got, want) {
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
			if got[k] != vs[0] {
				t.Fatalf("%q: %s = %q, url.ParseQuery says %q", raw, k, got[k], vs[0])
			}
		}
		if len(got) != len(std) {
			t.Fatalf("%q: %d names, url.ParseQuery %d", raw, len(got), len(std))
		}
		if _, err := epochMillis(got, "time", time.Time{}, false); err != nil && got["time"] == "" {
			t.Fatalf("empty time rejected: %v", err)
		}
	})
}
