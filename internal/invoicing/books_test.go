package invoicing

import (
	"slices"
	"testing"
)

func TestGaps(t *testing.T) {
	gaps, bad := Gaps([]string{"2026-000001", "2026-000003", "TEST-2026-000001", "ZA-2026-000002", "2026-0000x4", "2026-000006"},
		map[string]int64{"2026": 7, "TEST-2026": 1, "ZA-2026": 2, "2025": 2})
	var got []string
	for _, g := range gaps {
		got = append(got, g.String())
	}
	want := []string{
		"series 2025: numbers 2025-000001 to 2025-000002 are missing",
		"series 2026: number 2026-000002 is missing",
		"series 2026: numbers 2026-000004 to 2026-000005 are missing",
		"series 2026: number 2026-000007 is missing",
		"series ZA-2026: number ZA-2026-000001 is missing",
	}
	if !slices.Equal(got, want) || !slices.Equal(bad, []string{"2026-0000x4"}) {
		t.Errorf("gaps %q bad %q", got, bad)
	}
	// A number above its counter (the counter was reset) still counts up to it.
	if gaps, _ := Gaps([]string{"2026-000003"}, map[string]int64{"2026": 1}); len(gaps) != 1 || gaps[0] != (NumberGap{"2026", 1, 2}) {
		t.Errorf("above the counter: %v", gaps)
	}
	// Many numbers without a gap: none.
	var many []string
	for i := int64(1); i <= 100000; i++ {
		many = append(many, Number("2026", i))
	}
	if gaps, bad := Gaps(many, map[string]int64{"2026": 100000}); len(gaps) != 0 || len(bad) != 0 {
		t.Errorf("gap-free series: %v %v", gaps, bad)
	}
}

func TestSplitNumber(t *testing.T) {
	for _, c := range []struct {
		in     string
		series string
		n      int64
		ok     bool
	}{
		{"2026-000001", "2026", 1, true},
		{"TEST-ZA-2026-1234567", "TEST-ZA-2026", 1234567, true},
		{"2026-1", "", 0, false},      // not Number's form
		{"2026-000000", "", 0, false}, // numbering starts at 1
		{"000001", "", 0, false},      // no series
		{"2026--00001", "", 0, false}, // a sign
		{"2026-00000a", "", 0, false}, // not a number
	} {
		s, n, ok := SplitNumber(c.in)
		if s != c.series || n != c.n || ok != c.ok {
			t.Errorf("%s: %q %d %v", c.in, s, n, ok)
		}
	}
}
