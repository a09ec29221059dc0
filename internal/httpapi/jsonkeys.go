package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/farebox/farebox/internal/apperr"
)

// checkKeys is the key rule of decodeJSON: it walks body value by value
// along the Go type t it is decoded into and returns the first of
//
//   - a key that appears twice in one object, at any depth, also inside
//     values kept raw (json.RawMessage, maps, any: a split entry, an
//     identification medium): 400 malformed_json naming its JSON pointer
//     (RFC 8259 §4 leaves duplicates to the implementation and I-JSON,
//     RFC 7493 §2.3, forbids them; encoding/json would keep the last);
//   - a key of a struct-typed object that names a field only when case is
//     ignored (`PRODUCT_IDS` for `product_ids`): 400 unknown_field with
//     the right spelling, on every endpoint (encoding/json would take it);
//   - with strict, any other key no field takes: 400 unknown_field.
//
// Syntax errors end the walk without an error: the decoder reports them.
// The walk is a byte scanner over the body (no tokens are allocated):
// decodeJSON runs it on every request body.
func checkKeys(body []byte, t reflect.Type, strict bool) error {
	w := keyWalker{b: body, strict: strict, path: make([]pathSeg, 0, 8)}
	if err := w.value(t); err != nil && err != errKeysStop {
		return err
	}
	return nil
}

// errKeysStop ends the walk at a syntax error or a nesting deeper than
// the decoder allows; decodeJSON's decoder then reports the problem.
var errKeysStop = errors.New("stop")

// maxKeyDepth bounds the walk's recursion; encoding/json refuses bodies
// nested deeper than 10000 anyway.
const maxKeyDepth = 10000

type keyWalker struct {
	b      []byte
	i      int
	strict bool
	path   []pathSeg // where the walk is, for the error's JSON pointer
}

type pathSeg struct {
	key   []byte
	index int // -1 for an object key
}

func (w *keyWalker) pointer() string {
	var b strings.Builder
	for _, s := range w.path {
		b.WriteByte('/')
		if s.index >= 0 {
			b.WriteString(strconv.Itoa(s.index))
		} else {
			b.WriteString(apperr.EscapeToken(string(s.key)))
		}
	}
	return b.String()
}

func (w *keyWalker) ws() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// str consumes a string literal at w.i and returns its text: the bytes
// as sent, or unescaped when it holds escapes.
func (w *keyWalker) str() ([]byte, bool) {
	start := w.i
	w.i++ // the opening quote
	escaped := false
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case '\\':
			escaped = true
			w.i += 2
			continue
		case '"':
			w.i++
			if !escaped {
				return w.b[start+1 : w.i-1], true
			}
			var s string
			if json.Unmarshal(w.b[start:w.i], &s) != nil {
				return nil, false
			}
			return []byte(s), true
		}
		w.i++
	}
	return nil, false
}

// value consumes one JSON value typed t (nil: any key is taken, as in a
// map, an interface or a raw message).
func (w *keyWalker) value(t reflect.Type) error {
	if len(w.path) > maxKeyDepth {
		return errKeysStop
	}
	w.ws()
	if w.i >= len(w.b) {
		return errKeysStop
	}
	switch w.b[w.i] {
	case '"':
		if _, ok := w.str(); !ok {
			return errKeysStop
		}
		return nil
	case '{', '[':
	default: // a number, true, false or null: the decoder judges it
		for w.i < len(w.b) {
			switch w.b[w.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return nil
			}
			w.i++
		}
		return nil
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && decodesItself(t) {
		t = nil
	}
	if w.b[w.i] == '[' {
		return w.array(t)
	}
	return w.object(t)
}

// array walks the elements of the array at w.i, each against the element
// type of t (nil: unknown).
func (w *keyWalker) array(t reflect.Type) error {
	w.i++ // '['
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	}
	w.ws()
	if w.i < len(w.b) && w.b[w.i] == ']' {
		w.i++
		return nil
	}
	for i := 0; ; i++ {
		w.path = append(w.path, pathSeg{index: i})
		if err := w.value(elem); err != nil {
			return err
		}
		if end, err := w.next(']'); end || err != nil {
			return err
		}
	}
}

// object walks the members of the object at w.i: each key once, matched
// exactly against t's fields (a struct) or taking t's element type (a map).
func (w *keyWalker) object(t reflect.Type) error {
	w.i++ // '{'
	var fields *fieldSet
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = fieldsOf(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	w.ws()
	if w.i < len(w.b) && w.b[w.i] == '}' {
		w.i++
		return nil
	}
	var seen keySet
	for {
		w.ws()
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			return errKeysStop
		}
		key, ok := w.str()
		if !ok {
			return errKeysStop
		}
		w.ws()
		if w.i >= len(w.b) || w.b[w.i] != ':' {
			return errKeysStop
		}
		w.i++
		w.path = append(w.path, pathSeg{key: key, index: -1})
		if !seen.add(key) {
			return w.duplicate()
		}
		vt, err := w.memberType(fields, elem, key)
		if err != nil {
			return err
		}
		if err := w.value(vt); err != nil {
			return err
		}
		if end, err := w.next('}'); end || err != nil {
			return err
		}
	}
}

