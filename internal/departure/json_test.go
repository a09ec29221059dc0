package departure

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func stdJSON(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}

// TestAppendDeparturesJSON: byte-identical to encoding/json on real boards
// (with and without predictions) and on awkward strings.
func TestAppendDeparturesJSON(t *testing.T) {
	ix := index(t, nil, "caltrain", "caltrain-2023.zip", "sample", "sample-gtfs-feed-0.13.0.zip", "mn", "nyc/metro-north.zip")
	boards := 0
	for _, st := range ix.SearchByName("a", nil, 200) {
		for _, at := range []time.Time{time.Date(2023, 11, 7, 23, 0, 0, 0, time.UTC), time.Date(2019, 3, 30, 22, 0, 0, 0, time.UTC),
			time.Date(2026, 10, 6, 12, 0, 0, 0, time.UTC)} {
			deps, err := ix.Departures(st.ID, at, 20)
			if err != nil {
				t.Fatal(err)
			}
			if len(deps) > 0 {
				boards++
			}
			if got, want := AppendDeparturesJSON(nil, deps), stdJSON(t, deps); !bytes.Equal(got, want) {
				t.Fatalf("%s:\n got %s\nwant %s", st.ID, got, want)
			}
		}
	}
	if boards < 20 {
		t.Errorf("only %d non-empty boards compared", boards)
	}
	p := int64(-5)
	odd := []Departure{{Departure: DepartureTime{ScheduledAt: 1, PredictedAt: &p, Platform: "Gleis \"3\" <a&b>"},
		Trip: TripRef{ID: "x\\y", Headsign: "Zürich\u2028HB\x01", LineName: "\xff", Provider: "\t", Cancelled: true, Realtime: true}}}
	if got, want := AppendDeparturesJSON(nil, odd), stdJSON(t, odd); !bytes.Equal(got, want) {
		t.Errorf("odd strings:\n got %s\nwant %s", got, want)
	}
	start := int64(7)
	odd[0].Trip.Alerts = []Alert{{ID: "a\"", Header: "Ü<>", Cause: "strike"}, {ID: "b", ActivePeriods: []AlertPeriod{{Start: &start}, {End: &p}}}}
	if got, want := AppendDeparturesJSON(nil, odd), stdJSON(t, odd); !bytes.Equal(got, want) {
		t.Errorf("odd alerts:\n got %s\nwant %s", got, want)
	}
	// A real board with alerts (the test alerts feed over Caltrain).
	ax := index(t, alertsHub(t, false), "ct", "caltrain-2023.zip")
	deps, err := ax.DeparturesLang("farebox-station-ct_22nd_street", time.Unix(agencyStart+60, 0), 20, "es")
	if err != nil || len(deps) != 20 || len(deps[0].Trip.Alerts) == 0 {
		t.Fatalf("alerts board: %d entries, %v", len(deps), err)
	}
	if got, want := AppendDeparturesJSON(nil, deps), stdJSON(t, deps); !bytes.Equal(got, want) {
		t.Errorf("board with alerts:\n got %s\nwant %s", got, want)
	}
	if got := AppendDeparturesJSON(nil, nil); string(got) != "[]" {
		t.Errorf("empty board: %s", got)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "abc", "ü", "\x00", "\"\\", "\u2028", "\xff\xfe", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := appendJSONString(nil, s), stdJSON(t, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s want %s", s, got, want)
		}
	})
}

// BenchmarkDeparturesJSON compares the appender with encoding/json on a
// 10-entry board.
func BenchmarkDeparturesJSON(b *testing.B) {
	ix := index(b, nil, "caltrain", "caltrain-2023.zip")
	deps, err := ix.Departures("farebox-station-caltrain_22nd_street", time.Date(2023, 11, 8, 1, 0, 0, 0, time.UTC), 10)
	if err != nil || len(deps) != 10 {
		b.Fatal(err)
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		for i := 0; i < b.N; i++ {
			buf = AppendDeparturesJSON(buf[:0], deps)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _ = json.Marshal(deps)
		}
	})
}
