package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOperatorCommandsRefuseMissingDatabase: an operator command run where
// there is no embedded database (the wrong directory, a typo in --data-dir)
// fails with a message naming the path and creates nothing; --create
// starts a new database deliberately, and then the commands work.
func TestOperatorCommandsRefuseMissingDatabase(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "not-here")
	env := map[string]string{"FAREBOX_DATA_DIR": dir}
	for _, args := range [][]string{
		{"usage"}, {"migrate"}, {"accounts", "list"}, {"accounts", "create", "--name", "P"},
		{"catalog", "export"}, {"gtfs", "list"},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, envFrom(env), nil, &out, &errb)
		abs, _ := filepath.Abs(filepath.Join(dir, "farebox.db"))
		if err == nil || !strings.Contains(err.Error(), abs) || !strings.Contains(err.Error(), "--create") {
			t.Errorf("farebox %s on a missing data dir: %v", strings.Join(args, " "), err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("farebox %s created %s (%v)", strings.Join(args, " "), dir, err)
		}
	}
	// The flag is accepted after the command's arguments too.
	if out := cli(t, env, "migrate", "--create"); !strings.Contains(out, "sqlite") {
		t.Errorf("migrate --create: %s", out)
	}
	if out := cli(t, env, "usage"); strings.Contains(out, "error") {
		t.Errorf("usage after --create: %s", out)
	}
	// --data-dir given explicitly is checked the same way.
	var errb bytes.Buffer
	other := filepath.Join(t.TempDir(), "typo")
	if err := run(context.Background(), []string{"accounts", "list", "--data-dir", other}, envFrom(nil), nil, &bytes.Buffer{}, &errb); err == nil ||
		!strings.Contains(err.Error(), "no embedded database") {
		t.Errorf("accounts list --data-dir %s: %v", other, err)
	}
}
