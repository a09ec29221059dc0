package pdf

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	pdflib "github.com/boxesandglue/baseline-pdf"
	"github.com/boxesandglue/boxesandglue/backend/bag"
	"github.com/boxesandglue/boxesandglue/backend/lang"
	"github.com/boxesandglue/textshape/ot"
)

// Line breaking is done here, before the library sees the text: greedy,
// ragged, linear in the length of the text, and never wider than the
// column. The library's Knuth–Plass breaker with hyphenation is super-linear
// in unbroken words (the hyphenator looks at every substring of a word; a
// 5,000-letter word took over two minutes), lets a word without a feasible
// break run off the page, and hyphenates URLs. Each line handed to the
// library fits its width, its spaces are non-breaking and it is set without
// hyphenation patterns, so the library keeps it as one line.
//
// A word wider than the column is broken between two characters: after the
// last separator (slash, hyphen, dot ...) that leaves the line at least half
// full, otherwise after the last character that fits. No hyphen is added, so
// references, URLs and e-mail addresses read exactly as given.

const separators = "/-._:?&=#,;+~\\|@"

// glue keeps a unit with its amount ("58,00 €", "7 %"): the space before it
// becomes a no-break space, which wrap never breaks at.
var glue = strings.NewReplacer(" €", "\u00a0€", " %", "\u00a0%")

// breakSpace reports whether a line may break at r: any white space but the
// no-break spaces.
func breakSpace(r rune) bool {
	return unicode.IsSpace(r) && r != '\u00a0' && r != '\u202f' && r != '\u2007'
}

// wrap splits spans into lines no wider than width; "\n" starts a new line.
func wrap(spans []span, width bag.ScaledPoint, size float64) [][]span {
	w := wrapper{width: width, size: size}
	for _, s := range spans {
		for i, part := range strings.Split(glue.Replace(s.text), "\n") {
			if i > 0 {
				w.newline()
			}
			w.add(s, part)
		}
	}
	w.newline()
	return w.lines
}

type wrapper struct {
	width   bag.ScaledPoint
	size    float64
	lines   [][]span
	cur     []span
	curW    bag.ScaledPoint
	space   bool // a space is pending before the next word
	spaceOf span // the style of that space
	spaces  int  // spaces on the current line
}

func (w *wrapper) newline() {
	w.lines = append(w.lines, w.cur)
	w.cur, w.curW, w.space, w.spaces = nil, 0, false, 0
}

// The library sets a space as glue of 333/1000 em that may shrink by
// 111/1000 em (backend/font.NewFont).
func spaceWidth(size float64) bag.ScaledPoint  { return bag.ScaledPointFromFloat(size * 0.333) }
func spaceShrink(size float64) bag.ScaledPoint { return bag.ScaledPointFromFloat(size * 0.111) }

// put appends text in the style of s to the current line.
func (w *wrapper) put(s span, text string, width bag.ScaledPoint) {
	if n := len(w.cur); n > 0 && w.cur[n-1].bold == s.bold && w.cur[n-1].color == s.color {
		w.cur[n-1].text += text
	} else {
		w.cur = append(w.cur, span{text: text, bold: s.bold, color: s.color})
	}
	w.curW += width
}

// add appends the words of text, breaking lines where needed.
func (w *wrapper) add(s span, text string) {
	for len(text) > 0 {
		r, n := utf8.DecodeRuneInString(text)
		if breakSpace(r) {
			if len(w.cur) > 0 {
				w.space, w.spaceOf = true, s
			}
			text = text[n:]
			continue
		}
		end := strings.IndexFunc(text, breakSpace)
		if end < 0 {
			end = len(text)
		}
		w.word(s, text[:end])
		text = text[end:]
	}
}

// word places one word (no spaces) on the current line or the next ones.
func (w *wrapper) word(s span, word string) {
	ww := textWidth(word, s.bold, w.size)
	var sw bag.ScaledPoint
	shrink := bag.ScaledPoint(w.spaces) * spaceShrink(w.size)
	if w.space {
		sw = spaceWidth(w.size)
		shrink += spaceShrink(w.size)
	}
	if w.curW+sw+ww-shrink <= w.width {
		if w.space {
			w.put(w.spaceOf, "\u00a0", sw)
			w.space = false
			w.spaces++
		}
		w.put(s, word, ww)
		return
	}
	if len(w.cur) > 0 && ww <= w.width {
		w.newline()
		w.put(s, word, ww)
		return
	}
	// Wider than the column: fill the rest of this line when a useful part
	// fits, then cut line by line.
	if len(w.cur) > 0 {
		if rest := w.width - w.curW - sw; rest >= w.width/4 {
			if head, tail := cut(word, s.bold, w.size, rest); head != "" && textWidth(head, s.bold, w.size) <= rest {
				if w.space {
					w.put(w.spaceOf, "\u00a0", sw)
					w.spaces++
				}
				w.put(s, head, textWidth(head, s.bold, w.size))
				word = tail
			}
		}
		w.newline()
	}
	for {
		head, tail := cut(word, s.bold, w.size, w.width)
		w.put(s, head, textWidth(head, s.bold, w.size))
		if tail == "" {
			return
		}
		w.newline()
		word = tail
	}
}

