package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"testing"

	"github.com/farebox/farebox/internal/store"
)

// poolSize bounds the slots per migration digest; more parallel tests than
// this fall back to a fresh schema migrated for the test.
const poolSize = 64

// readyMark is the comment on a slot schema whose migration completed.
const readyMark = "farebox storetest slot: migrated"

// pgDigest names the PostgreSQL migration set, computed once.
var pgDigest = sync.OnceValues(func() (string, error) { return migrationsDigest(store.Postgres) })

// poolSlot takes a free migrated schema for the test, emptied, and releases
// it when the test ends.
func poolSlot(t testing.TB) store.Options {
	t.Helper()
	digest, err := pgDigest()
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	ctx := context.Background()
	admin := adminDB(t)
	conn, err := admin.Conn(ctx)
	if err != nil {
		admin.Close()
		t.Fatalf("storetest: PostgreSQL at %s is required for store tests: %v", PostgresURL(), err)
	}
	release := func() { conn.Close(); admin.Close() }
	for n := 0; n < poolSize; n++ {
		key := slotKey(digest, n)
		var got bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&got); err != nil {
			release()
			t.Fatalf("storetest: PostgreSQL at %s is required for store tests: %v", PostgresURL(), err)
		}
		if !got {
			continue
		}
		schema := fmt.Sprintf("fbxtest_pool_%s_%d", digest, n)
		if err := prepareSlot(ctx, conn, schema); err != nil {
			_, _ = conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, key)
			release()
			t.Fatalf("storetest: prepare %s: %v", schema, err)
		}
		// The lock is held by conn's session until the test ends.
		t.Cleanup(func() {
			_, _ = conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, key)
			release()
		})
		return store.Options{URL: PostgresURL(), Schema: schema}
	}
	release()
	// Every slot is busy: a fresh schema, migrated for this test.
	o := Options(t, store.Postgres)
	if err := migrateAndClose(o); err != nil {
		t.Fatalf("storetest: migrate: %v", err)
	}
	return o
}

// slotKey is the advisory lock of slot n of a migration set.
func slotKey(digest string, n int) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "farebox storetest slot %s %d", digest, n)
	return int64(h.Sum64())
}

// prepareSlot makes schema a migrated, empty database: it migrates a new
// or half-built slot, and otherwise deletes every row (children before
// parents), puts back the rows the migrations seed and restarts the
// sequences.
func prepareSlot(ctx context.Context, conn *sql.Conn, schema string) error {
	var mark sql.NullString
	err := conn.QueryRowContext(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, schema).Scan(&mark)
	if err != nil && err != sql.ErrNoRows {
		return err
	}
	if mark.String != readyMark {
		if _, err := conn.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`); err != nil {
			return err
		}
		if _, err := conn.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
			return err
		}
		if err := migrateAndClose(store.Options{URL: PostgresURL(), Schema: schema, MaxConns: 1}); err != nil {
			return err
		}
		_, err := conn.ExecContext(ctx, `COMMENT ON SCHEMA `+schema+` IS '`+readyMark+`'`)
		return err
	}
	tables, err := deleteOrder(ctx, conn, schema)
	if err != nil {
		return err
	}
	// The books' triggers (migration 00019) refuse deleting issued
	// invoices, their files, the audit log and receipts; replica mode skips
	// user triggers for this session while it empties the slot.
	stmts := []string{`SET session_replication_role = replica`}
	for _, tbl := range tables {
		stmts = append(stmts, `DELETE FROM `+schema+`.`+tbl)
	}
	for _, seed := range seedRows {
		stmts = append(stmts, fmt.Sprintf(seed, schema))
	}
	// One simple-protocol query: one implicit transaction.
	stmts = append(stmts, `SELECT setval(format('%I.%I', schemaname, sequencename), 1, false) FROM pg_sequences
		WHERE schemaname = '`+schema+`' AND sequencename NOT LIKE 'goose%'`, `RESET session_replication_role`)
	_, err = conn.ExecContext(ctx, strings.Join(stmts, ";\n"))
	return err
}

// seedRows write again the rows the migrations insert (%s is the schema),
// which emptying a slot deleted with the rest: a reused slot is as freshly
// migrated. Migration 00020 inserts retention_state's one row, which
// ClaimRetentionRun updates (without it no retention run is ever claimed).
var seedRows = []string{`INSERT INTO %s.retention_state (id) VALUES (1)`}

// deleteOrder lists the schema's tables (but goose's) so that a table comes
// before every table its foreign keys reference.
func deleteOrder(ctx context.Context, conn *sql.Conn, schema string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> 'goose_db_version'`, schema)
	if err != nil {
		return nil, err
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, n)
	}
	rows.Close()
	rows, err = conn.QueryContext(ctx, `SELECT r.relname, f.relname FROM pg_constraint c
		JOIN pg_class r ON r.oid = c.conrelid JOIN pg_class f ON f.oid = c.confrelid
		JOIN pg_namespace ns ON ns.oid = r.relnamespace WHERE c.contype = 'f' AND ns.nspname = $1`, schema)
	if err != nil {
		return nil, err
	}
	referencedBy := map[string]map[string]bool{} // parent → children
	for rows.Next() {
		var child, parent string
		if err := rows.Scan(&child, &parent); err != nil {
			rows.Close()
			return nil, err
		}
		if child == parent {
			continue
		}
		if referencedBy[parent] == nil {
			referencedBy[parent] = map[string]bool{}
		}
		referencedBy[parent][child] = true
	}
	rows.Close()
	var out []string
	done := map[string]bool{}
	for len(out) < len(tables) {
		progress := false
		for _, tbl := range tables {
			if done[tbl] {
				continue
			}
			ready := true
			for child := range referencedBy[tbl] {
				if !done[child] {
					ready = false
				}
			}
			if ready {
				out, done[tbl], progress = append(out, tbl), true, true
			}
		}
		if !progress {
			return nil, fmt.Errorf("foreign keys of %s form a cycle", schema)
		}
	}
	return out, nil
}
