package store

import (
	"fmt"
	"io/fs"
	"regexp"
	"testing/fstest"
)

// The migrations are written once, in PostgreSQL's dialect, in
// migrations/*.sql. SQLite runs the same files with three type spellings
// translated at migration time; everything else in a migration must be SQL
// both engines read alike, which TestMigratedSchemasInStep checks on real
// databases (docs/storage.md).

// sqliteSpellings are PostgreSQL's spellings and SQLite's for the same
// column types, matched as whole upper- or lower-case words.
var sqliteSpellings = []struct {
	postgres *regexp.Regexp
	sqlite   string
}{
	// A 64-bit auto-incrementing key: SQLite's INTEGER PRIMARY KEY is the
	// 64-bit rowid; AUTOINCREMENT keeps ids of deleted rows from coming back,
	// as a PostgreSQL sequence does.
	{regexp.MustCompile(`(?i)\bBIGSERIAL\s+PRIMARY\s+KEY\b`), "INTEGER PRIMARY KEY AUTOINCREMENT"},
	// The store writes UTC instants itself; SQLite stores the text.
	{regexp.MustCompile(`(?i)\bTIMESTAMPTZ\b`), "TIMESTAMP"},
	{regexp.MustCompile(`(?i)\bBYTEA\b`), "BLOB"},
}

// postgresOnly are PostgreSQL words with no translation: a migration that
// uses one anywhere else than in the spellings above fails to translate
// instead of producing a SQLite schema that differs silently.
var postgresOnly = regexp.MustCompile(`(?i)\b(SMALLSERIAL|BIGSERIAL|SERIAL|TIMESTAMPTZ|BYTEA|JSONB|UUID|CITEXT|INET)\b`)

// sqliteDDL translates one PostgreSQL migration into SQLite's dialect.
func sqliteDDL(postgres string) (string, error) {
	out := postgres
	for _, s := range sqliteSpellings {
		out = s.postgres.ReplaceAllString(out, s.sqlite)
	}
	if w := postgresOnly.FindString(out); w != "" {
		return "", fmt.Errorf("store: migration uses %s, which has no SQLite spelling (docs/storage.md)", w)
	}
	return out, nil
}

// Migrations returns the goose migration files for engine: the PostgreSQL
// files as written, or the same files translated by sqliteDDL. File names,
// and so goose's version numbers, are the same on both engines.
func Migrations(e Engine) (fs.FS, error) {
	pg, err := fs.Sub(migrationsFS, "migrations")
	if err != nil {
		return nil, err
	}
	if e == Postgres {
		return pg, nil
	}
	files, err := fs.Glob(pg, "*.sql")
	if err != nil {
		return nil, err
	}
	// fstest.MapFS is the standard library's in-memory fs.FS; it does not
	// depend on package testing.
	lite := fstest.MapFS{}
	for _, name := range files {
		b, err := fs.ReadFile(pg, name)
		if err != nil {
			return nil, err
		}
		ddl, err := sqliteDDL(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		lite[name] = &fstest.MapFile{Data: []byte(ddl), Mode: 0o444}
	}
	return lite, nil
}
