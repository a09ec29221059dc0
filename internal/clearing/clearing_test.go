package clearing

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestStateOf: the table's decisions, including its mess: a code in two
// states goes to the state of most of its places, a tie and a row without
// a state are unmapped with the reason, unknown codes are not guessed.
func TestStateOf(t *testing.T) {
	for code, want := range map[string]State{
		"80331": "DE-BY", "10115": "DE-BE", "20095": "DE-HH", "01067": "DE-SN", "99084": "DE-TH", "66111": "DE-SL",
		"28195": "DE-HB", "14467": "DE-BB", // both spellings and code schemes of the source
		"10875": "DE-BE", "14715": "DE-BB", "31131": "DE-NI", // several states: the majority of places
		"12529": Unmapped, "07919": Unmapped, "87491": Unmapped, "00000": Unmapped, "": Unmapped, "1234": Unmapped,
		NotGermany: Abroad,
	} {
		got, why := StateOf(code)
		if got != want || (got == Unmapped) != (why != "") {
			t.Errorf("StateOf(%q) = %s %q, want %s", code, got, why, want)
		}
	}
	if _, why := StateOf("12529"); !strings.Contains(why, "tie") {
		t.Errorf("12529: %q", why)
	}
	if _, why := StateOf("87491"); !strings.Contains(why, "Jungholz") {
		t.Errorf("87491: %q", why)
	}
	seen := map[State]int{}
	for n := 0; n < 100000; n++ {
		if v := byCode[n]; v != 0 && v != undecided {
			seen[States[v-1]]++
		}
	}
	if len(seen) != 16 || TableSize() != 10814 {
		t.Errorf("the table maps to %d states, knows %d codes", len(seen), TableSize())
	}
	un := 0
	for _, n := range TableNotes() {
		if n.State == "" {
			un++
		}
	}
	if un != 6 || len(TableNotes()) != 33 {
		t.Errorf("%d unmappable codes, %d notes", un, len(TableNotes()))
	}
}

// TestShapes: one outline per state, in the view box.
func TestShapes(t *testing.T) {
	if len(Shapes) != 16 || MapViewBox != "0 0 600 810" {
		t.Fatalf("%d shapes, view box %q", len(Shapes), MapViewBox)
	}
	for _, s := range Shapes {
		if s.State.Name() == "" || !strings.HasPrefix(s.Path, "M") || !strings.HasSuffix(s.Path, "Z") {
			t.Errorf("%s %q: %.40s", s.State, s.Name, s.Path)
		}
	}
}

func TestMonth(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	m, err := ParseMonth("2026-11")
	if err != nil || m.String() != "2026-11" || m.Add(2).String() != "2027-01" || m.Add(-11).String() != "2025-12" {
		t.Fatalf("%v %v", m, err)
	}
	if got := m.Start(berlin).UTC().Format(time.RFC3339); got != "2026-10-31T23:00:00Z" {
		t.Errorf("start %s", got)
	}
	if MonthOf(time.Date(2026, 5, 31, 22, 0, 0, 0, time.UTC), berlin).String() != "2026-06" {
		t.Error("MonthOf in Berlin")
	}
	for _, bad := range []string{"", "2026-13", "2026-00", "2026-1", "2026/11", "20261-1", "2023-04", "+026-11", "2026-1a"} {
		if _, err := ParseMonth(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParseMonth: whatever the input, a parsed month prints as the input.
func FuzzParseMonth(f *testing.F) {
	for _, s := range []string{"2026-11", "2023-05", "2023-04", "9999-12", "2026-13", "", "abcd-ef", "２０２６-11", "2026-11\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMonth(s)
		if err == nil && m.String() != s {
			t.Fatalf("%q parsed as %s", s, m)
		}
		if err != nil && !strings.Contains(err.Error(), "month") {
			t.Fatalf("%q: %v", s, err)
		}
	})
}

// FuzzPostalCode: a stored tariff setting gives a valid code or none, and
// every code a row.
func FuzzPostalCode(f *testing.F) {
	for _, s := range []string{`{"german_postal_code":"10115"}`, `{"german_postal_code":"not-germany"}`, `{"german_postal_code":12345}`,
		`{}`, `null`, `{"german_postal_code":"1011５"}`, `[`, `{"german_postal_code":"10115","x":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		code := PostalCodeOf([]byte(s))
		if code != "" {
			if _, err := ParsePostalCode(code); err != nil {
				t.Fatalf("%q gave %q: %v", s, code, err)
			}
		}
		st, why := StateOf(code)
		if !st.Valid() || (st == Unmapped && why == "") {
			t.Fatalf("%q: %s %q", code, st, why)
		}
		var m map[string]json.RawMessage
		var v string
		if json.Unmarshal([]byte(s), &m) == nil && json.Unmarshal(m[PostalField], &v) == nil && code == "" {
			if _, err := ParsePostalCode(v); err == nil {
				t.Fatalf("%q: valid code %q not read", s, v)
			}
		}
	})
}
