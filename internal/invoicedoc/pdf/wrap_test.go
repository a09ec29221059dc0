package pdf

import (
	"strings"
	"testing"

	"github.com/boxesandglue/boxesandglue/backend/bag"
)

// lineText joins a wrapped line's spans, non-breaking spaces as spaces.
func lineText(ln []span) string {
	var b strings.Builder
	for _, s := range ln {
		b.WriteString(s.text)
	}
	return strings.ReplaceAll(b.String(), "\u00a0", " ")
}

// TestWrap checks the line breaker on its own: no line is wider than the
// column (the spaces' shrink allowed), nothing is lost or added (only the
// spaces where lines break go), styles stay with their text, a reference
// breaks at its slash, and a column narrower than a character still
// makes progress.
func TestWrap(t *testing.T) {
	mm := func(s string) bag.ScaledPoint { return bag.MustSP(s) }
	cases := []struct {
		name  string
		spans []span
		width bag.ScaledPoint
		size  float64
	}{
		{"words", []span{plain(notesText(2000, true))}, contentWidth, 10},
		{"unbroken", []span{plain(notesText(2000, false))}, contentWidth, 10},
		{"reference", []span{plain("PO-2026-000000123456/KST-4711/AB-99")}, mm("41mm") - 2*cellPad, 8.5},
		{"upper W", []span{plain(strings.Repeat("W", 35))}, mm("85mm"), 10},
		{"mixed styles", []span{bold("Zahlung "), muted(notesText(300, false)), plain(" und " + notesText(300, true))}, mm("60mm"), 9},
		{"narrow", []span{bold("WWWW")}, mm("2mm"), 10},
		{"span boundary", []span{plain("Summe"), bold(notesText(400, false))}, mm("60mm"), 9},
		{"amounts", []span{plain(strings.Repeat("Bitte überweisen Sie 58,00 € zu 7 % bis morgen ", 40))}, mm("40mm"), 10},
		{"combining marks", []span{plain(strings.Repeat("e\u0301", 200))}, mm("30mm"), 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines := wrap(c.spans, c.width, c.size)
			var got []string
			for i, ln := range lines {
				var w, shrink bag.ScaledPoint
				for _, s := range ln {
					w += textWidth(s.text, s.bold, c.size)
					shrink += bag.ScaledPoint(strings.Count(s.text, "\u00a0")) * spaceShrink(c.size)
					for _, r := range s.text {
						if r == ' ' {
							t.Errorf("line %d has a breakable space: %q", i, s.text)
						}
					}
				}
				if w-shrink > c.width && !(c.name == "narrow" && len([]rune(lineText(ln))) == 1) {
					t.Errorf("line %d is %.1f pt wide, the column %.1f pt: %q", i, w.ToPT(), c.width.ToPT(), lineText(ln))
				}
				if strings.HasPrefix(strings.TrimLeft(lineText(ln), " "), "\u0301") {
					t.Errorf("line %d starts with a combining mark", i)
				}
				if l := lineText(ln); strings.HasPrefix(l, "€") || strings.HasPrefix(l, "%") {
					t.Errorf("line %d starts with a unit torn from its number: %q", i, l)
				}
				got = append(got, lineText(ln))
			}
			var want strings.Builder
			for _, s := range c.spans {
				want.WriteString(s.text)
			}
			if g, w := strings.Join(got, ""), strings.Join(strings.Fields(want.String()), ""); strings.ReplaceAll(g, " ", "") != w {
				t.Errorf("text changed:\n got %.200q\nwant %.200q", g, w)
			}
			if g, w := strings.Count(strings.Join(got, ""), " "), strings.Count(want.String(), " "); g > w {
				t.Errorf("%d spaces set, the text has %d", g, w)
			}
			// Styles: every character keeps its span's weight and colour.
			var styled, orig strings.Builder
			for _, ln := range lines {
				for _, s := range ln {
					for _, r := range strings.ReplaceAll(s.text, "\u00a0", "") {
						styled.WriteString(string(r) + map[bool]string{true: "b", false: "r"}[s.bold] + s.color + "|")
					}
				}
			}
			for _, s := range c.spans {
				for _, r := range strings.Join(strings.Fields(s.text), "") {
					orig.WriteString(string(r) + map[bool]string{true: "b", false: "r"}[s.bold] + s.color + "|")
				}
			}
			if styled.String() != orig.String() {
				t.Error("a character changed its style")
			}
			if c.name == "reference" {
				if len(got) != 2 || !(strings.HasSuffix(got[0], "/") || strings.HasPrefix(got[1], "/")) {
					t.Errorf("reference broken as %q, want two lines broken at the first slash", got)
				}
			}
		})
	}
}
