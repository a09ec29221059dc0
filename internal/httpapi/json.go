package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/farebox/farebox/internal/apperr"
)

// writeJSON encodes v with status. Encoding errors cannot be reported to
// the client any more; they would be bugs in our own types.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// readBody reads the whole request body (already limited by the server).
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return nil, apperr.E("decode", apperr.TooLarge, "body_too_large", fmt.Sprintf("request body is larger than %d bytes", maxErr.Limit))
		}
		return nil, apperr.E("decode", apperr.Invalid, "body_unreadable", "request body could not be read")
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
		return apperr.E("decode", apperr.UnsupportedMedia, "unsupported_media_type", "request body must be JSON (Content-Type: application/json)")
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
			return apperr.E("decode", apperr.Invalid, "body_required", "request body required: a JSON object")
		}
		return nil
	}
	if err := checkJSONType(r); err != nil {
		return err
	}
	return decodeJSON(body, dst, state(r).strict)
}

// decodeJSON decodes one JSON object into dst and turns decoder errors into
// 400s that name the offending field.
func decodeJSON(body []byte, dst any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return apperr.E("decode", apperr.Invalid, "malformed_json", "request body must hold exactly one JSON value")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return apperr.E("decode", apperr.Invalid, "malformed_json", "request body must hold exactly one JSON value")
	}
	return nil
}

func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return apperr.E("decode", apperr.Invalid, "malformed_json", fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn))
	case errors.As(err, &typ):
		field := "/" + strings.ReplaceAll(typ.Field, ".", "/")
		if typ.Field == "" {
			field = ""
		}
		msg := fmt.Sprintf("%s must be %s, not %s", fieldName(typ.Field), jsonTypeName(typ.Type.Kind().String()), typ.Value)
		return apperr.E("decode", apperr.Invalid, "wrong_type", msg).WithDetails(apperr.FieldError{Field: field, Message: msg})
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return apperr.E("decode", apperr.Invalid, "malformed_json", "malformed JSON: unexpected end of input")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		msg := fmt.Sprintf("unknown field %q", name)
		return apperr.E("decode", apperr.Invalid, "unknown_field", msg).WithDetails(apperr.FieldError{Field: "/" + name, Message: msg})
	}
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return apperr.E("decode", apperr.TooLarge, "body_too_large", "request body is larger than the limit")
	}
	return apperr.E("decode", apperr.Invalid, "malformed_json", "malformed JSON: "+err.Error())
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
