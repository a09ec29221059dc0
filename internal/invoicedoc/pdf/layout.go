package pdf

import (
	"fmt"
	"strings"

	pdflib "github.com/boxesandglue/baseline-pdf"
	"github.com/boxesandglue/boxesandglue/backend/bag"
	"github.com/boxesandglue/boxesandglue/backend/document"
	"github.com/boxesandglue/boxesandglue/backend/font"
	"github.com/boxesandglue/boxesandglue/backend/node"
	"github.com/boxesandglue/boxesandglue/frontend"
)

// Page geometry (A4) and colours.
var (
	pageHeight   = bag.MustSP("297mm")
	marginLeft   = bag.MustSP("20mm")
	contentWidth = bag.MustSP("170mm")
	bodyBottom   = bag.MustSP("32mm") // the footer lives below this line
	continueTop  = bag.MustSP("262mm")
)

const (
	colorText   = "#1e1e1e"
	colorMuted  = "#5f6670"
	colorAccent = "#1b4f8a"
	colorAlert  = "#c0171d"
	rgbRule     = "0.75 0.77 0.80 rg"
	rgbShade    = "0.93 0.95 0.97 rg"
	rgbAccent   = "0.106 0.31 0.541 rg"
	rgbAlert    = "0.753 0.09 0.114 rg"
	rgbReset    = "0 0 0 rg"
)

// span is a piece of text with its own weight and colour.
type span struct {
	text  string
	bold  bool
	color string
}

func plain(s string) span  { return span{text: s} }
func bold(s string) span   { return span{text: s, bold: true} }
func muted(s string) span  { return span{text: s, color: colorMuted} }
func accent(s string) span { return span{text: s, bold: true, color: colorAccent} }

// layout places blocks top-down on A4 pages, starting a new page when a
// block does not fit above the footer.
type layout struct {
	fe     *frontend.Document
	fam    *frontend.FontFamily
	page   *document.Page
	y      bag.ScaledPoint // top of the next block, measured from the bottom edge
	pages  int
	onPage func(l *layout) error // draws the footer and the running header
	err    error
	faces  map[*faceProto]*pdflib.Face // the document's faces (text.go)
	fonts  map[fontKey]*font.Font
}

// text formats spans into a paragraph of the given width, broken into
// lines by wrap; a "\n" inside a span starts a new line. Each line is its
// own paragraph, so alignment applies per line.
func (l *layout) text(spans []span, width bag.ScaledPoint, size float64, align frontend.HorizontalAlignment) *node.VList {
	vls := l.lines(spans, width, size, align)
	if len(vls) == 1 {
		return vls[0]
	}
	var head, tail node.Node
	for _, vl := range vls {
		head = node.InsertAfter(head, tail, vl)
		tail = vl
	}
	return node.Vpack(head)
}

// lines formats spans into one paragraph per line.
func (l *layout) lines(spans []span, width bag.ScaledPoint, size float64, align frontend.HorizontalAlignment) []*node.VList {
	var vls []*node.VList
	for _, ln := range wrap(spans, width, size) {
		vls = append(vls, l.line(ln, width, size, align))
	}
	return vls
}

// line formats spans without line breaks into one paragraph.
func (l *layout) line(spans []span, width bag.ScaledPoint, size float64, align frontend.HorizontalAlignment) *node.VList {
	if l.err != nil {
		return node.Vpack(node.NewGlue())
	}
	for _, s := range spans {
		if !isSimple(s.text, s.bold) {
			vl, err := l.complexLine(spans, width, size, align)
			if err != nil {
				l.err = err
				return node.Vpack(node.NewGlue())
			}
			return vl
		}
	}
	te := frontend.NewText()
	te.Settings[frontend.SettingColor] = colorText
	for _, s := range spans {
		if s.text == "" {
			continue
		}
		t := frontend.NewText()
		t.Items = []any{s.text}
		if s.bold {
			t.Settings[frontend.SettingFontWeight] = frontend.FontWeight700
		}
		if s.color != "" {
			t.Settings[frontend.SettingColor] = s.color
		}
		te.Items = append(te.Items, t)
	}
	if len(te.Items) == 0 {
		te.Items = []any{"\u00a0"}
	}
	sz := bag.ScaledPointFromFloat(size)
	plain, err := noHyphenation()
	if err != nil {
		l.err = err
		return node.Vpack(node.NewGlue())
	}
	vl, _, err := l.fe.FormatParagraph(te, width,
		frontend.Family(l.fam), frontend.FontSize(sz), frontend.Leading(bag.ScaledPointFromFloat(size*1.3)),
		frontend.HorizontalAlign(align), frontend.Language(plain))
	if err != nil {
		l.err = err
		return node.Vpack(node.NewGlue())
	}
	return vl
}

