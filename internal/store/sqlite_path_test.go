package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/store"
)

// TestSQLiteDataDirWithURICharacters opens the embedded database in data
// directories whose names hold what a file: URI gives a meaning to (#, ?,
// %, spaces) and other scripts: the database must be the file
// farebox.db in that very directory, and what was written there must be
// read back after a reopen. (Before, "data#1" opened a file "data" and a
// "?" cut the pragmas off.)
func TestSQLiteDataDirWithURICharacters(t *testing.T) {
	for _, name := range []string{"data#1", "a?b=c&d", "100%25", "with space", "بيانات", "データ 🚆", "x%2Fy"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), name)
			s, err := store.Open(ctx, store.Options{DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, s, func(q store.Q) error {
				return q.CreateAccount(ctx, account.Account{ID: "acc_1", Name: name, CreatedAt: t0})
			})
			s.Close()
			if fi, err := os.Stat(filepath.Join(dir, "farebox.db")); err != nil || fi.Size() == 0 {
				t.Fatalf("the database is not the file farebox.db in %q: %v", dir, err)
			}
			entries, _ := os.ReadDir(filepath.Dir(dir))
			if len(entries) != 1 {
				t.Errorf("files beside the data directory: %v", entries)
			}
			s, err = store.Open(ctx, store.Options{DataDir: dir, MustExist: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := s.Read().Account(ctx, "acc_1")
			if err != nil || got.Name != name {
				t.Fatalf("read back %+v, %v", got, err)
			}
		})
	}
}
