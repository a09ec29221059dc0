package testtool

import (
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apperr"
)

// WantErr fails t unless err is an *apperr.Error of kind and code, and
// returns it.
func WantErr(t testing.TB, err error, kind apperr.Kind, code string) *apperr.Error {
	t.Helper()
	ae := apperr.As(err)
	if ae == nil || ae.Kind != kind || ae.Code != code {
		t.Fatalf("error %v (%+v), want kind %d code %q", err, ae, kind, code)
	}
	return ae
}

// WantFields fails t unless e names exactly fields, in order.
func WantFields(t testing.TB, e *apperr.Error, fields ...string) {
	t.Helper()
	var got []string
	for _, d := range e.Details {
		got = append(got, d.Field)
	}
	if strings.Join(got, ",") != strings.Join(fields, ",") {
		t.Fatalf("details name %v, want %v (%v)", got, fields, e.Details)
	}
}

// Code is err's apperr code ("" for nil or an error of another kind).
func Code(err error) string {
	if e := apperr.As(err); e != nil {
		return e.Code
	}
	return ""
}
