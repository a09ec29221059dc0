package pdf

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"

	pdflib "github.com/boxesandglue/baseline-pdf"
	"github.com/boxesandglue/boxesandglue/backend/bag"
	"github.com/boxesandglue/boxesandglue/backend/font"
	"github.com/boxesandglue/boxesandglue/backend/node"
	"github.com/boxesandglue/boxesandglue/frontend"
	"github.com/boxesandglue/textshape/ot"
	"golang.org/x/text/unicode/bidi"

	"github.com/farebox/farebox/internal/invoicedoc/pdf/internal/uba"
)

// Text in every script (docs/invoicing.md, "Fonts and scripts").
//
// DejaVu Sans (embedded) sets Latin, Greek and Cyrillic as before. A line
// whose every character DejaVu draws left to right with a glyph that maps
// back to that character ("simple") goes through the library's paragraph
// builder unchanged. Any other line is set here: its bidi levels are
// resolved (UAX #9, package uba), it is cut into items of one level, style
// and font, the items are put in visual order (rule L2), each is shaped
// with textshape in its own direction (Arabic joining, marks, mirrored
// brackets) and its glyphs become nodes of one line. The whole line is
// wrapped in a marked-content span whose /ActualText is the line in logical
// order, so text extraction and search read what the partner sent, whatever
// the visual order and whichever glyphs (ligatures, contextual forms,
// characters beyond U+FFFF, which the library's ToUnicode cannot map).
//
// Characters DejaVu lacks come from Debian's fonts (Noto for Arabic, Hebrew,
// mathematical letters and symbols, Droid Sans Fallback and WenQuanYi Zen
// Hei for CJK, Symbola for emoji), read from the font directory on first use and subset into the PDF
// like DejaVu. A character no font covers is refused by the API (Drawable);
// one that reaches the renderer anyway (stored before) is drawn as U+FFFD,
// never as .notdef, with the original in /ActualText.

// DefaultFontDir is where Debian installs fonts-noto-core, fonts-droid-fallback,
// fonts-wqy-zenhei and fonts-symbola.
const DefaultFontDir = "/usr/share/fonts"

var (
	fontDirMu  sync.Mutex
	fontDirSet string
)

// SetFontDir sets the directory the fallback fonts are read from (its
// layout as Debian's /usr/share/fonts). Call it before the first document
// is rendered or checked; later calls do not reload fonts already read.
func SetFontDir(dir string) {
	fontDirMu.Lock()
	defer fontDirMu.Unlock()
	fontDirSet = dir
}

// fontDir is the directory set by SetFontDir, else $FAREBOX_FONT_DIR, else
// DefaultFontDir.
func fontDir() string {
	fontDirMu.Lock()
	defer fontDirMu.Unlock()
	if fontDirSet != "" {
		return fontDirSet
	}
	if d := os.Getenv("FAREBOX_FONT_DIR"); d != "" {
		return d
	}
	return DefaultFontDir
}

func fallbackFont(path string, index int) *faceProto {
	name := path[strings.LastIndexByte(path, '/')+1:]
	return &faceProto{name: name, path: path, index: index}
}

