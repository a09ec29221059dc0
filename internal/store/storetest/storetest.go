// Package storetest gives each test a fresh, migrated database on either
// engine. SQLite lives in t.TempDir(); PostgreSQL gets its own schema in the
// database named by FAREBOX_TEST_DATABASE_URL (default: the local server with
// trust auth), dropped when the test ends. PostgreSQL being unreachable fails
// the test: both engines must pass the same tests.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"

	"github.com/farebox/farebox/internal/store"
	"github.com/jackc/pgx/v5/stdlib"
)

// DefaultPostgresURL is used when FAREBOX_TEST_DATABASE_URL is unset.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Engines lists the engines every store test runs on.
var Engines = []store.Engine{store.SQLite, store.Postgres}

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
	b := make([]byte, 6)
	rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", PostgresURL())
	if err != nil {
		t.Fatalf("storetest: open postgres: %v", err)
	}
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

// Open returns a migrated store on engine, closed when the test ends.
func Open(t testing.TB, engine store.Engine) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), Options(t, engine))
	if err != nil {
		t.Fatalf("storetest: open %s: %v", engine, err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("storetest: migrate %s: %v", engine, err)
	}
	return s
}

// ForEachEngine runs fn as a parallel subtest on each engine.
func ForEachEngine(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	for _, e := range Engines {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			fn(t, Open(t, e))
		})
	}
}

var _ = stdlib.GetDefaultDriver
