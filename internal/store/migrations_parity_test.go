package store_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestMigrationsSameOnBothEngines: SQLite runs the PostgreSQL files
// translated, under the same names (goose's version numbers), and each
// translated file differs from its source only on the lines that name a
// translated type and on the lines of engine blocks, which the other
// engine runs as comments.
func TestMigrationsSameOnBothEngines(t *testing.T) {
	pg, sqlite := migrationFiles(t, store.Postgres), migrationFiles(t, store.SQLite)
	if !slices.Equal(mapKeys(pg), mapKeys(sqlite)) {
		t.Fatalf("migration files differ: postgres %v, sqlite %v", mapKeys(pg), mapKeys(sqlite))
	}
	typeLine := regexp.MustCompile(`\b(BIGSERIAL|TIMESTAMPTZ|BYTEA)\b`)
	for _, name := range mapKeys(pg) {
		pl, sl := lines(pg[name]), lines(sqlite[name])
		if len(pl) != len(sl) {
			t.Errorf("%s: %d lines on PostgreSQL, %d on SQLite", name, len(pl), len(sl))
			continue
		}
		for i := range pl {
			engineLine := pl[i] == "-- "+sl[i] || sl[i] == "-- "+pl[i]
			if pl[i] != sl[i] && !typeLine.MatchString(pl[i]) && !engineLine {
				t.Errorf("%s:%d: postgres %q became %q on SQLite", name, i+1, pl[i], sl[i])
			}
		}
	}
}

// TestMigratedSchemasInStep migrates a real database of each engine and
// compares what the databases report (SQLite's pragmas, PostgreSQL's
// catalogs): tables, columns in order with type, nullability and default,
// primary keys, unique constraints, indexes and foreign keys. It catches
// what the text comparison cannot: a statement each engine reads
// differently.
func TestMigratedSchemasInStep(t *testing.T) {
	got := map[store.Engine][]string{}
	for _, e := range storetest.AllEngines {
		s := storetest.Open(t, e)
		if e == store.SQLite {
			got[e] = sqliteSchema(t, s.ReaderDB())
		} else {
			got[e] = postgresSchema(t, s.ReaderDB())
		}
	}
	pg, lite := got[store.Postgres], got[store.SQLite]
	if len(pg) < 50 {
		t.Fatalf("PostgreSQL reports only %d schema facts: %v", len(pg), pg)
	}
	for _, l := range pg {
		if !slices.Contains(lite, l) {
			t.Errorf("only on PostgreSQL: %s", l)
		}
	}
	for _, l := range lite {
		if !slices.Contains(pg, l) {
			t.Errorf("only on SQLite: %s", l)
		}
	}
}

// The schema facts are lines such as
//
//	api_keys column 3 hash text not null
//	api_keys unique (hash)
//	api_keys index api_keys_prefix (prefix)
//	api_keys foreign key (account_id) → accounts (id) on delete no action
//
// goose's own version table is left out: goose creates it per dialect.

// canonicalType maps each engine's type names to one vocabulary.
var canonicalType = map[string]string{
	// SQLite: the declared type.
	"TEXT": "text", "INTEGER": "integer", "BIGINT": "bigint", "BOOLEAN": "boolean", "BLOB": "bytes", "TIMESTAMP": "timestamp",
	"DOUBLE PRECISION": "double",
	// PostgreSQL: information_schema.columns.data_type.
	"text": "text", "integer": "integer", "bigint": "bigint", "boolean": "boolean", "bytea": "bytes",
	"timestamp with time zone": "timestamp", "double precision": "double",
}

func typeOf(t string) string {
	if c, ok := canonicalType[t]; ok {
		return c
	}
	return "unmapped type " + t
}

// castSuffix is PostgreSQL's spelling of a default's type (” :: text).
var castSuffix = regexp.MustCompile(`::[a-z ]+$`)

func defaultOf(d sql.NullString) string {
	if !d.Valid {
		return ""
	}
	return " default " + strings.ToLower(castSuffix.ReplaceAllString(d.String, ""))
}

