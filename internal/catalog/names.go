package catalog

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// FoldName normalises a city name for matching: lower case, ß → ss,
// umlaut spellings ae/oe/ue → a/o/u, accents removed, any run of
// non-alphanumerics a single space, trimmed. "  MÜNCHEN", "Muenchen" and
// "münchen" all fold to "munchen"; "Frankfurt (Main)" and "Frankfurt/Main"
// to "frankfurt main".
func FoldName(s string) string {
	var b strings.Builder
	space := false
	for _, r := range norm.NFD.String(strings.ToLower(s)) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue // combining accent
		case r == 'ß':
			b.WriteString("ss")
		case r == 'ø':
			b.WriteByte('o')
		case r == 'ł':
			b.WriteByte('l')
		case r == 'æ':
			b.WriteString("ae")
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
		default:
			space = true
			continue
		}
		space = false
	}
	f := b.String()
	// Umlauts written out (ue for ü): fold both spellings to the bare vowel.
	return strings.NewReplacer("ae", "a", "oe", "o", "ue", "u").Replace(f)
}