// The fallback fonts, in the order they are asked for a character. Index 0
// of the CJK collections is the Japanese cut, which covers every Han
// character of the collection.
var (
	notoMath     = fallbackFont("truetype/noto/NotoSansMath-Regular.ttf", 0)
	notoSymbols2 = fallbackFont("truetype/noto/NotoSansSymbols2-Regular.ttf", 0)
	notoSymbols  = fallbackFont("truetype/noto/NotoSansSymbols-Regular.ttf", 0)
	symbola      = fallbackFont("truetype/ancient-scripts/Symbola_hint.ttf", 0)
	// CJK: TrueType outlines. Noto Sans CJK is CFF, and the library's CFF
	// subsetter (textshape v0.0.10) drops the outlines of many glyphs
	// (文, 語, every Hangul syllable came out blank), so it is not used.
	droidFallback = fallbackFont("truetype/droid/DroidSansFallbackFull.ttf", 0)
	// Hangul syllables, which Droid Sans Fallback lacks.
	wqyZenHei = fallbackFont("truetype/wqy/wqy-zenhei.ttc", 0)

	regularChain = []*faceProto{
		regularFace,
		fallbackFont("truetype/noto/NotoSansArabic-Regular.ttf", 0),
		fallbackFont("truetype/noto/NotoSansHebrew-Regular.ttf", 0),
		droidFallback, wqyZenHei,
		fallbackFont("truetype/noto/NotoSans-Regular.ttf", 0),
		notoMath, notoSymbols2, notoSymbols, symbola,
	}
	boldChain = []*faceProto{
		boldFace,
		fallbackFont("truetype/noto/NotoSansArabic-Bold.ttf", 0),
		fallbackFont("truetype/noto/NotoSansHebrew-Bold.ttf", 0),
		droidFallback, wqyZenHei,
		fallbackFont("truetype/noto/NotoSans-Bold.ttf", 0),
		notoMath, notoSymbols2, notoSymbols, symbola,
	}
)

func chainFor(bold bool) []*faceProto {
	if bold {
		return boldChain
	}
	return regularChain
}

// covers reports whether the font has a glyph for r; a font that cannot be
// read covers nothing.
func (p *faceProto) covers(r rune) bool {
	f, err := p.parsed()
	if err != nil {
		return false
	}
	cm := f.OTFace().Cmap()
	if cm == nil {
		return false
	}
	gid, ok := cm.Lookup(ot.Codepoint(r))
	return ok && gid != 0
}

// coverage caches, per weight, which font of the chain draws a rune.
type coverage struct {
	mu    sync.Mutex
	chain []*faceProto
	font  map[rune]int8
}

var (
	regularCoverage = &coverage{chain: regularChain, font: map[rune]int8{}}
	boldCoverage    = &coverage{chain: boldChain, font: map[rune]int8{}}
)

func coverageFor(bold bool) *coverage {
	if bold {
		return boldCoverage
	}
	return regularCoverage
}

// fontFor is the index in the chain of the first font that draws r, -1
// when none does.
func (c *coverage) fontFor(r rune) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.font[r]; ok {
		return int(i)
	}
	idx := -1
	if pref := preferred(r); pref > 0 && c.chain[pref].covers(r) {
		idx = pref
	}
	for i, p := range c.chain {
		if idx >= 0 {
			break
		}
		if p.covers(r) {
			idx = i
			break
		}
	}
	if len(c.font) < maxCachedRunes {
		c.font[r] = int8(idx)
	}
	return idx
}

// preferred is the chain index of the font made for r's script (Noto's
// Arabic and Hebrew are better than DejaVu's), 0 for none.
func preferred(r rune) int {
	switch {
	case unicode.Is(unicode.Arabic, r):
		return 1
	case unicode.Is(unicode.Hebrew, r):
		return 2
	}
	return 0
}

// invisible reports whether r is drawn as nothing: default-ignorable code
// points (format characters such as ZWJ, bidi marks, variation selectors).
// The shaper removes them.
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// isMark reports a combining mark: it is set with its base character's
// font when that font has it.
func isMark(r rune) bool { return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc) }

// Drawable reports the first character of s that no font can draw (then ok
// is false): a control character other than tab, line feed and carriage
// return, or a character none of the fonts covers. The API refuses such
// text when it is accepted, so rendering never meets it.
func Drawable(s string) (bad rune, ok bool) {
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
		case unicode.IsControl(r):
			return r, false
		case unicode.IsSpace(r) || invisible(r):
		default:
			if regularCoverage.fontFor(r) < 0 || boldCoverage.fontFor(r) < 0 {
				return r, false
			}
		}
	}
	return 0, true
}

