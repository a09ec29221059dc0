package store

import (
	"bytes"
	"context"
	"database/sql"
	"testing"

	"modernc.org/sqlite"
)

// TestSQLitePageCacheBound: SQLite's page caches hold at most
// pageCacheBudgetKiB for the writer and every reader of a store, while ten
// times that budget of distinct pages is written and read, and they do hold
// pages (a cache_size that SQLite ignored would pass the bound trivially).
// The budget is process-wide (the unified page cache), so this test does
// not run in parallel with tests that open SQLite stores.
func TestSQLitePageCacheBound(t *testing.T) {
	ctx := context.Background()
	const readers = 16
	s, err := Open(ctx, Options{DataDir: t.TempDir(), MaxConns: readers})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	budget := pageCacheBudgetKiB(readers) << 10
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE cache_probe (id INTEGER PRIMARY KEY, b BLOB NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	// One row of 3.5 KB per 4 KiB page: 10 × the budget in distinct pages.
	row := bytes.Repeat([]byte("x"), 3500)
	rows := 10 * budget / 3500
	for first := 0; first < rows; first += 500 {
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for id := first; id < min(first+500, rows); id++ {
			if _, err := tx.ExecContext(ctx, `INSERT INTO cache_probe (id, b) VALUES (?, ?)`, id, row); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	// Every reader open at once (so each has its cache and its share of
	// the budget), each reading its sixteenth of the rows.
	conns := make([]*sql.Conn, readers)
	for i := range conns {
		if conns[i], err = s.r.Conn(ctx); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close()
	}
	for i, c := range conns {
		var n int
		if err := c.QueryRowContext(ctx, `SELECT count(*) FROM cache_probe WHERE id % ? = ? AND length(b) = 3500`, readers, i).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("reader %d read no rows", i)
		}
	}
	w, err := s.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	held := cacheUsed(t, w)
	for _, c := range conns {
		held += cacheUsed(t, c)
	}
	// SQLite counts a page with its header a little above the size
	// cache_size is divided by, and each connection has a few pages
	// pinned or kept at minimum: 5 % and 16 KiB per connection of slack.
	limit := budget + budget/20 + (readers+1)*16<<10
	t.Logf("page caches hold %d KiB (budget %d KiB)", held>>10, budget>>10)
	if held > limit {
		t.Errorf("page caches hold %d KiB, more than the budget of %d KiB", held>>10, budget>>10)
	}
	if held < writerCacheKiB<<10/2 {
		t.Errorf("page caches hold %d KiB after writing %d KiB: cache_size is not in effect", held>>10, 10*budget>>10)
	}
}

// cacheUsed is the page cache memory of one connection, as SQLite counts it.
func cacheUsed(t *testing.T, c *sql.Conn) int {
	t.Helper()
	var used int
	if err := c.Raw(func(dc any) error {
		var err error
		used, _, err = dc.(sqlite.DBStatus).Status(sqlite.DBStatusCacheUsed, false)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return used
}
