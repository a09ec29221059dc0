package store

import (
	"strings"
	"testing"
)

func TestSQLiteDDLTranslatesTheThreeSpellings(t *testing.T) {
	pg := `-- +goose Up
CREATE TABLE t (
    id       BIGSERIAL PRIMARY KEY,
    at       TIMESTAMPTZ NOT NULL,
    gone_at  timestamptz,
    body     BYTEA,
    created_at_bytea_note TEXT
);`
	want := `-- +goose Up
CREATE TABLE t (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       TIMESTAMP NOT NULL,
    gone_at  TIMESTAMP,
    body     BLOB,
    created_at_bytea_note TEXT
);`
	got, err := sqliteDDL(pg)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("translated:\n%s\nwant:\n%s", got, want)
	}
}

// A PostgreSQL type without a SQLite spelling is refused by name, not
// passed through to make a schema that differs silently.
func TestSQLiteDDLRefusesUntranslatedTypes(t *testing.T) {
	for _, ddl := range []string{
		"CREATE TABLE t (id BIGSERIAL, x TEXT PRIMARY KEY);", // a serial that is not the key
		"CREATE TABLE t (id SERIAL PRIMARY KEY);",
		"CREATE TABLE t (doc JSONB NOT NULL);",
		"CREATE TABLE t (id uuid PRIMARY KEY);",
	} {
		_, err := sqliteDDL(ddl)
		if err == nil || !strings.Contains(err.Error(), "no SQLite spelling") {
			t.Errorf("%s: err = %v, want a refusal naming the type", ddl, err)
		}
	}
}

// Engine blocks: each engine runs its own block's lines and the other's
// as comments, line for line; malformed blocks are refused.
func TestEngineBlocks(t *testing.T) {
	src := "CREATE TABLE t (x TEXT);\n-- +engine postgres\nCREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;\n-- +engine sqlite\nCREATE TRIGGER g BEFORE DELETE ON t BEGIN SELECT RAISE(ABORT, 'no'); END;\n\n-- +engine end\nDROP TABLE u;"
	pg, err := forEngine(src, Postgres)
	if err != nil {
		t.Fatal(err)
	}
	lite, err := sqliteDDL(src)
	if err != nil {
		t.Fatal(err)
	}
	wantPG := "CREATE TABLE t (x TEXT);\n-- +engine postgres\nCREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;\n-- +engine sqlite\n-- CREATE TRIGGER g BEFORE DELETE ON t BEGIN SELECT RAISE(ABORT, 'no'); END;\n\n-- +engine end\nDROP TABLE u;"
	wantLite := "CREATE TABLE t (x TEXT);\n-- +engine postgres\n-- CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;\n-- +engine sqlite\nCREATE TRIGGER g BEFORE DELETE ON t BEGIN SELECT RAISE(ABORT, 'no'); END;\n\n-- +engine end\nDROP TABLE u;"
	if pg != wantPG || lite != wantLite {
		t.Errorf("postgres:\n%s\nsqlite:\n%s", pg, lite)
	}
	for _, bad := range []string{
		"-- +engine postgres\nX;", // not closed
		"-- +engine end\n",        // end without block
		"-- +engine sqlite\n-- +engine sqlite\n-- +engine end", // repeated
	} {
		if _, err := forEngine(bad, SQLite); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// A PostgreSQL-only word inside the SQLite text is still refused; in
	// the commented PostgreSQL block it is not.
	if _, err := sqliteDDL("-- +engine postgres\nCREATE TABLE j (d JSONB);\n-- +engine end"); err != nil {
		t.Errorf("commented JSONB refused: %v", err)
	}
	if _, err := sqliteDDL("-- +engine sqlite\nCREATE TABLE j (d JSONB);\n-- +engine end"); err == nil {
		t.Error("JSONB in the SQLite block accepted")
	}
}
