package retention

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestPolicyValidate(t *testing.T) {
	for _, c := range []struct {
		p    Policy
		want string // "" valid
	}{
		{Default(), ""},
		{Policy{Identification: MinIdentification, BillingYears: MinBillingYears}, ""},
		{Policy{Identification: MinIdentification - time.Second, BillingYears: 8}, "--retention-identification: 719h59m59s is shorter than the legal minimum of 30 days"},
		{Policy{Identification: 10 * Day, BillingYears: 8}, "--retention-identification: 10 days is shorter than the legal minimum of 30 days"},
		{Policy{Identification: 183 * Day, BillingYears: 7}, "--retention-billing-records: 7 years is shorter than the legal minimum of 8 years"},
		{Policy{Identification: 9 * 366 * Day, BillingYears: 8}, "--retention-identification: must not be longer than --retention-billing-records"},
		{Policy{Identification: 183 * Day, BillingYears: 101}, "--retention-billing-records: 101 years is more than 100"},
	} {
		err := c.p.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]time.Duration{"183d": 183 * Day, "30d": 30 * Day, "4392h": 4392 * time.Hour} {
		if got, err := ParsePeriod(in); err != nil || got != want {
			t.Errorf("ParsePeriod(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "d", "-3d", "1.5d", "six months", "99999999d", "-1h"} {
		if _, err := ParsePeriod(in); err == nil {
			t.Errorf("ParsePeriod(%q) accepted", in)
		}
	}
	for in, want := range map[string]int{"8y": 8, "10": 10} {
		if got, err := ParseYears(in); err != nil || got != want {
			t.Errorf("ParseYears(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "y", "-8y", "8.5y", "eight"} {
		if _, err := ParseYears(in); err == nil {
			t.Errorf("ParseYears(%q) accepted", in)
		}
	}
}

// TestBillingUntil: the duty counts from the end of the document's
// calendar year in Berlin (a document of New Year's Eve 23:30 Berlin,
// 22:30 UTC, belongs to that year).
func TestBillingUntil(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	p := Default()
	for at, want := range map[string]string{
		"2026-06-15T10:00:00Z": "2034-12-31T23:00:00Z",
		"2026-12-31T22:30:00Z": "2034-12-31T23:00:00Z",
		"2026-12-31T23:30:00Z": "2035-12-31T23:00:00Z",
	} {
		a, _ := time.Parse(time.RFC3339, at)
		if got := p.BillingUntil(a, berlin).Format(time.RFC3339); got != want {
			t.Errorf("BillingUntil(%s) = %s, want %s", at, got, want)
		}
	}
	now, _ := time.Parse(time.RFC3339, "2035-01-02T00:00:00Z")
	if got := p.BillingCutoff(now, berlin).Format(time.RFC3339); got != "2026-12-31T23:00:00Z" {
		t.Errorf("BillingCutoff = %s", got)
	}
}

func TestNeutralMedium(t *testing.T) {
	for in, want := range map[string]string{
		`{"photo_id_lite":{"first_name":"Max","last_name":"Muster","birth_date":"1990-01-01"}}`: `{"photo_id_lite":{"birth_date":"1900-01-01","first_name":"erased","last_name":"erased"}}`,
		`{"photo_id_name_only":{"first_name":"Max","last_name":"Muster"}}`:                      `{"photo_id_name_only":{"first_name":"erased","last_name":"erased"}}`,
		`not json`: `{"photo_id_name_only":{"first_name":"erased","last_name":"erased"}}`,
		`{}`:       `{"photo_id_name_only":{"first_name":"erased","last_name":"erased"}}`,
	} {
		if got := string(NeutralMedium(json.RawMessage(in))); got != want {
			t.Errorf("NeutralMedium(%s) = %s", in, got)
		}
	}
}

func TestRedactObject(t *testing.T) {
	in := `{"id":"t","ticket":{"properties":{"identification_medium":{"photo_id_lite":{"first_name":"Max","last_name":"M","birth_date":"1990-01-01"}},` +
		`"tariff_settings":{"german_postal_code":"10115"}}},"product":{"<product>":"abc"},"tariff_settings":null,"coupons":[{"tariff_settings":{"german_postal_code":"20095"}}]}`
	out, changed := RedactObject([]byte(in))
	s := string(out)
	if !changed || strings.Contains(s, "Max") || strings.Contains(s, "10115") || strings.Contains(s, "20095") || !strings.Contains(s, `{"<product>":"abc"}`) {
		t.Fatalf("redacted: %s", s)
	}
	if again, changed := RedactObject(out); changed || string(again) != s {
		t.Fatalf("second redaction changed %s", again)
	}
	if _, changed := RedactObject([]byte(`{"id":"x","tariff_settings":null}`)); changed {
		t.Error("nothing to redact, but changed")
	}
}
