package config

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestInspectWindowTolerance: --inspect-window-tolerance defaults to 30 s,
// takes 0s (none) and the environment, and refuses a negative, a
// non-duration and more than 10 minutes, naming the flag.
func TestInspectWindowTolerance(t *testing.T) {
	none := func(string) string { return "" }
	if c, err := Load(nil, none, io.Discard); err != nil || c.InspectWindowTolerance != 30*time.Second {
		t.Errorf("default: %v %v", c.InspectWindowTolerance, err)
	}
	if c, err := Load([]string{"--inspect-window-tolerance", "0s"}, none, io.Discard); err != nil || c.InspectWindowTolerance != 0 {
		t.Errorf("none: %v %v", c.InspectWindowTolerance, err)
	}
	env := func(k string) string { return map[string]string{"FAREBOX_INSPECT_WINDOW_TOLERANCE": "10m"}[k] }
	if c, err := Load(nil, env, io.Discard); err != nil || c.InspectWindowTolerance != 10*time.Minute {
		t.Errorf("env: %v %v", c.InspectWindowTolerance, err)
	}
	for _, bad := range []string{"-1s", "30", "10m1s", "٣٠s"} {
		if _, err := Load([]string{"--inspect-window-tolerance", bad}, none, io.Discard); err == nil || !strings.Contains(err.Error(), "inspect-window-tolerance") {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
}
