package schema

import (
	"bytes"
	"strings"

	"github.com/farebox/farebox/internal/apperr"
)

// Target names the request field a schema validates and the error it
// produces; the SDKs branch on the message prefix Field + ": ".
type Target struct {
	Field string // request field: "identification_medium"
	Code  string // apperr code of the 422
}

// The two validated request fields.
var (
	IdentificationMedium = Target{Field: "identification_medium", Code: CodeIdentificationMediumInvalid}
	TariffSettings       = Target{Field: "tariff_settings", Code: CodeTariffSettingsInvalid}
)

// Prefix is the message prefix the SDKs match: "identification_medium: ".
func (t Target) Prefix() string { return t.Field + ": " }

// Error turns problems into the 422 the SDKs expect, or nil when there are
// none. The message is the prefix followed by "<pointer> <text>" per problem,
// joined by "; "; each detail's field is the pointer under /<Field>.
func (t Target) Error(op string, problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(t.Prefix())
	details := make([]apperr.FieldError, len(problems))
	for i, p := range problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Pointer != "" {
			b.WriteString(p.Pointer)
			b.WriteByte(' ')
		}
		b.WriteString(p.Message)
		details[i] = apperr.FieldError{Field: "/" + t.Field + p.Pointer, Message: p.Message}
	}
	return apperr.E(op, apperr.Unprocessable, t.Code, b.String()).WithDetails(details...)
}

// Check validates the raw JSON of the field (as found in the request body)
// against s. An absent field (empty raw) is a 422 "<field>: is required";
// JSON null is validated like any value (draft-04 "type": "object" rejects it).
// Malformed JSON is a 400 (apperr.Invalid, code invalid_json).
func (t Target) Check(op string, s *Schema, raw []byte) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return t.Error(op, []Problem{{Message: "is required"}})
	}
	v, err := Decode(raw)
	if err != nil {
		return apperr.E(op, apperr.Invalid, CodeInvalidJSON, t.Field+" is not valid JSON").
			WithDetails(apperr.FieldError{Field: "/" + t.Field, Message: "is not valid JSON"}).WithCause(err)
	}
	return t.Error(op, s.Validate(v))
}
