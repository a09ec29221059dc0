// Package storetest gives each test a fresh, migrated database on either
// engine. PostgreSQL being unreachable fails the test: both engines must
// pass the same tests.
//
// Migrating is the expensive part of a small database test (DDL of about
// thirty tables: a sixth to a quarter of a second on PostgreSQL, more when
// parallel tests queue on goose's migration lock), so Open migrates rarely:
//   - PostgreSQL: migrated schemas are kept on the test server as a pool
//     (fbxtest_pool_<digest of the migration files>_<n>). A test takes the
//     first slot whose advisory lock it gets (a session lock, so a crashed
//     test process frees its slots), empties its tables and resets its
//     sequences (about a millisecond) and uses it; the slot is released
//     when the test ends. A slot is migrated only the first time it is
//     used; changed migrations get new slots. Unlike a CREATE DATABASE …
//     TEMPLATE copy, this writes no files and needs no checkpoint.
//   - SQLite: a migrated database file held in memory and written to
//     t.TempDir() for each test.
//
// Options still returns an empty, unmigrated database (a fresh schema of
// the database named by FAREBOX_TEST_DATABASE_URL on PostgreSQL) for tests
// that start a server and let it migrate.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/farebox/farebox/internal/store"
	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for the admin connection
)

// DefaultPostgresURL is used when FAREBOX_TEST_DATABASE_URL is unset.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// AllEngines are the engines every test runs on in the full suite, and
// the store's own tests (ForEachEngine) also under -short.
var AllEngines = []store.Engine{store.SQLite, store.Postgres}

// Engines are the engines a test above the store runs on: both in the full
// suite (scripts/test.sh, CI), SQLite only under -short, the fast tier
// (testtool.FullSuiteOnly names the rest of what -short leaves out). It is
// ranged over like a slice (for _, e := range storetest.Engines); being an
// iterator, it reads -short when a test ranges over it, after the test
// flags are parsed.
var Engines iter.Seq2[int, store.Engine] = func(yield func(int, store.Engine) bool) {
	for i, e := range AllEngines {
		if testing.Short() && e != store.SQLite {
			continue
		}
		if !yield(i, e) {
			return
		}
	}
}

// PostgresURL returns the test server URL.
func PostgresURL() string {
	if u := os.Getenv("FAREBOX_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultPostgresURL
}

// Options returns store options for a fresh database on engine, creating
// (and scheduling the removal of) its PostgreSQL schema. The database is not
// migrated: callers that start a server let it migrate.
func Options(t testing.TB, engine store.Engine) store.Options {
	t.Helper()
	if engine == store.SQLite {
		return store.Options{DataDir: t.TempDir()}
	}
	schema := "t_" + randomHex()
	admin := adminDB(t)
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		admin.Close()
		t.Fatalf("storetest: PostgreSQL at %s is required for store tests: %v", PostgresURL(), err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
		admin.Close()
	})
	return store.Options{URL: PostgresURL(), Schema: schema}
}

// Open returns a migrated store on engine, closed when the test ends: a
// pooled, emptied schema on PostgreSQL, a copy of a migrated file on SQLite
// (see the package comment). Its rows are the test's; its schema is shared
// with later tests, so a test that changes the schema uses Options.
func Open(t testing.TB, engine store.Engine) *store.Store {
	t.Helper()
	return OpenWith(t, engine, nil)
}

