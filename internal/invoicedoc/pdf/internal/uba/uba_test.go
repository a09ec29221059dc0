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
		{"", ""},
	} {
		if got := visual(c.in); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
