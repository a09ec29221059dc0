package xrechnung

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// writer builds indented XML in a fixed order. A required element with a
// blank value records an error instead of writing an empty element, and so
// does an element opened and closed without content (PEPPOL-EN16931-R008);
// empty writes the few elements the schema requires even when empty. The
// output is well-formed by construction: names are the encoders' constants,
// every value goes through clean and escape, and elements close in the
// order they were opened (finish checks none is left open). The fuzz test
// parses every output to hold the writer to that (checkWellFormed).
type writer struct {
	b     bytes.Buffer
	stack []frame
	err   error
}

// frame is an open element: its name and whether it has content yet.
type frame struct {
	name    string
	content bool
}

func newWriter() *writer {
	w := &writer{}
	w.b.Grow(16 << 10)
	w.b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	return w
}

func (w *writer) indent() {
	for range w.stack {
		w.b.WriteString("  ")
	}
}

// child marks the innermost open element as having content.
func (w *writer) child() {
	if len(w.stack) > 0 {
		w.stack[len(w.stack)-1].content = true
	}
}

func (w *writer) tag(name string, attrs []string) {
	w.child()
	w.b.WriteByte('<')
	w.b.WriteString(name)
	for i := 0; i+1 < len(attrs); i += 2 {
		w.b.WriteByte(' ')
		w.b.WriteString(attrs[i])
		w.b.WriteString(`="`)
		escape(&w.b, clean(attrs[i+1]))
		w.b.WriteByte('"')
	}
}

// open starts an element with children.
func (w *writer) open(name string, attrs ...string) {
	w.indent()
	w.tag(name, attrs)
	w.b.WriteString(">\n")
	w.stack = append(w.stack, frame{name: name})
}

// close ends the innermost open element; one without content is an
// error (errEmptyElement).
func (w *writer) close() {
	f := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	if !f.content && w.err == nil {
		w.err = fmt.Errorf("%w: %s", errEmptyElement, localName(f.name))
	}
	w.indent()
	w.b.WriteString("</")
	w.b.WriteString(f.name)
	w.b.WriteString(">\n")
}

// localName is name without its namespace prefix.
func localName(name string) string {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// empty writes an element without content (only for elements the schema
// requires even when there is nothing to say).
func (w *writer) empty(name string) {
	w.indent()
	w.child()
	w.b.WriteString("<")
	w.b.WriteString(name)
	w.b.WriteString("/>\n")
}

// leaf writes a required text element.
func (w *writer) leaf(name, value string, attrs ...string) {
	v := clean(value)
	if v == "" {
		if w.err == nil {
			w.err = &requiredError{name}
		}
		return
	}
	w.indent()
	w.tag(name, attrs)
	w.b.WriteByte('>')
	escape(&w.b, v)
	w.b.WriteString("</")
	w.b.WriteString(name)
	w.b.WriteString(">\n")
}

// finish returns the document, or the first error: a blank required
// value, an empty element, or an element left open.
func (w *writer) finish() ([]byte, error) {
	if w.err == nil && len(w.stack) > 0 {
		w.err = fmt.Errorf("element %s left open", w.stack[len(w.stack)-1].name)
	}
	if w.err != nil {
		return nil, w.err
	}
	return w.b.Bytes(), nil
}

// opt writes a text element only when value is not blank.
func (w *writer) opt(name, value string, attrs ...string) {
	if clean(value) != "" {
		w.leaf(name, value, attrs...)
	}
}

// clean makes s safe for XML 1.0: invalid UTF-8 becomes U+FFFD, characters
// outside the XML Char production (C0 controls other than tab, LF, CR;
// surrogates; U+FFFE, U+FFFF) are dropped, and surrounding whitespace is
// trimmed so a whitespace-only value counts as empty (R008).
func clean(s string) string {
	ok := true
	for i, r := range s {
		if !isXMLChar(r) || (r == utf8.RuneError && !validAt(s, i)) {
			ok = false
			break
		}
	}
	if !ok {
		var b strings.Builder
		for i, r := range s {
			if r == utf8.RuneError && !validAt(s, i) {
				b.WriteRune('\uFFFD')
				continue
			}
			if isXMLChar(r) {
				b.WriteRune(r)
			}
		}
		s = b.String()
	}
	return strings.TrimSpace(s)
}

func validAt(s string, i int) bool {
	r, n := utf8.DecodeRuneInString(s[i:])
	return !(r == utf8.RuneError && n <= 1)
}

func isXMLChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || (r >= 0x20 && r <= 0xD7FF) ||
		(r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

// escape writes s with the five XML entities and CR/LF/TAB as character
// references, so the value round-trips exactly through a parser.
func escape(b *bytes.Buffer, s string) {
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		case '\r':
			b.WriteString("&#xD;")
		case '\n':
			b.WriteString("&#xA;")
		case '\t':
			b.WriteString("&#x9;")
		default:
			b.WriteRune(r)
		}
	}
}

// requiredError reports a required element whose value is blank.
type requiredError struct{ element string }

func (e *requiredError) Error() string {
	return "required element " + e.element + " would be empty"
}

// errEmptyElement is the error of an element without content
// (PEPPOL-EN16931-R008).
var errEmptyElement = errors.New("empty element")