// OpenWith is Open with configure applied to the options first (to set a
// clock or the pool size; the database fields are Open's).
func OpenWith(t testing.TB, engine store.Engine, configure func(*store.Options)) *store.Store {
	t.Helper()
	opts := migratedOptions(t, engine)
	if configure != nil {
		configure(&opts)
	}
	s, err := store.Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("storetest: open %s: %v", engine, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// ForEachEngine runs fn as a parallel subtest on each engine, under -short
// too: the store's own tests are where the engines differ, and cheap.
func ForEachEngine(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	eachOf(t, slices.All(AllEngines), func(t *testing.T, e store.Engine) { fn(t, Open(t, e)) })
}

// ForEachEngineOptions is ForEachEngine for a store test that opens its
// store itself (with options of its own, or two instances on one
// database): fn gets the engine.
func ForEachEngineOptions(t *testing.T, fn func(t *testing.T, engine store.Engine)) {
	t.Helper()
	eachOf(t, slices.All(AllEngines), fn)
}

// ForEachEngineLoaded is ForEachEngine for the store's load-shaped tests
// (thousands of rows or concurrent writers, seconds on PostgreSQL): in the
// full suite on both engines, under -short on SQLite only, like the tests
// above the store (Engines).
func ForEachEngineLoaded(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	EachEngine(t, func(t *testing.T, e store.Engine) { fn(t, Open(t, e)) })
}

// EachEngine runs fn as a subtest named by the engine on each of Engines
// (in parallel when there are two, eachOf), for a test that opens its own
// store or server on it (with options of its own, or a store it closes and
// opens again).
func EachEngine(t *testing.T, fn func(t *testing.T, engine store.Engine)) {
	t.Helper()
	eachOf(t, Engines, fn)
}

// EachEngineBench runs fn as a sub-benchmark named by the engine on each
// of Engines.
func EachEngineBench(b *testing.B, fn func(b *testing.B, engine store.Engine)) {
	b.Helper()
	for _, e := range Engines {
		b.Run(string(e), func(b *testing.B) { fn(b, e) })
	}
}

// eachOf runs fn in a subtest per engine, in parallel when there are
// several. One engine (Engines under -short) runs in the test's own turn:
// a parallel subtest would queue again behind the package's other parallel
// tests (-parallel), once per subtest of a test that runs several in turn,
// which made such tests the package's last.
func eachOf(t *testing.T, engines iter.Seq2[int, store.Engine], fn func(t *testing.T, engine store.Engine)) {
	t.Helper()
	n := 0
	for range engines {
		n++
	}
	for _, e := range engines {
		t.Run(string(e), func(t *testing.T) {
			if n > 1 {
				t.Parallel()
			}
			fn(t, e)
		})
	}
}

// Migrated returns the options of a migrated, empty database of the
// test's own on engine (Open's, see the package comment), for a test that
// hands the database to something that opens it itself, such as an
// operator command given the data directory.
func Migrated(t testing.TB, engine store.Engine) store.Options {
	t.Helper()
	return migratedOptions(t, engine)
}

// migratedOptions gives one test a migrated, empty database.
func migratedOptions(t testing.TB, engine store.Engine) store.Options {
	t.Helper()
	if engine == store.SQLite {
		img, err := sqliteImage()
		if err != nil {
			t.Fatalf("storetest: migrated sqlite image: %v", err)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "farebox.db"), img, 0o600); err != nil {
			t.Fatalf("storetest: write sqlite copy: %v", err)
		}
		return store.Options{DataDir: dir}
	}
	return poolSlot(t)
}

// sqliteImage returns the bytes of a migrated SQLite database (closed, so
// the WAL is checkpointed into the one file), built once per process.
var sqliteImage = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "farebox-storetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := migrateAndClose(store.Options{DataDir: dir}); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, "farebox.db"))
})

func migrateAndClose(o store.Options) error {
	ctx := context.Background()
	s, err := store.Open(ctx, o)
	if err != nil {
		return err
	}
	_, err = s.Migrate(ctx)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

// migrationsDigest names the migration set: changed files get new pool
// slots.
func migrationsDigest(e store.Engine) (string, error) {
	fsys, err := store.Migrations(e)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}

func adminDB(t testing.TB) *sql.DB {
	t.Helper()
	admin, err := sql.Open("pgx", PostgresURL())
	if err != nil {
		t.Fatalf("storetest: open postgres: %v", err)
	}
	return admin
}

func randomHex() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// EachEngineWith runs fn as a parallel subtest on each engine of Engines
// (the tests above the store: SQLite only under -short) with what setup
// builds on that engine (a use-case package's bundle of service and store).
func EachEngineWith[B any](t *testing.T, setup func(testing.TB, store.Engine) B, fn func(t *testing.T, b B)) {
	t.Helper()
	EachEngine(t, func(t *testing.T, e store.Engine) { fn(t, setup(t, e)) })
}