// simpleRune reports whether the library's own paragraph builder sets r
// correctly with face: left to right, in the Basic Multilingual Plane (its
// ToUnicode map is 16-bit), and with a glyph that maps back to r.
func simpleRune(face *pdflib.Face, reverse map[ot.GlyphID]rune, r rune) bool {
	if r > 0xFFFF || invisible(r) {
		return false
	}
	if unicode.IsSpace(r) {
		return true
	}
	props, _ := bidi.LookupRune(r)
	switch props.Class() {
	case bidi.R, bidi.AL, bidi.AN, bidi.Control, bidi.LRO, bidi.RLO, bidi.LRE, bidi.RLE, bidi.PDF, bidi.LRI, bidi.RLI, bidi.FSI, bidi.PDI:
		return false
	}
	gid, ok := face.OTFace().Cmap().Lookup(ot.Codepoint(r))
	return ok && gid != 0 && reverse[gid] == r
}

var ligaturesOff = ot.ParseFeatures(strings.Join(noLigatures, ","))

// shape shapes text with face in the given direction. Call it under
// renderMu (the shaper is shared).
func shape(face *pdflib.Face, text string, rtl bool) *ot.Buffer {
	buf := ot.NewBuffer()
	buf.AddString(text)
	buf.Flags = ot.BufferFlagRemoveDefaultIgnorables
	buf.Direction = ot.DirectionLTR
	if rtl {
		buf.Direction = ot.DirectionRTL
	}
	face.Shaper.Shape(buf, ligaturesOff)
	return buf
}

// segment is a piece of one line set with one font in one direction.
type segment struct {
	text  string
	font  int // index in the chain; -1 white space, -2 nothing draws it
	level int
	style int
}

// segments cuts runes (with the style index of each) into items of one
// font, level and style, in logical order.
func segments(runes []rune, styles []int, levels []int, bold func(style int) bool) []segment {
	var out []segment
	var b strings.Builder
	cur := segment{font: -3}
	flush := func() {
		if b.Len() > 0 {
			cur.text = b.String()
			out = append(out, cur)
			b.Reset()
		}
	}
	for i, r := range runes {
		s := segment{level: levels[i], style: styles[i]}
		cov := coverageFor(bold(s.style))
		switch {
		case unicode.IsSpace(r):
			s.font = -1
		case (invisible(r) || isMark(r)) && cur.font >= 0 && cur.level == s.level && cur.style == s.style &&
			(invisible(r) || cov.chain[cur.font].covers(r)):
			s.font = cur.font
		default:
			s.font = cov.fontFor(r)
			if s.font < 0 {
				s.font = -2
			}
		}
		if s.font != cur.font || s.level != cur.level || s.style != cur.style {
			flush()
			cur = s
		}
		b.WriteRune(r)
	}
	flush()
	return out
}

// isSimple reports whether every rune of s is simple for the weight.
func isSimple(s string, bold bool) bool {
	m := faceFor(bold)
	for _, r := range s {
		if !m.simple(r) {
			return false
		}
	}
	return true
}

// complexWidth is the width of s (no line break) set by complexLine.
func complexWidth(s string, bold bool, size float64) bag.ScaledPoint {
	runes := []rune(s)
	levels := make([]int, len(runes))
	styles := make([]int, len(runes))
	chain := chainFor(bold)
	var em float64
	for _, seg := range segments(runes, styles, levels, func(int) bool { return bold }) {
		switch seg.font {
		case -1:
			em += 0.333 * float64(len([]rune(seg.text)))
		case -2:
			em += replacementEm(bold) * float64(len([]rune(seg.text)))
		default:
			face, err := chain[seg.font].parsed()
			if err != nil {
				continue
			}
			buf := shape(face, seg.text, false)
			for _, p := range buf.Pos {
				em += float64(p.XAdvance) / float64(face.UnitsPerEM)
			}
		}
	}
	return bag.ScaledPointFromFloat(em * size)
}