// cut splits word so that head is no wider than room: after the last
// separator that leaves head at least half as wide as room, otherwise after
// the last character that fits, and at least one character when room is
// smaller than that. A character keeps its combining marks.
func cut(word string, bold bool, size float64, room bag.ScaledPoint) (head, tail string) {
	face := faceFor(bold)
	var wd bag.ScaledPoint
	fit, sep := 0, 0
	last := 0 // start of the previous cluster
	for i := 0; i < len(word); {
		r, n := utf8.DecodeRuneInString(word[i:])
		end := i + n
		for end < len(word) {
			m, k := utf8.DecodeRuneInString(word[end:])
			if !unicode.In(m, unicode.Mn, unicode.Me, unicode.Mc) {
				break
			}
			end += k
		}
		wd += face.width(word[i:end], size)
		if i > 0 {
			// the kerning between this cluster and the previous one
			wd += face.width(word[last:end], size) - face.width(word[last:i], size) - face.width(word[i:end], size)
		}
		last = i
		if wd > room && fit > 0 {
			break
		}
		fit = end
		if strings.ContainsRune(separators, r) && wd >= room/2 {
			sep = end
		}
		i = end
	}
	if sep > 0 && fit < len(word) {
		fit = sep
	}
	return word[:fit], word[fit:]
}

// faceMetrics measures text with a face parsed once per process: advance
// widths plus the pair kerning the shaper applies (DejaVu widens some
// pairs: 35 × "Ä" is 6.6 pt wider at 9 pt than its advances, which ran a
// split note past the margin, TestSplitNoteInsideMargin).
// Text with a character that is not simple (text.go) is measured as
// complexLine sets it: shaped, with the fallback fonts.
type faceMetrics struct {
	proto   *faceProto
	bold    bool
	mu      sync.Mutex
	em      map[rune]runeMetric
	kern    map[[2]rune]float64
	reverse map[ot.GlyphID]rune
}

type runeMetric struct {
	adv    float64
	simple bool
}

// maxCachedRunes bounds the width cache (text may hold any code point).
const maxCachedRunes = 4096

var (
	regularMetrics = &faceMetrics{proto: regularFace, em: map[rune]runeMetric{}, kern: map[[2]rune]float64{}}
	boldMetrics    = &faceMetrics{proto: boldFace, bold: true, em: map[rune]runeMetric{}, kern: map[[2]rune]float64{}}
)

func faceFor(bold bool) *faceMetrics {
	if bold {
		return boldMetrics
	}
	return regularMetrics
}

// metric returns r's advance in em and whether it is simple; call it with
// m.mu held.
func (m *faceMetrics) metric(face *pdflib.Face, r rune) runeMetric {
	if r == '\u00a0' { // set by the library as a space (spaceWidth)
		return runeMetric{0.333, true}
	}
	mt, ok := m.em[r]
	if !ok {
		if m.reverse == nil {
			m.reverse = face.OTFace().Cmap().CollectReverseMapping()
		}
		mt = runeMetric{face.AdvanceWidth(face.Codepoint(r)), simpleRune(face, m.reverse, r)}
		if len(m.em) < maxCachedRunes {
			m.em[r] = mt
		}
	}
	return mt
}

// pairKern is the kerning the shaper puts between a and b, in em; call it
// with m.mu held.
func (m *faceMetrics) pairKern(face *pdflib.Face, a, b rune) float64 {
	k := [2]rune{a, b}
	if v, ok := m.kern[k]; ok {
		return v
	}
	buf := shape(face, string(k[:]), false)
	var v float64
	for _, p := range buf.Pos {
		v += float64(p.XAdvance) / float64(face.UnitsPerEM)
	}
	v -= m.metric(face, a).adv + m.metric(face, b).adv
	if len(m.kern) < maxCachedPairs {
		m.kern[k] = v
	}
	return v
}

// maxCachedPairs bounds the kerning cache.
const maxCachedPairs = 16384

// simple reports whether r is set by the library's paragraph builder.
func (m *faceMetrics) simple(r rune) bool {
	face, err := m.proto.parsed()
	if err != nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.metric(face, r).simple
}

// width is the advance width of s at size; 0 when the font cannot be
// parsed (Render fails on the same error when it loads the face).
func (m *faceMetrics) width(s string, size float64) bag.ScaledPoint {
	face, err := m.proto.parsed()
	if err != nil {
		return 0
	}
	m.mu.Lock()
	var em float64
	prev := rune(-1)
	for _, r := range s {
		mt := m.metric(face, r)
		if !mt.simple {
			m.mu.Unlock()
			return complexWidth(s, m.bold, size)
		}
		em += mt.adv
		if prev >= 0 && !unicode.IsSpace(r) && !unicode.IsSpace(prev) {
			em += m.pairKern(face, prev, r)
		}
		prev = r
	}
	m.mu.Unlock()
	return bag.ScaledPointFromFloat(em * size)
}

func textWidth(s string, bold bool, size float64) bag.ScaledPoint {
	return faceFor(bold).width(s, size)
}

// noHyphenation is a language without patterns: the lines handed to the
// library are already broken, and hyphenating them would only cost time.
var noHyphenation = sync.OnceValues(func() (*lang.Lang, error) {
	return lang.NewFromReader(strings.NewReader(""))
})
