package uba

import "testing"

// visual lays out s by Levels and Reorder, mirroring nothing.
func visual(s string) string {
	rs := []rune(s)
	lv, err := Levels(rs)
	if err != nil {
		return "error"
	}
	var out []rune
	for _, i := range Reorder(lv) {
		out = append(out, rs[i])
	}
	return string(out)
}

func TestVisualOrder(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"abc", "abc"},
		{"אבג", "גבא"},
		{"אבג 12", "12 גבא"},
		{"abc אבג 123 def", "abc 123 גבא def"},
		{"אבג 12 abc", "abc 12 גבא"},
		{"x אבג 12 דה y", "x הד 12 גבא y"},
		{"عنوان", "ناونع"},
		// N0: the brackets hold a Hebrew letter, so they go right to left
		// with the paragraph, not left to right with the Latin around "(".
		{"ש abc (def אבג) דה", "הד )גבא def( abc ש"},
		{"", ""},
	} {
		if got := visual(c.in); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

// benchLine is one invoice line mixing Hebrew, Latin, digits, a currency
// sign and brackets.
var benchLine = []rune("חשבונית 2024-117 (Farebox Ltd.): כרטיס חודשי ₪ 245.50, תחנה Central [קו 18] – שולם")

func BenchmarkLevels(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Levels(benchLine); err != nil {
			b.Fatal(err)
		}
	}
}
