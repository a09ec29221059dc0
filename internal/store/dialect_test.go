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
