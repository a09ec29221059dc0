package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/farebox/farebox/internal/apperr"
)

func mustCompile(t testing.TB, s string) *Schema {
	t.Helper()
	c, err := Compile([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMonthlyMedium(t *testing.T) {
	s := mustCompile(t, MonthlyIdentificationMedium)
	cases := []struct {
		name    string
		in      string
		msg     string   // full message; "" = valid
		details []string // "field|message"
	}{
		{"valid", `{"photo_id_lite":{"first_name":"Max","last_name":"Mustermann","birth_date":"1990-01-01"}}`, "", nil},
		{"valid leap day", `{"photo_id_lite":{"first_name":"Ännchen","last_name":"O'Brien-Müller","birth_date":"2000-02-29"}}`, "", nil},
		{"impossible date", `{"photo_id_lite":{"first_name":"Max","last_name":"M","birth_date":"1990-02-30"}}`,
			"identification_medium: /photo_id_lite/birth_date must be a date (YYYY-MM-DD)",
			[]string{"/identification_medium/photo_id_lite/birth_date|must be a date (YYYY-MM-DD)"}},
		{"non-leap february 29", `{"photo_id_lite":{"first_name":"Max","last_name":"M","birth_date":"1999-02-29"}}`,
			"identification_medium: /photo_id_lite/birth_date must be a date (YYYY-MM-DD)",
			[]string{"/identification_medium/photo_id_lite/birth_date|must be a date (YYYY-MM-DD)"}},
		{"german date format", `{"photo_id_lite":{"first_name":"Max","last_name":"M","birth_date":"01.01.1990"}}`,
			"identification_medium: /photo_id_lite/birth_date must be a date (YYYY-MM-DD)",
			[]string{"/identification_medium/photo_id_lite/birth_date|must be a date (YYYY-MM-DD)"}},
		{"date-time instead of date", `{"photo_id_lite":{"first_name":"Max","last_name":"M","birth_date":"1990-01-01T00:00:00Z"}}`,
			"identification_medium: /photo_id_lite/birth_date must be a date (YYYY-MM-DD)",
			[]string{"/identification_medium/photo_id_lite/birth_date|must be a date (YYYY-MM-DD)"}},
		{"several problems", `{"photo_id_lite":{"first_name":1,"birth_date":"1990-02-03","nick":"x"}}`,
			"identification_medium: /photo_id_lite/first_name must be a string; /photo_id_lite/last_name is required; /photo_id_lite/nick is not allowed",
			[]string{"/identification_medium/photo_id_lite/first_name|must be a string", "/identification_medium/photo_id_lite/last_name|is required", "/identification_medium/photo_id_lite/nick|is not allowed"}},
		{"empty name", `{"photo_id_lite":{"first_name":"","last_name":"M","birth_date":"1990-01-01"}}`,
			"identification_medium: /photo_id_lite/first_name must not be empty",
			[]string{"/identification_medium/photo_id_lite/first_name|must not be empty"}},
		{"oversized name", `{"photo_id_lite":{"first_name":"` + strings.Repeat("x", 101) + `","last_name":"M","birth_date":"1990-01-01"}}`,
			"identification_medium: /photo_id_lite/first_name must be at most 100 characters long",
			[]string{"/identification_medium/photo_id_lite/first_name|must be at most 100 characters long"}},
		{"other option", `{"photo_id":{"first_name":"Max"}}`,
			"identification_medium: /photo_id is not allowed; /photo_id_lite is required",
			[]string{"/identification_medium/photo_id|is not allowed", "/identification_medium/photo_id_lite|is required"}},
		{"empty object", `{}`, "identification_medium: /photo_id_lite is required", []string{"/identification_medium/photo_id_lite|is required"}},
		{"null", `null`, "identification_medium: must be an object", []string{"/identification_medium|must be an object"}},
		{"string", `"Max"`, "identification_medium: must be an object", []string{"/identification_medium|must be an object"}},
		{"inner not object", `{"photo_id_lite":[1]}`, "identification_medium: /photo_id_lite must be an object", []string{"/identification_medium/photo_id_lite|must be an object"}},
		{"pointer escaping", `{"photo_id_lite":{"first_name":"a","last_name":"b","birth_date":"1990-01-01","a/b~c":1}}`,
			"identification_medium: /photo_id_lite/a~1b~0c is not allowed", []string{"/identification_medium/photo_id_lite/a~1b~0c|is not allowed"}},
	}
	for _, c := range cases {
		ps, err := s.ValidateJSON([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err = IdentificationMedium.Error("activate", ps)
		if c.msg == "" {
			if err != nil || ps != nil {
				t.Errorf("%s: want valid, got %v", c.name, err)
			}
			continue
		}
		e := apperr.As(err)
		if e == nil || e.Kind != apperr.Unprocessable || e.Code != "identification_medium_invalid" || e.Msg != c.msg {
			t.Errorf("%s: got %#v\nwant message %q", c.name, err, c.msg)
			continue
		}
		var got []string
		for _, d := range e.Details {
			got = append(got, d.Field+"|"+d.Message)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.details) {
			t.Errorf("%s: details %v, want %v", c.name, got, c.details)
		}
	}
}

func TestMonthlyTariffSettings(t *testing.T) {
	s := mustCompile(t, MonthlyTariffSettings)
	cases := []struct{ in, msg string }{
		{`{"german_postal_code":"10115"}`, ""},
		{`{"german_postal_code":"01067"}`, ""},
		{`{"german_postal_code":"not-germany"}`, ""},
		{`{"german_postal_code":"1011"}`, "tariff_settings: /german_postal_code must match the pattern ^([0-9]{5}|not-germany)$"},
		{`{"german_postal_code":"101155"}`, "tariff_settings: /german_postal_code must match the pattern ^([0-9]{5}|not-germany)$"},
		{`{"german_postal_code":"Not-Germany"}`, "tariff_settings: /german_postal_code must match the pattern ^([0-9]{5}|not-germany)$"},
		{`{"german_postal_code":10115}`, "tariff_settings: /german_postal_code must be a string"},
		{`{}`, "tariff_settings: /german_postal_code is required"},
		{`{"german_postal_code":"10115","city":"Berlin"}`, "tariff_settings: /city is not allowed"},
		{`[]`, "tariff_settings: must be an object"},
	}
	for _, c := range cases {
		ps, err := s.ValidateJSON([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		err = TariffSettings.Error("tariff", ps)
		if c.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", c.in, err)
			}
			continue
		}
		e := apperr.As(err)
		if e == nil || e.Kind != apperr.Unprocessable || e.Code != "tariff_settings_invalid" || e.Msg != c.msg || !strings.HasPrefix(e.Details[0].Field, "/tariff_settings") {
			t.Errorf("%s: got %#v, want %q", c.in, err, c.msg)
		}
	}
}

func TestCheck(t *testing.T) {
	s := mustCompile(t, MonthlyIdentificationMedium)
	wantCode := func(name string, err error, kind apperr.Kind, code, msg, field string) {
		t.Helper()
		e := apperr.As(err)
		if e == nil || e.Kind != kind || e.Code != code || e.Msg != msg || len(e.Details) != 1 || e.Details[0].Field != field {
			t.Errorf("%s: %#v", name, err)
		}
	}
	wantCode("absent", IdentificationMedium.Check("op", s, nil), apperr.Unprocessable, "identification_medium_invalid", "identification_medium: is required", "/identification_medium")
	wantCode("blank", IdentificationMedium.Check("op", s, []byte("  ")), apperr.Unprocessable, "identification_medium_invalid", "identification_medium: is required", "/identification_medium")
	wantCode("malformed", IdentificationMedium.Check("op", s, []byte(`{"photo_id_lite":`)), apperr.Invalid, "invalid_json", "identification_medium is not valid JSON", "/identification_medium")
	wantCode("trailing", IdentificationMedium.Check("op", s, []byte(`{} {}`)), apperr.Invalid, "invalid_json", "identification_medium is not valid JSON", "/identification_medium")
	wantCode("null", IdentificationMedium.Check("op", s, []byte(`null`)), apperr.Unprocessable, "identification_medium_invalid", "identification_medium: must be an object", "/identification_medium")
	if err := IdentificationMedium.Check("op", s, []byte(`{"photo_id_lite":{"first_name":"Max","last_name":"M","birth_date":"1990-01-01"}}`)); err != nil {
		t.Errorf("valid: %v", err)
	}
	wantCode("value absent", TariffSettings.CheckValue("op", mustCompile(t, MonthlyTariffSettings), nil, false), apperr.Unprocessable, "tariff_settings_invalid", "tariff_settings: is required", "/tariff_settings")
	if err := TariffSettings.CheckValue("op", mustCompile(t, MonthlyTariffSettings), map[string]any{"german_postal_code": "10115"}, true); err != nil {
		t.Errorf("value valid: %v", err)
	}
}

// Draft-04 specifics: boolean exclusiveMaximum, numbers as json.Number (no
// float rounding), formats asserted, no $schema means draft-04.
func TestDraft04(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"n":{"type":"integer","maximum":10,"exclusiveMaximum":true},"big":{"type":"integer","maximum":9007199254740993},"when":{"type":"string","format":"date-time"},"mail":{"type":"string","format":"email"},"tel":{"type":"string","format":"phone"}}}`)
	cases := []struct{ in, want string }{
		{`{"n":9}`, "[]"},
		{`{"n":10}`, "[{/n must be less than 10}]"},
		{`{"n":1.5}`, "[{/n must be an integer}]"},
		{`{"big":9007199254740993}`, "[]"},
		{`{"big":9007199254740994}`, "[{/big must be at most 9007199254740993}]"},
		{`{"when":"2025-06-01T00:00:00+02:00"}`, "[]"},
		{`{"when":"2025-06-01"}`, "[{/when must be a date and time (RFC 3339)}]"},
		{`{"mail":"nope"}`, "[{/mail must be an e-mail address}]"},
		{`{"tel":"anything"}`, "[]"},
	}
	for _, c := range cases {
		ps, err := s.ValidateJSON([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(ps); got != c.want {
			t.Errorf("%s: %s, want %s", c.in, got, c.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, bad := range []string{
		`{"type":`,
		`{"type":"thing"}`,
		`{"$ref":"http://example.com/schema.json"}`,
		`{"$ref":"file:///etc/passwd"}`,
		`{"properties":{"a":{"$ref":"#/definitions/missing"}}}`,
		`{"pattern":"("}`,
	} {
		_, err := Compile([]byte(bad))
		if e := apperr.As(err); e == nil || e.Kind != apperr.Invalid || e.Code != "invalid_schema" {
			t.Errorf("Compile(%s) = %v, want invalid_schema", bad, err)
		}
	}
}

func TestCacheCompilesOnce(t *testing.T) {
	var c Cache
	var wg sync.WaitGroup
	got := make([]*Schema, 50)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := c.Get([]byte(MonthlyIdentificationMedium))
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		}()
	}
	wg.Wait()
	for _, s := range got {
		if s != got[0] || s == nil {
			t.Fatal("different compiled schemas for one input")
		}
	}
	if _, err := c.Get([]byte(MonthlyTariffSettings)); err != nil {
		t.Fatal(err)
	}
	_, err1 := c.Get([]byte(`{"type":"thing"}`))
	_, err2 := c.Get([]byte(`{"type":"thing"}`))
	if err1 == nil || err1 != err2 {
		t.Errorf("broken schema errors: %v, %v", err1, err2)
	}
	if c.compiles != 3 || c.Len() != 3 {
		t.Errorf("compiles = %d, len = %d; want 3, 3", c.compiles, c.Len())
	}
	if h := got[0].Hash(); h == ([32]byte{}) {
		t.Error("zero hash")
	}
}

// FuzzMonthlyActivation feeds arbitrary activation bodies: decoding and
// validation never panic, and a body built from a well-formed medium
// (names without control characters, a real date) always passes.
func FuzzMonthlyActivation(f *testing.F) {
	medium := mustCompile(f, MonthlyIdentificationMedium)
	tariff := mustCompile(f, MonthlyTariffSettings)
	for _, seed := range []string{
		`{"identification_medium":{"photo_id_lite":{"first_name":"Max","last_name":"Mustermann","birth_date":"1990-01-01"}}}`,
		`{"identification_medium":{"photo_id_lite":{"first_name":"Max","last_name":"M","birth_date":"1990-02-30"}},"tariff_settings":{"german_postal_code":"10115"}}`,
		`{"reactivation_key":"k"}`, `{}`, `[]`, `null`, `{"identification_medium":{"photo_id_lite":{"a":1e400}}}`,
	} {
		f.Add([]byte(seed), "Max", "Mustermann", 1990, 1, 1)
	}
	f.Fuzz(func(t *testing.T, body []byte, first, last string, y, m, d int) {
		var req map[string]json.RawMessage
		if json.Unmarshal(body, &req) == nil {
			_ = IdentificationMedium.Check("fuzz", medium, req["identification_medium"])
			if raw, ok := req["tariff_settings"]; ok {
				_ = TariffSettings.Check("fuzz", tariff, raw)
			}
		}
		if v, err := Decode(body); err == nil {
			medium.Validate(v)
			tariff.Validate(v)
		}
		if first == "" || last == "" || len([]rune(first)) > 100 || len([]rune(last)) > 100 {
			return
		}
		if y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 28 {
			return
		}
		good, err := json.Marshal(map[string]any{"photo_id_lite": map[string]string{
			"first_name": first, "last_name": last, "birth_date": fmt.Sprintf("%04d-%02d-%02d", y, m, d)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := IdentificationMedium.Check("fuzz", medium, good); err != nil {
			t.Fatalf("valid medium %s rejected: %v", good, err)
		}
	})
}

func BenchmarkValidateMedium(b *testing.B) {
	s := mustCompile(b, MonthlyIdentificationMedium)
	v, err := Decode([]byte(`{"photo_id_lite":{"first_name":"Max","last_name":"Mustermann","birth_date":"1990-01-01"}}`))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if ps := s.Validate(v); ps != nil {
			b.Fatal(ps)
		}
	}
}

func BenchmarkCheckMediumJSON(b *testing.B) {
	var c Cache
	raw := []byte(MonthlyIdentificationMedium)
	body := []byte(`{"photo_id_lite":{"first_name":"Max","last_name":"Mustermann","birth_date":"1990-01-01"}}`)
	for b.Loop() {
		s, err := c.Get(raw)
		if err != nil {
			b.Fatal(err)
		}
		if err := IdentificationMedium.Check("bench", s, body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateInvalidMedium(b *testing.B) {
	s := mustCompile(b, MonthlyIdentificationMedium)
	body := []byte(`{"photo_id_lite":{"first_name":1,"birth_date":"1990-02-30","nick":"x"}}`)
	for b.Loop() {
		if err := IdentificationMedium.Check("bench", s, body); err == nil {
			b.Fatal("accepted")
		}
	}
}

// CheckValue is Check for a value already decoded with Decode (numbers as
// json.Number); present reports whether the field was in the request.
func (t Target) CheckValue(op string, s *Schema, v any, present bool) error {
	if !present {
		return t.Error(op, []Problem{{Message: "is required"}})
	}
	return t.Error(op, s.Validate(v))
}