// replacementEm is the advance of U+FFFD in DejaVu, in em.
func replacementEm(bold bool) float64 {
	p := regularFace
	if bold {
		p = boldFace
	}
	face, err := p.parsed()
	if err != nil {
		return 0
	}
	return face.AdvanceWidth(face.Codepoint('\uFFFD'))
}

// docFont is the font of p at size in this document, made once.
func (l *layout) docFont(p *faceProto, size bag.ScaledPoint) (*font.Font, error) {
	if l.faces == nil {
		l.faces = map[*faceProto]*pdflib.Face{}
		l.fonts = map[fontKey]*font.Font{}
	}
	k := fontKey{p, size}
	if f, ok := l.fonts[k]; ok {
		return f, nil
	}
	face, ok := l.faces[p]
	if !ok {
		var err error
		if face, err = p.docFace(l.fe); err != nil {
			return nil, err
		}
		l.faces[p] = face
	}
	f := font.NewFont(face, size)
	l.fonts[k] = f
	return f, nil
}

type fontKey struct {
	p    *faceProto
	size bag.ScaledPoint
}

// fillColor is the PDF operator setting the fill colour to #rrggbb.
func fillColor(hex string) string {
	v, _ := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	c := func(shift uint) string {
		return strconv.FormatFloat(float64((v>>shift)&0xff)/255, 'f', 3, 64)
	}
	return c(16) + " " + c(8) + " " + c(0) + " rg "
}

// actualText is a PDF text string (UTF-16BE with BOM) in hex.
func actualText(s string) string {
	var b strings.Builder
	b.WriteString("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		b.WriteString(strings.ToUpper(strconv.FormatUint(uint64(u)|0x10000, 16)[1:]))
	}
	b.WriteString(">")
	return b.String()
}

// visualText is the /ActualText of a segment: its characters in the order
// text extraction expects them. Extractors (poppler, pdf.js) read glyphs
// left to right and themselves reverse runs of right-to-left letters, so a
// right-to-left segment with Hebrew or Arabic letters is given reversed
// (visual order) and comes out logical; a right-to-left segment without
// such letters (emoji or mathematical letters between Hebrew words, set
// right to left by the bidi algorithm) is not reversed by extractors and
// is given in logical order.
func visualText(s string, rtl bool) string {
	if !rtl || !strings.ContainsFunc(s, strongRTL) {
		return s
	}
	rs := []rune(s)
	for a, b := 0, len(rs)-1; a < b; a, b = a+1, b-1 {
		rs[a], rs[b] = rs[b], rs[a]
	}
	return string(rs)
}

// strongRTL reports a right-to-left letter (bidi class R or AL).
func strongRTL(r rune) bool {
	props, _ := bidi.LookupRune(r)
	return props.Class() == bidi.R || props.Class() == bidi.AL
}

func pageOutput(s string) *node.StartStop {
	n := node.NewStartStop()
	n.Position = node.PDFOutputPage
	n.ShipoutCallback = func(node.Node) string { return s }
	return n
}

func hfil() *node.Glue {
	g := node.NewGlue()
	g.Stretch = bag.Factor
	g.StretchOrder = node.StretchFil
	return g
}

