package store

import (
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"testing/fstest"
)

// The migrations are written once, in PostgreSQL's dialect, in
// migrations/*.sql. SQLite runs the same files with three type spellings
// translated at migration time; everything else in a migration must be SQL
// both engines read alike, which TestMigratedSchemasInStep checks on real
// databases (docs/storage.md). The one exception is what the engines
// cannot share at all, trigger bodies (PL/pgSQL functions against
// SQLite's RAISE(ABORT, …)): such lines sit in an engine block,
//
//	-- +engine postgres
//	… PostgreSQL only …
//	-- +engine sqlite
//	… SQLite only …
//	-- +engine end
//
// and each engine runs the file with the other engine's block lines
// turned into comments ("-- " in front), so line numbers stay the same.

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

// engineBlock is the marker line of an engine block.
var engineBlock = regexp.MustCompile(`^--\s*\+engine\s+(postgres|sqlite|end)\s*$`)

// forEngine comments out the lines of the other engine's blocks. A block
// ends at the other engine's marker or at "+engine end"; an unclosed
// block, a repeated marker or an end without a block is an error.
func forEngine(ddl string, e Engine) (string, error) {
	lines := strings.Split(ddl, "\n")
	block := ""
	for i, l := range lines {
		if m := engineBlock.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			switch {
			case m[1] == "end" && block == "":
				return "", fmt.Errorf("store: line %d: +engine end without a block", i+1)
			case m[1] == block:
				return "", fmt.Errorf("store: line %d: +engine %s inside the %s block", i+1, m[1], block)
			case m[1] == "end":
				block = ""
			default:
				block = m[1]
			}
			continue
		}
		if block != "" && block != string(e) && l != "" {
			lines[i] = "-- " + l
		}
	}
	if block != "" {
		return "", fmt.Errorf("store: the %s block is not closed with -- +engine end", block)
	}
	return strings.Join(lines, "\n"), nil
}

// sqliteDDL translates one PostgreSQL migration into SQLite's dialect.
func sqliteDDL(postgres string) (string, error) {
	out, err := forEngine(postgres, SQLite)
	if err != nil {
		return "", err
	}
	for _, s := range sqliteSpellings {
		out = s.postgres.ReplaceAllString(out, s.sqlite)
	}
	if w := postgresOnly.FindString(uncommented(out)); w != "" {
		return "", fmt.Errorf("store: migration uses %s, which has no SQLite spelling (docs/storage.md)", w)
	}
	return out, nil
}

// uncommented is ddl without its comment lines (a commented PostgreSQL
// block may name PostgreSQL-only words).
func uncommented(ddl string) string {
	var b strings.Builder
	for _, l := range strings.Split(ddl, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Migrations returns the goose migration files for engine: the PostgreSQL
// files as written (SQLite blocks commented out), or the same files
// translated by sqliteDDL. File names, and so goose's version numbers, are
// the same on both engines. The translation (regular expressions over every
// file) runs once per engine and process: every Migrate, and so every
// operator command, used to pay it again.
func Migrations(e Engine) (fs.FS, error) {
	files, ok := translated[e]
	if !ok {
		return nil, fmt.Errorf("store: no migrations for engine %q", e)
	}
	ddl, err := files()
	if err != nil {
		return nil, err
	}
	// fstest.MapFS is the standard library's in-memory fs.FS; it does not
	// depend on package testing. Each caller gets its own copy.
	out := fstest.MapFS{}
	for name, text := range ddl {
		out[name] = &fstest.MapFile{Data: []byte(text), Mode: 0o444}
	}
	return out, nil
}

// translated holds each engine's migration files, file name → DDL, made
// once (translate).
var translated = map[Engine]func() (map[string]string, error){
	Postgres: sync.OnceValues(func() (map[string]string, error) { return translate(Postgres) }),
	SQLite:   sync.OnceValues(func() (map[string]string, error) { return translate(SQLite) }),
}

// translate reads the migration files and writes them for engine e.
func translate(e Engine) (map[string]string, error) {
	pg, err := fs.Sub(migrationsFS, "migrations")
	if err != nil {
		return nil, err
	}
	files, err := fs.Glob(pg, "*.sql")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, name := range files {
		b, err := fs.ReadFile(pg, name)
		if err != nil {
			return nil, err
		}
		ddl, err := forEngine(string(b), Postgres)
		if e == SQLite {
			ddl, err = sqliteDDL(string(b))
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = ddl
	}
	return out, nil
}
