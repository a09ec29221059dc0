package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/app/webusers"
)

// TestAdminPasswordCommand: the line it prints is what
// --admin-password-file reads; a short password is refused; serve refuses
// a file that is not such a line.
func TestAdminPasswordCommand(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"admin-password", "--user", "ops"}, envFrom(nil),
		strings.NewReader("correct horse battery staple\n"), &out, &errb)
	if err != nil {
		t.Fatal(err, errb.String())
	}
	line := strings.TrimSpace(out.String())
	if !strings.HasPrefix(line, "ops:$argon2id$v=19$") || strings.Contains(line, "correct") {
		t.Fatalf("line %q", line)
	}
	if c, err := webusers.ParseOperatorCredentials(line); err != nil || c.User != "ops" {
		t.Fatalf("%v %+v", err, c)
	}
	if err := run(context.Background(), []string{"admin-password"}, envFrom(nil), strings.NewReader("short\n"), &out, &errb); err == nil ||
		!strings.Contains(err.Error(), "12 characters") {
		t.Errorf("short password: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "admin")
	if err := os.WriteFile(bad, []byte("ops:secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"serve", "--data-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--admin-password-file", bad},
		envFrom(nil), nil, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "--admin-password-file") {
		t.Errorf("serve with a bad password file: %v", err)
	}
}