// complexLine sets spans (one line, already broken by wrap) in visual
// order; see the comment at the top of this file.
func (l *layout) complexLine(spans []span, width bag.ScaledPoint, size float64, align frontend.HorizontalAlignment) (*node.VList, error) {
	sz := bag.ScaledPointFromFloat(size)
	var runes []rune
	var styles []int
	for si, s := range spans {
		for _, r := range s.text {
			runes = append(runes, r)
			styles = append(styles, si)
		}
	}
	levels, err := uba.Levels(runes)
	if err != nil || levels == nil {
		levels = make([]int, len(runes))
	}
	segs := segments(runes, styles, levels, func(i int) bool { return spans[i].bold })
	segLevels := make([]int, len(segs))
	for i, s := range segs {
		segLevels[i] = s.level
	}

	var head, tail node.Node
	add := func(n node.Node) {
		head = node.InsertAfter(head, tail, n)
		tail = n
	}
	if align == frontend.HAlignRight || align == frontend.HAlignCenter {
		add(hfil())
	}
	for _, i := range uba.Reorder(segLevels) {
		s := segs[i]
		st := spans[s.style]
		chain := chainFor(st.bold)
		if s.font == -1 {
			// A space glyph (so that extraction reads a space, not a
			// guess from the gap) and glue up to the width wrap counted,
			// shrinkable like the library's spaces.
			fnt, err := l.docFont(chain[0], sz)
			if err != nil {
				return nil, err
			}
			for range s.text {
				g := node.NewGlyph()
				g.Font, g.Codepoint = fnt, fnt.Face.Codepoint(' ')
				g.Width = bag.ScaledPoint(float64(fnt.Face.OTFace().HorizontalAdvance(ot.GlyphID(g.Codepoint))) * float64(sz) / float64(fnt.Face.UnitsPerEM))
				g.Height, g.Depth = fnt.Size-fnt.Depth, fnt.Depth
				add(g)
				rest := node.NewGlue()
				rest.Width, rest.Shrink = spaceWidth(size)-g.Width, spaceShrink(size)
				add(rest)
			}
			continue
		}
		color := st.color
		if color == "" {
			color = colorText
		}
		add(pageOutput(fillColor(color)))
		add(pageOutput("/Span <</ActualText " + actualText(visualText(s.text, s.level%2 == 1)) + ">> BDC\n"))
		proto, text := chain[0], s.text
		if s.font >= 0 {
			proto = chain[s.font]
		} else {
			text = strings.Repeat("\uFFFD", len([]rune(s.text)))
		}
		fnt, err := l.docFont(proto, sz)
		if err != nil {
			return nil, err
		}
		face := fnt.Face
		buf := shape(face, text, s.level%2 == 1)
		scale := float64(sz) / float64(face.UnitsPerEM)
		var repl *font.Font
		for k, info := range buf.Info {
			pos := buf.Pos[k]
			g := node.NewGlyph()
			g.Font, g.Codepoint = fnt, int(info.GlyphID)
			// The glyph's own advance (what the PDF viewer moves by) and
			// a kern for what positioning adds (kerning, marks), as the
			// library does.
			g.Width = bag.ScaledPoint(float64(face.OTFace().HorizontalAdvance(info.GlyphID)) * scale)
			kern := bag.ScaledPoint(float64(pos.XAdvance)*scale) - g.Width
			g.XOffset = bag.ScaledPoint(float64(pos.XOffset) * scale)
			g.YOffset = bag.ScaledPoint(float64(pos.YOffset) * scale)
			if info.GlyphID == 0 {
				// Never .notdef: the font lacked a glyph the shaper
				// needed (a mark without its base, say).
				if repl == nil {
					if repl, err = l.docFont(chain[0], sz); err != nil {
						return nil, err
					}
				}
				g.Font, g.Codepoint = repl, repl.Face.Codepoint('\uFFFD')
				g.Width = bag.ScaledPointFromFloat(replacementEm(st.bold) * size)
				g.XOffset, g.YOffset = 0, 0
			}
			g.Height, g.Depth = g.Font.Size-g.Font.Depth, g.Font.Depth
			add(g)
			if kern != 0 && info.GlyphID != 0 {
				k := node.NewKern()
				k.Kern = kern
				add(k)
			}
		}
		add(pageOutput("EMC\n"))
	}
	if align == frontend.HAlignLeft || align == frontend.HAlignCenter {
		add(hfil())
	}
	hl := node.HpackTo(head, width)
	base, err := l.docFont(regularFace, sz)
	if err != nil {
		return nil, err
	}
	hl.Height, hl.Depth = base.Size-base.Depth, base.Depth
	lead := node.NewGlue()
	lead.Width = bag.ScaledPointFromFloat(size*1.3) - hl.Height - hl.Depth
	node.InsertAfter(hl, hl, lead)
	return node.Vpack(hl), nil
}
