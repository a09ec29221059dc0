package web

import (
	"html/template"
	"time"
)

// Ago writes t relative to now in the page's language ("3 minutes ago",
// "vor 3 Minuten") inside a <time> element whose datetime attribute is t in
// RFC 3339 and whose title is the absolute time (When), so a reader can
// always see the exact moment. A time under a minute ago (or a few seconds
// ahead, a clock's skew) is "just now"; one more than 30 days ago, or
// further ahead, is written absolute. A zero t is "—".
func Ago(lang string, t, now time.Time) template.HTML {
	if t.IsZero() {
		return "—"
	}
	abs := When(lang, t)
	text := abs
	switch d := now.Sub(t); {
	case d < -time.Minute || d > 30*24*time.Hour:
	case d < time.Minute:
		text = T(lang, "ago.now")
	case d < time.Hour:
		text = plural(lang, "ago.minute", int(d/time.Minute))
	case d < 24*time.Hour:
		text = plural(lang, "ago.hour", int(d/time.Hour))
	default:
		text = plural(lang, "ago.day", int(d/(24*time.Hour)))
	}
	return template.HTML(`<time datetime="` + t.UTC().Format(time.RFC3339) + `" title="` +
		template.HTMLEscapeString(abs) + `">` + template.HTMLEscapeString(text) + `</time>`) // every part escaped or a fixed format
}

// plural is message key (n == 1) or key+"s" with n.
func plural(lang, key string, n int) string {
	if n != 1 {
		key += "s"
	}
	return T(lang, key, n)
}