func height(vl *node.VList) bag.ScaledPoint { return vl.Height + vl.Depth }

// rect draws a filled rectangle with its top-left corner at (x, top).
func (l *layout) rect(x, top, w, h bag.ScaledPoint, fill string) {
	r := node.NewRule()
	r.Width, r.Height = w, h
	r.Pre, r.Post = fill, rgbReset
	hl := node.Hpack(r)
	l.page.OutputAt(x, top, node.Vpack(hl))
}

// at places a paragraph at an absolute position without moving the cursor.
func (l *layout) at(x, top bag.ScaledPoint, vl *node.VList) { l.page.OutputAt(x, top, vl) }

func (l *layout) newPage() {
	if l.page != nil {
		l.page.Shipout()
	}
	l.page = l.fe.Doc.NewPage()
	l.pages++
	l.y = continueTop
	if l.onPage != nil && l.err == nil {
		l.err = l.onPage(l)
	}
}

// ensure starts a new page unless h fits above the footer.
func (l *layout) ensure(h bag.ScaledPoint) {
	if l.y-h < bodyBottom {
		l.newPage()
	}
}

// block places a paragraph at the left margin and advances the cursor.
func (l *layout) block(vl *node.VList, gapAfter bag.ScaledPoint) {
	l.ensure(height(vl))
	l.at(marginLeft, l.y, vl)
	l.y -= height(vl) + gapAfter
}

// flow places text across the content width line by line, so a paragraph
// longer than a page continues on the next one.
func (l *layout) flow(spans []span, size float64, gapAfter bag.ScaledPoint) {
	for _, vl := range l.lines(spans, contentWidth, size, frontend.HAlignLeft) {
		l.block(vl, 0)
	}
	l.y -= gapAfter
}

// paragraphs places multi-line user text, one paragraph per line break.
func (l *layout) paragraphs(s string, size float64) {
	for _, p := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(p) == "" {
			l.y -= bag.MustSP("2mm")
			continue
		}
		l.flow([]span{plain(p)}, size, bag.MustSP("1mm"))
	}
	l.y -= bag.MustSP("3mm")
}

// column is one table column.
type column struct {
	width bag.ScaledPoint
	align frontend.HorizontalAlignment
}

// preparedRow is a formatted table row not yet placed.
type preparedRow struct {
	cols  []column
	vls   []*node.VList
	h     bag.ScaledPoint
	shade string
	pad   bag.ScaledPoint
}

var cellPad = bag.MustSP("1.6mm")

// prepRow formats one table row; cells hold spans per column.
func (l *layout) prepRow(cols []column, cells [][]span, size float64, shade string) preparedRow {
	return l.prepRowPad(cols, cells, size, shade, cellPad)
}

// prepRowPad is prepRow with an explicit cell padding.
func (l *layout) prepRowPad(cols []column, cells [][]span, size float64, shade string, cellPad bag.ScaledPoint) preparedRow {
	r := preparedRow{cols: cols, vls: make([]*node.VList, len(cols)), shade: shade, pad: cellPad}
	for i, c := range cols {
		r.vls[i] = l.text(cells[i], c.width-2*cellPad, size, c.align)
		r.h = max(r.h, height(r.vls[i]))
	}
	r.h += 2 * cellPad
	return r
}

// drawRow places a prepared row at the cursor (no page check).
func (l *layout) drawRow(r preparedRow) {
	if r.shade != "" {
		l.rect(marginLeft, l.y, contentWidth, r.h, r.shade)
	}
	x := marginLeft
	for i, c := range r.cols {
		l.at(x+r.pad, l.y-r.pad, r.vls[i])
		x += c.width
	}
	l.y -= r.h
}

// rowsHeight is the total height of prepared rows.
func rowsHeight(rows []preparedRow) bag.ScaledPoint {
	var h bag.ScaledPoint
	for _, r := range rows {
		h += r.h
	}
	return h
}

// row formats and places a row, breaking the page first when needed.
func (l *layout) row(cols []column, cells [][]span, size float64, shade string) {
	r := l.prepRow(cols, cells, size, shade)
	l.ensure(r.h)
	l.drawRow(r)
}

// hline draws a thin rule across the content width at the cursor.
func (l *layout) hline(fill string, thickness string) {
	l.rect(marginLeft, l.y, contentWidth, bag.MustSP(thickness), fill)
}

// formatIBAN groups an IBAN in blocks of four for reading.
func formatIBAN(iban string) string {
	var b strings.Builder
	for i, r := range iban {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func percentLabel(bp int64) string {
	if bp%100 == 0 {
		return fmt.Sprintf("%d %%", bp/100)
	}
	return strings.Replace(fmt.Sprintf("%d.%02d %%", bp/100, bp%100), ".", ",", 1)
}
