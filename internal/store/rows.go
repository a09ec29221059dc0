package store

import (
	"context"
	"database/sql"
	"errors"
)

// scanner is the Scan of one result row, its error already mapped.
type scanner func(dest ...any) error

// eachRow runs query and calls row for every result row in order. Errors of
// the query, the scan and the iteration are mapped (mapErr); row's own
// errors are returned as they are.
func (q Q) eachRow(ctx context.Context, query string, args []any, row func(scan scanner) error) error {
	rows, err := q.db.QueryContext(ctx, query, args...)
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	scan := func(dest ...any) error { return mapErr(rows.Scan(dest...)) }
	for rows.Next() {
		if err := row(scan); err != nil {
			return err
		}
	}
	return mapErr(rows.Err())
}

// collect runs query and returns the value row makes of every result row,
// in order: nil when there is none, nil and the error on a failure.
func collect[T any](ctx context.Context, q Q, query string, args []any, row func(scan scanner) (T, error)) ([]T, error) {
	var out []T
	err := q.eachRow(ctx, query, args, func(scan scanner) error {
		v, err := row(scan)
		if err == nil {
			out = append(out, v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// keyed collects the rows of query, a text key and a value each, as a map.
func keyed[V any](ctx context.Context, q Q, query string, args ...any) (map[string]V, error) {
	out := map[string]V{}
	err := q.eachRow(ctx, query, args, func(scan scanner) error {
		var k string
		var v V
		err := scan(&k, &v)
		out[k] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// anys is ss as query arguments.
func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// singleCounter reads the one number query selects from a single-row
// table: 0 while the row does not exist yet.
func (q Q) singleCounter(ctx context.Context, query string) (int64, error) {
	var n int64
	err := q.db.QueryRowContext(ctx, query).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, mapErr(err)
}
