// Package apperr is farebox's error vocabulary. Domain and store code return
// errors built with E; only the HTTP edge (package httpapi) turns a Kind into a
// status code and the JSON error body. The Kind enum is append-only: its
// values are documented in the OpenAPI file and relied upon by clients.
package apperr

import (
	"errors"
	"strings"
)

// Kind classifies an error. Append new kinds at the end only.
type Kind int

const (
	Other            Kind = iota // unclassified: treated as Internal
	Invalid                      // malformed input (400)
	NotFound                     // unknown id or another tenant's (404)
	Conflict                     // state conflict (409)
	Unauthenticated              // missing, unknown or revoked key (401)
	Forbidden                    // authenticated but not permitted (403)
	RateLimited                  // too many requests (429)
	Unavailable                  // dependency down, retry later (503)
	Internal                     // a bug or an unexpected failure (500)
	Unprocessable                // well-formed request breaking a rule (422)
	TooLarge                     // request body too large (413)
	UnsupportedMedia             // not JSON (415)
	MethodNotAllowed             // wrong method (405)
	Accepted                     // not an error: work still in progress (202)
)

// FieldError names one invalid field by JSON pointer.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

var escaper = strings.NewReplacer("~", "~0", "/", "~1")

// EscapeToken escapes one JSON pointer token (RFC 6901: ~ → ~0, / → ~1),
// as a FieldError's Field needs it.
func EscapeToken(tok string) string { return escaper.Replace(tok) }

// Error is the one error type the service passes around.
type Error struct {
	Kind    Kind
	Op      string       // operation, for logs: "order.Place"
	Code    string       // stable snake_case code for clients: "product_not_found"
	Msg     string       // human sentence shown to clients
	Details []FieldError // validation failures
	Err     error        // wrapped cause, never shown to clients
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	if e.Msg != "" {
		b.WriteString(e.Msg)
	} else if e.Code != "" {
		b.WriteString(e.Code)
	}
	if e.Err != nil {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// E builds an *Error. code is the stable client-facing code, msg the sentence.
func E(op string, kind Kind, code, msg string) *Error {
	return &Error{Op: op, Kind: kind, Code: code, Msg: msg}
}

// Wrap classifies err as an internal failure of op (its text is logged, not shown).
func Wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var ae *Error
	if errors.As(err, &ae) {
		return err
	}
	return &Error{Op: op, Kind: Internal, Code: CodeInternalError, Msg: "internal error", Err: err}
}

// WithDetails attaches field errors and returns e.
func (e *Error) WithDetails(d ...FieldError) *Error {
	e.Details = append(e.Details, d...)
	return e
}

// KindOf returns the Kind of the first *Error in err's chain, Internal when none.
func KindOf(err error) Kind {
	var ae *Error
	if errors.As(err, &ae) && ae.Kind != Other {
		return ae.Kind
	}
	return Internal
}

// As returns the first *Error in err's chain, or nil.
func As(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	return nil
}

// NotFoundf is the uniform "unknown id" error: another tenant's record looks
// the same. code names the record (CodeCouponNotFound, "coupon_not_found");
// the message says so: "coupon not found".
func NotFoundf(op, code string) *Error {
	what := strings.ReplaceAll(strings.TrimSuffix(code, "_not_found"), "_", " ")
	return E(op, NotFound, code, what+" not found")
}

// Validation builds a 422 with one field error; msg is the top-level sentence.
func Validation(op, code, field, msg string) *Error {
	return E(op, Unprocessable, code, msg).WithDetails(FieldError{Field: field, Message: msg})
}

// WithCause records the underlying error (logged, never shown) and returns e.
func (e *Error) WithCause(err error) *Error {
	e.Err = err
	return e
}

// Param is a 400 for a missing or malformed query or path parameter.
func Param(op, field, msg string) *Error {
	return E(op, Invalid, CodeInvalidParameter, msg).WithDetails(FieldError{Field: field, Message: msg})
}
