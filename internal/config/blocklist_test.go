package config

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestBlocklistSettings: the scheduled import's settings come from flags
// or the environment with their defaults; a URL that is no http(s) URL and
// an interval under a second stop the start naming the flag.
func TestBlocklistSettings(t *testing.T) {
	env := map[string]string{"FAREBOX_BLOCKLIST_IMPORT": "https://lists.example/blocklist.json", "FAREBOX_BLOCKLIST_KEYS": "/etc/national-keys.json"}
	got, err := Load([]string{"--blocklist-interval", "2m", "--blocklist-source", "national"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || got.BlocklistImport != env["FAREBOX_BLOCKLIST_IMPORT"] || got.BlocklistInterval != 2*time.Minute ||
		got.BlocklistSource != "national" || got.BlocklistKeys != "/etc/national-keys.json" {
		t.Fatalf("%+v %v", got, err)
	}
	if got, err := Load(nil, func(string) string { return "" }, io.Discard); err != nil || got.BlocklistImport != "" ||
		got.BlocklistInterval != 30*time.Second || got.BlocklistSource != "import" {
		t.Errorf("defaults: %q %v %q %v", got.BlocklistImport, got.BlocklistInterval, got.BlocklistSource, err)
	}
	for flag, args := range map[string][]string{
		"--blocklist-import":   {"--blocklist-import", "/etc/list.json"},
		"--blocklist-interval": {"--blocklist-interval", "500ms"},
	} {
		if _, err := Load(args, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%v: %v", args, err)
		}
	}
}
