package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/apperr"
)

// writeJSON encodes v with status. Encoding errors cannot be reported to
// the client any more; they would be bugs in our own types.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if e, ok := v.(encoded); ok && e.Encoded() != nil {
		_, _ = w.Write(e.Encoded())
		return
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// encoded is an answer the use case already encoded as writeJSON would
// (app.OrderJSON of the order POST: its bytes are those of the
// order.created event's object); nil bytes leave it to the encoder.
type encoded interface{ Encoded() []byte }

// readBody reads the whole request body (already limited by the server).
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return nil, apperr.E("decode", apperr.TooLarge, CodeBodyTooLarge, fmt.Sprintf("request body is larger than %d bytes", maxErr.Limit))
		}
		return nil, apperr.E("decode", apperr.Invalid, CodeBodyUnreadable, "request body could not be read")
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, nil
}

// checkJSONType rejects a body whose Content-Type is present and not JSON.
func checkJSONType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return apperr.E("decode", apperr.UnsupportedMedia, CodeUnsupportedMediaType, "request body must be JSON (Content-Type: application/json)")
	}
	return nil
}

// decode parses a required JSON object body into dst. On partner endpoints
// unknown fields are rejected; on SDK-facing endpoints they are ignored.
func decode(r *http.Request, dst any) error {
	return decodeBody(r, dst, true)
}

// decodeOptional is decode for endpoints whose body may be empty.
func decodeOptional(r *http.Request, dst any) error {
	return decodeBody(r, dst, false)
}

func decodeBody(r *http.Request, dst any, required bool) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if required {
			return apperr.E("decode", apperr.Invalid, CodeBodyRequired, "request body required: a JSON object")
		}
		return nil
	}
	if err := checkJSONType(r); err != nil {
		return err
	}
	return decodeJSON(body, dst, state(r).strict)
}

// decodeJSON is the one JSON decoder of every request body: it decodes one
// JSON value into dst and turns decoder errors into 400s that name the
// offending field. Before encoding/json sees the body, checkKeys holds it
// to the exact text a gateway validates: a key appears once per object
// (400 malformed_json naming it), object keys name struct fields exactly
// (a key differing only in case is a 400 unknown_field everywhere, where
// encoding/json would quietly take it), and on partner endpoints (strict)
// every other unknown key is a 400 unknown_field; SDK-facing endpoints
// ignore unknown keys (client-contract.md 2.2).
func decodeJSON(body []byte, dst any, strict bool) error {
	if err := checkStrings(body); err != nil {
		return err
	}
	if err := checkKeys(body, reflect.TypeOf(dst), strict); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if strict {
		dec.DisallowUnknownFields() // checkKeys found none; kept as a backstop
	}
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return apperr.E("decode", apperr.Invalid, CodeMalformedJSON, "request body must hold exactly one JSON value")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return apperr.E("decode", apperr.Invalid, CodeMalformedJSON, "request body must hold exactly one JSON value")
	}
	return nil
}

// checkStrings enforces, once for every JSON body, that each string (keys
// included) is valid UTF-8 without NUL: encoding/json would silently turn
// invalid UTF-8 and lone surrogate escapes into U+FFFD, and PostgreSQL
// refuses NUL in text (SQLSTATE 22021) while SQLite stores it. The error is
// a 400 invalid_string naming the field by JSON pointer, whatever the
// destination type (unknown and ignored fields included). Syntax errors are
// left to the decoder.
func checkStrings(body []byte) error {
	if utf8.Valid(body) && !bytes.Contains(body, []byte(`\u`)) {
		return nil // no escapes and valid UTF-8: nothing can be wrong
	}
	type frame struct {
		object    bool
		expectKey bool
		key       string
		index     int
	}
	var stack []frame
	pointer := func() string {
		var b strings.Builder
		for _, f := range stack {
			b.WriteByte('/')
			if f.object {
				b.WriteString(apperr.EscapeToken(f.key))
			} else {
				fmt.Fprint(&b, f.index)
			}
		}
		return b.String()
	}
	advance := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].expectKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // io.EOF, or a syntax error the decoder reports
		}
		end := dec.InputOffset()
		raw := body[prev:end]
		prev = end
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, frame{object: true, expectKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				advance()
			}
			continue
		case string:
			lit := raw[bytes.IndexByte(raw, '"'):]
			n := len(stack)
			if n > 0 && stack[n-1].object && stack[n-1].expectKey {
				stack[n-1].key, stack[n-1].expectKey = v, false
				if problem := stringProblem(lit); problem != "" {
					return badString(pointer(), "(a key) "+problem)
				}
				continue
			}
			if problem := stringProblem(lit); problem != "" {
				return badString(pointer(), problem)
			}
		}
		advance()
	}
}

