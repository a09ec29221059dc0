package xrechnung

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// writer builds indented XML in a fixed order. A required element with a
// blank value records an error instead of writing an empty element.
type writer struct {
	b     bytes.Buffer
	stack []string
	err   error
}

func newWriter() *writer {
	w := &writer{}
	w.b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	return w
}

func (w *writer) indent() {
	for range w.stack {
		w.b.WriteString("  ")
	}
}

func (w *writer) tag(name string, attrs []string) {
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
	w.stack = append(w.stack, name)
}

// close ends the innermost open element.
func (w *writer) close() {
	name := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	w.indent()
	w.b.WriteString("</" + name + ">\n")
}

// empty writes an element without content (only for elements the schema
// requires even when there is nothing to say).
func (w *writer) empty(name string) {
	w.indent()
	w.b.WriteString("<" + name + "/>\n")
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
	w.b.WriteString("</" + name + ">\n")
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

// errEmptyElement is returned by checkWellFormed for an element without
// content (PEPPOL-EN16931-R008).
var errEmptyElement = errors.New("empty element")

// checkWellFormed parses doc and rejects empty elements except those named
// in allowEmpty (local names).
func checkWellFormed(doc []byte, allowEmpty ...string) error {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	type frame struct {
		name    string
		content bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) > 0 {
				stack[len(stack)-1].content = true
			}
			stack = append(stack, frame{name: t.Name.Local})
		case xml.CharData:
			if len(stack) > 0 && strings.TrimSpace(string(t)) != "" {
				stack[len(stack)-1].content = true
			}
		case xml.EndElement:
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if !f.content && !contains(allowEmpty, f.name) {
				return fmt.Errorf("%w: %s", errEmptyElement, f.name)
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
