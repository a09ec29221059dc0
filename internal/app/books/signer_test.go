package books_test

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/app/books"
)

// TestFileSigner: the books key is created once (mode 0600) and read back
// as the same key; a missing file without create and a file that is no
// Ed25519 key are errors naming the file.
func TestFileSigner(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys", books.KeyFile)
	if _, err := books.FileSigner(path, false); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a missing key without create: %v", err)
	}
	s, err := books.FileSigner(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v", fi, err)
	}
	again, err := books.FileSigner(path, true)
	if err != nil || again.KeyID() != s.KeyID() || !again.Public().Equal(s.Public()) || len(s.KeyID()) != 16 {
		t.Fatalf("reloaded key %v %v, want %s", again, err, s.KeyID())
	}
	sig, err := again.Sign([]byte("m"))
	if err != nil || !ed25519.Verify(s.Public(), []byte("m"), sig) {
		t.Fatalf("signature %v", err)
	}
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := books.FileSigner(bad, true); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("a file that is no key: %v", err)
	}
}