func badString(field, problem string) error {
	msg := fieldName(field) + " " + problem
	return apperr.E("decode", apperr.Invalid, CodeInvalidString, msg).WithDetails(apperr.FieldError{Field: field, Message: msg})
}

// stringProblem inspects one JSON string literal, quotes included, as sent:
// a NUL (raw or \u0000), bytes that are not UTF-8 and unpaired surrogate
// escapes are problems.
func stringProblem(lit []byte) string {
	lit = lit[1 : len(lit)-1]
	for i := 0; i < len(lit); {
		c := lit[i]
		if c == '\\' {
			if lit[i+1] != 'u' {
				i += 2
				continue
			}
			r := hex4(lit[i+2 : i+6])
			i += 6
			switch {
			case r == 0:
				return "must not contain a NUL character (\\u0000)"
			case r >= 0xDC00 && r < 0xE000:
				return "must be valid Unicode: an unpaired surrogate escape"
			case r >= 0xD800 && r < 0xDC00:
				if i+6 > len(lit) || lit[i] != '\\' || lit[i+1] != 'u' {
					return "must be valid Unicode: an unpaired surrogate escape"
				}
				if lo := hex4(lit[i+2 : i+6]); lo < 0xDC00 || lo >= 0xE000 {
					return "must be valid Unicode: an unpaired surrogate escape"
				}
				i += 6
			}
			continue
		}
		if c == 0 {
			return "must not contain a NUL character (\\u0000)"
		}
		r, size := utf8.DecodeRune(lit[i:])
		if r == utf8.RuneError && size == 1 {
			return "must be valid UTF-8"
		}
		i += size
	}
	return ""
}

// hex4 decodes the four hex digits of a \u escape (the decoder checked them).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return apperr.E("decode", apperr.Invalid, CodeMalformedJSON, fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn))
	case errors.As(err, &typ):
		field := "/" + strings.ReplaceAll(typ.Field, ".", "/")
		if typ.Field == "" {
			field = ""
		}
		msg := fmt.Sprintf("%s must be %s, not %s", fieldName(typ.Field), jsonTypeName(typ.Type.Kind().String()), typ.Value)
		return apperr.E("decode", apperr.Invalid, CodeWrongType, msg).WithDetails(apperr.FieldError{Field: field, Message: msg})
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return apperr.E("decode", apperr.Invalid, CodeMalformedJSON, "malformed JSON: unexpected end of input")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		msg := fmt.Sprintf("unknown field %q", name)
		return apperr.E("decode", apperr.Invalid, CodeUnknownField, msg).WithDetails(apperr.FieldError{Field: "/" + name, Message: msg})
	}
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return apperr.E("decode", apperr.TooLarge, CodeBodyTooLarge, "request body is larger than the limit")
	}
	return apperr.E("decode", apperr.Invalid, CodeMalformedJSON, "malformed JSON: "+err.Error())
}

func fieldName(f string) string {
	if f == "" {
		return "the body"
	}
	return f
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	case "int", "int64", "int32", "uint", "uint64", "float64":
		return "a number"
	}
	return "a " + kind
}