// memberType is the type the member key decodes into: its field's (exact
// case only), or elem for a map or an unknown key that is let through. A
// key that matches a field only when case is ignored is refused always,
// any other unknown key when the walk is strict.
func (w *keyWalker) memberType(fields *fieldSet, elem reflect.Type, key []byte) (reflect.Type, error) {
	if fields == nil {
		return elem, nil
	}
	if f, ok := fields.exact[string(key)]; ok {
		return f, nil
	}
	if want := fields.folded(key); want != "" {
		msg := fmt.Sprintf("unknown field %s: field names are case-sensitive; did you mean %s?", w.pointer(), want)
		return nil, apperr.E("decode", apperr.Invalid, CodeUnknownField, msg).WithDetails(apperr.FieldError{Field: w.pointer(), Message: msg})
	}
	if w.strict {
		msg := fmt.Sprintf("unknown field %s", w.pointer())
		return nil, apperr.E("decode", apperr.Invalid, CodeUnknownField, msg).WithDetails(apperr.FieldError{Field: w.pointer(), Message: msg})
	}
	return elem, nil
}

// keySet holds the keys of one object: the first few in an array (no
// allocation for the usual small object), then in a map.
type keySet struct {
	few  [8][]byte
	n    int
	many map[string]struct{}
}

// add records key and reports false when the object had it already.
func (s *keySet) add(key []byte) bool {
	if s.many == nil && s.n < len(s.few) {
		for _, k := range s.few[:s.n] {
			if bytes.Equal(k, key) {
				return false
			}
		}
		s.few[s.n] = key
		s.n++
		return true
	}
	if s.many == nil {
		s.many = make(map[string]struct{}, 2*s.n)
		for _, k := range s.few[:s.n] {
			s.many[string(k)] = struct{}{}
		}
	}
	if _, dup := s.many[string(key)]; dup {
		return false
	}
	s.many[string(key)] = struct{}{}
	return true
}

// next ends a member or element: it leaves its path segment and reads
// the comma before the next one or the container's closing byte (end).
func (w *keyWalker) next(closing byte) (end bool, err error) {
	w.path = w.path[:len(w.path)-1]
	w.ws()
	if w.i >= len(w.b) {
		return false, errKeysStop
	}
	switch w.b[w.i] {
	case ',':
		w.i++
		return false, nil
	case closing:
		w.i++
		return true, nil
	}
	return false, errKeysStop
}

func (w *keyWalker) duplicate() error {
	p := w.pointer()
	msg := fmt.Sprintf("duplicate key %s: a key may appear only once in an object", p)
	return apperr.E("decode", apperr.Invalid, CodeMalformedJSON, msg).WithDetails(apperr.FieldError{Field: p, Message: msg})
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	fieldSets           sync.Map // reflect.Type → *fieldSet
)

// decodesItself reports whether t takes any JSON itself (json.RawMessage
// and other json.Unmarshalers): its keys are not struct fields.
func decodesItself(t reflect.Type) bool {
	return t.Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(jsonUnmarshalerType)
}

// fieldSet is the JSON names of a struct's fields as encoding/json sees
// them (tag name, else the Go name; promoted fields of embedded structs).
type fieldSet struct {
	exact map[string]reflect.Type
	names []string
}

// folded returns the field name key matches only when case is ignored
// (encoding/json's rule, bytes.EqualFold), or "".
func (f *fieldSet) folded(key []byte) string {
	for _, n := range f.names {
		if bytes.EqualFold([]byte(n), key) {
			return n
		}
	}
	return ""
}

func fieldsOf(t reflect.Type) *fieldSet {
	if fs, ok := fieldSets.Load(t); ok {
		return fs.(*fieldSet)
	}
	fs := &fieldSet{exact: map[string]reflect.Type{}}
	for _, f := range reflect.VisibleFields(t) {
		tag, hasTag := f.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			continue // its fields are promoted (VisibleFields lists them)
		}
		if !f.IsExported() {
			continue
		}
		if !hasTag || name == "" {
			name = f.Name
		}
		if _, dup := fs.exact[name]; !dup {
			fs.exact[name] = f.Type
			fs.names = append(fs.names, name)
		}
	}
	actual, _ := fieldSets.LoadOrStore(t, fs)
	return actual.(*fieldSet)
}