func sqliteSchema(t *testing.T, db *sql.DB) []string {
	t.Helper()
	var out []string
	tables := queryStrings(t, db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'goose_db_version' ORDER BY name`)
	for _, tbl := range tables {
		ddl := queryStrings(t, db, `SELECT sql FROM sqlite_master WHERE name = $1`, tbl)[0]
		rows, err := db.Query(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info($1) ORDER BY cid`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		pk := map[int]string{}
		n := 0
		for rows.Next() {
			var name, typ string
			var notNull bool
			var dflt sql.NullString
			var pkPos int
			if err := rows.Scan(&name, &typ, &notNull, &dflt, &pkPos); err != nil {
				t.Fatal(err)
			}
			n++
			typ = typeOf(typ)
			if pkPos > 0 {
				pk[pkPos] = name
				// SQLite lets a non-INTEGER key column hold NULL (a
				// historical quirk); the store never writes one.
				notNull = true
				if typ == "integer" && strings.Contains(ddl, "AUTOINCREMENT") {
					typ = "bigint serial" // the 64-bit rowid
				}
			}
			out = append(out, fmt.Sprintf("%s column %d %s %s%s%s", tbl, n, name, typ, nullity(notNull), defaultOf(dflt)))
		}
		rows.Close()
		var keys []string
		for i := 1; i <= len(pk); i++ {
			keys = append(keys, pk[i])
		}
		if len(keys) > 0 {
			out = append(out, fmt.Sprintf("%s primary key (%s)", tbl, strings.Join(keys, ", ")))
		}
		rows, err = db.Query(`SELECT name, "unique", origin, partial FROM pragma_index_list($1)`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		type idx struct {
			name, origin    string
			unique, partial bool
		}
		var idxs []idx
		for rows.Next() {
			var i idx
			if err := rows.Scan(&i.name, &i.unique, &i.origin, &i.partial); err != nil {
				t.Fatal(err)
			}
			idxs = append(idxs, i)
		}
		rows.Close()
		for _, i := range idxs {
			if i.origin == "pk" {
				continue // the primary key, reported above
			}
			cols := strings.Join(queryStrings(t, db, `SELECT name FROM pragma_index_info($1) ORDER BY seqno`, i.name), ", ")
			out = append(out, indexFact(tbl, i.name, cols, i.origin, i.unique, i.partial))
		}
		rows, err = db.Query(`SELECT id, "table", "from", "to", on_delete FROM pragma_foreign_key_list($1) ORDER BY id, seq`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		type fk struct {
			ref, onDelete string
			from, to      []string
		}
		fks := map[int]*fk{}
		var order []int
		for rows.Next() {
			var id int
			var ref, from, to, onDelete string
			if err := rows.Scan(&id, &ref, &from, &to, &onDelete); err != nil {
				t.Fatal(err)
			}
			if fks[id] == nil {
				fks[id] = &fk{ref: ref, onDelete: strings.ToLower(onDelete)}
				order = append(order, id)
			}
			fks[id].from, fks[id].to = append(fks[id].from, from), append(fks[id].to, to)
		}
		rows.Close()
		for _, id := range order {
			f := fks[id]
			out = append(out, fkFact(tbl, strings.Join(f.from, ", "), f.ref, strings.Join(f.to, ", "), f.onDelete))
		}
	}
	slices.Sort(out)
	return out
}

func postgresSchema(t *testing.T, db *sql.DB) []string {
	t.Helper()
	var out []string
	tables := queryStrings(t, db, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'goose_db_version' ORDER BY table_name`)
	for _, tbl := range tables {
		rows, err := db.Query(`SELECT column_name, data_type, is_nullable = 'NO', column_default FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var name, typ string
			var notNull bool
			var dflt sql.NullString
			if err := rows.Scan(&name, &typ, &notNull, &dflt); err != nil {
				t.Fatal(err)
			}
			n++
			typ = typeOf(typ)
			if dflt.Valid && strings.HasPrefix(dflt.String, "nextval(") {
				typ, dflt = typ+" serial", sql.NullString{}
			}
			out = append(out, fmt.Sprintf("%s column %d %s %s%s%s", tbl, n, name, typ, nullity(notNull), defaultOf(dflt)))
		}
		rows.Close()
		// Index columns in key order; pg_index, since information_schema
		// does not describe plain indexes.
		rows, err = db.Query(`SELECT i.relname, x.indisprimary, x.indisunique, x.indpred IS NOT NULL,
				COALESCE((SELECT c.contype FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype IN ('p', 'u')), 'c'),
				(SELECT string_agg(a.attname, ', ' ORDER BY k.ord) FROM unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
					JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum)
			FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class r ON r.oid = x.indrelid
			JOIN pg_namespace ns ON ns.oid = r.relnamespace
			WHERE ns.nspname = current_schema() AND r.relname = $1`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name, contype, cols string
			var primary, unique, partial bool
			if err := rows.Scan(&name, &primary, &unique, &partial, &contype, &cols); err != nil {
				t.Fatal(err)
			}
			if primary {
				out = append(out, fmt.Sprintf("%s primary key (%s)", tbl, cols))
				continue
			}
			origin := map[string]string{"u": "u", "c": "c"}[contype]
			out = append(out, indexFact(tbl, name, cols, origin, unique, partial))
		}
		rows.Close()
		rows, err = db.Query(`SELECT f.relname, c.confdeltype,
				(SELECT string_agg(a.attname, ', ' ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY k(attnum, ord)
					JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum),
				(SELECT string_agg(a.attname, ', ' ORDER BY k.ord) FROM unnest(c.confkey) WITH ORDINALITY k(attnum, ord)
					JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum)
			FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid JOIN pg_class f ON f.oid = c.confrelid
			JOIN pg_namespace ns ON ns.oid = r.relnamespace
			WHERE c.contype = 'f' AND ns.nspname = current_schema() AND r.relname = $1`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		onDelete := map[string]string{"a": "no action", "r": "restrict", "c": "cascade", "n": "set null", "d": "set default"}
		for rows.Next() {
			var ref, del, from, to string
			if err := rows.Scan(&ref, &del, &from, &to); err != nil {
				t.Fatal(err)
			}
			out = append(out, fkFact(tbl, from, ref, to, onDelete[del]))
		}
		rows.Close()
		// CHECK constraints have no SQLite pragma; none exist, and a new
		// one must be compared by hand (the text test still sees it).
		if n := queryStrings(t, db, `SELECT count(*)::text FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid
			JOIN pg_namespace ns ON ns.oid = r.relnamespace WHERE c.contype = 'c' AND ns.nspname = current_schema() AND r.relname = $1`, tbl)[0]; n != "0" {
			out = append(out, fmt.Sprintf("%s has %s CHECK constraints this test cannot compare", tbl, n))
		}
	}
	slices.Sort(out)
	return out
}

func nullity(notNull bool) string {
	if notNull {
		return " not null"
	}
	return " null"
}

// indexFact names an index by its columns when a constraint created it
// (engines name those differently) and by its name otherwise.
func indexFact(tbl, name, cols, origin string, unique, partial bool) string {
	kind := "index " + name
	if unique {
		kind = "unique index " + name
	}
	if origin == "u" {
		kind = "unique"
	}
	if partial {
		kind = "partial " + kind
	}
	return fmt.Sprintf("%s %s (%s)", tbl, kind, cols)
}

func fkFact(tbl, from, ref, to, onDelete string) string {
	return fmt.Sprintf("%s foreign key (%s) → %s (%s) on delete %s", tbl, from, ref, to, onDelete)
}

func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func migrationFiles(t *testing.T, e store.Engine) map[string]string {
	t.Helper()
	fsys, err := store.Migrations(e)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no %s migrations", e)
	}
	return out
}

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func mapKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
