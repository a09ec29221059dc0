package barcode

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKeyPublishedAhead: a key rotated with a start instant is loaded
// verify-only before it (published, not signing), signs from it on;
// SignerAt gives a ticket the key of its issue; a malformed instant is an
// error, never "signs at once".
func TestKeyPublishedAhead(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := LoadOrCreateDir(dir, nil); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
	from := t0.Add(48 * time.Hour)
	k2, err := RotateDirFrom(dir, EnvLive, from, nil)
	if err != nil || k2.ID != 2 {
		t.Fatalf("rotate: %v %v", k2.ID, err)
	}
	before, err := LoadDirAt(dir, from.Add(-time.Nanosecond))
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := before.Active(); a.ID != 1 {
		t.Errorf("before its instant the active key is %d", a.ID)
	}
	if k, ok := before.Lookup(2); !ok || k.Private != nil || !before.Pending(2, from.Add(-time.Nanosecond)) {
		t.Errorf("before its instant key 2 must be published verify-only")
	}
	at, err := LoadDirAt(dir, from)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := at.Active(); a.ID != 2 || at.Pending(2, from) {
		t.Errorf("at its instant the active key is %d", a.ID)
	}
	if f, ok := at.SignsFrom(2); !ok || !f.Equal(from) {
		t.Errorf("SignsFrom(2) = %v %v", f, ok)
	}
	for _, c := range []struct {
		issued time.Time
		want   uint16
	}{{t0, 1}, {from.Add(-time.Second), 1}, {from, 2}, {from.Add(time.Hour), 2}} {
		if k, ok := at.SignerAt(EnvLive, c.issued); !ok || k.ID != c.want {
			t.Errorf("SignerAt(%v) = %d, want %d", c.issued, k.ID, c.want)
		}
	}
	if k, ok := at.SignerAt(EnvTest, t0); !ok || k.ID != TestKeyIDBase+1 {
		t.Errorf("test tickets: %d", k.ID)
	}
	if err := os.WriteFile(filepath.Join(dir, FromFileName(2)), []byte("tomorrow"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDirAt(dir, from); err == nil {
		t.Error("a malformed instant was accepted")
	}
}
