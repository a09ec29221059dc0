package config

import (
	"io"
	"strings"
	"testing"
	"time"
)

// The deferred ledger's settings: defaults, flags and FAREBOX_* env, and
// every bad value refused with the flag's name.
func TestLedgerCommitSettings(t *testing.T) {
	none := func(string) string { return "" }
	c, err := Load(nil, none, io.Discard)
	if err != nil || c.LedgerCommit != "deferred" || c.LedgerWindow != 100*time.Millisecond || c.LedgerWindowRows != 10000 {
		t.Errorf("defaults: %q %s %d %v", c.LedgerCommit, c.LedgerWindow, c.LedgerWindowRows, err)
	}
	c, err = Load([]string{"--usage-ledger-commit", "before-response", "--usage-ledger-window", "1m"}, func(k string) string {
		return map[string]string{"FAREBOX_USAGE_LEDGER_WINDOW_ROWS": "1000000"}[k]
	}, io.Discard)
	if err != nil || c.LedgerCommit != "before-response" || c.LedgerWindow != time.Minute || c.LedgerWindowRows != 1000000 {
		t.Errorf("set: %q %s %d %v", c.LedgerCommit, c.LedgerWindow, c.LedgerWindowRows, err)
	}
	for _, bad := range [][]string{
		{"--usage-ledger-commit", "async"}, {"--usage-ledger-commit", ""},
		{"--usage-ledger-window", "0s"}, {"--usage-ledger-window", "-5ms"}, {"--usage-ledger-window", "61s"}, {"--usage-ledger-window", "100"},
		{"--usage-ledger-window-rows", "0"}, {"--usage-ledger-window-rows", "1000001"}, {"--usage-ledger-window-rows", "١٠٠"},
		{"--usage-ledger-window-rows", "9223372036854775808"},
	} {
		if _, err := Load(bad, none, io.Discard); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v accepted or not named: %v", bad, err)
		}
	}
}
