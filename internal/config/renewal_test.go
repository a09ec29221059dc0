package config

import (
	"io"
	"strings"
	"testing"
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
