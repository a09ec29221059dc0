package config

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestRenewalLeadDays: default 7, the environment sets it, the flag wins,
// 0 and 28 are the limits, anything else stops the start naming the flag.
func TestRenewalLeadDays(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "FAREBOX_RENEWAL_LEAD_DAYS" {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		args []string
		env  string
		want int
	}{
		{nil, "", 7},
		{nil, "3", 3},
		{[]string{"--renewal-lead-days", "0"}, "3", 0},
		{[]string{"--renewal-lead-days", "28"}, "", 28},
	} {
		got, err := Load(c.args, env(c.env), io.Discard)
		if err != nil || got.RenewalLeadDays != c.want {
			t.Errorf("%v env %q: %d, %v; want %d", c.args, c.env, got.RenewalLeadDays, err, c.want)
		}
	}
	for _, bad := range []string{"29", "-1", "seven", "7d", "1e9"} {
		_, err := Load([]string{"--renewal-lead-days", bad}, env(""), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--renewal-lead-days") {
			t.Errorf("%q accepted or not named: %v", bad, err)
		}
	}
	if c, _ := Load(nil, env(""), io.Discard); !strings.Contains(c.String(), "renewal_lead_days=7") {
		t.Errorf("startup settings line lacks the lead: %s", c.String())
	}
}

// TestRetentionSettings: the defaults, a valid override, and settings
// below the legal minimum refused by Load with a message naming them.
func TestRetentionSettings(t *testing.T) {
	c := Defaults()
	if c.Retention.Identification != 183*24*time.Hour || c.Retention.BillingYears != 8 {
		t.Fatalf("defaults: %+v", c.Retention)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := Load([]string{"--retention-identification", "400d", "--retention-billing-records", "10y"}, env(nil), io.Discard)
	if err != nil || c.Retention.Identification != 400*24*time.Hour || c.Retention.BillingYears != 10 {
		t.Fatalf("override: %+v %v", c.Retention, err)
	}
	for args, want := range map[string]string{
		"--retention-identification=10d":   "--retention-identification: 10 days is shorter than the legal minimum of 30 days",
		"--retention-billing-records=7y":   "--retention-billing-records: 7 years is shorter than the legal minimum of 8 years",
		"--retention-identification=soon":  `--retention-identification: "soon" is not a period`,
		"--retention-billing-records=8.5y": `--retention-billing-records: "8.5y" is not a number of years`,
	} {
		if _, err := Load([]string{args}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	if _, err := Load(nil, env(map[string]string{"FAREBOX_RETENTION_IDENTIFICATION": "1d"}), io.Discard); err == nil {
		t.Error("FAREBOX_RETENTION_IDENTIFICATION=1d accepted")
	}
}
