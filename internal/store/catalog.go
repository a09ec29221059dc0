package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/farebox/farebox/internal/catalog"
)

// CatalogVersion returns the catalog's version (0 before the first import).
// Every instance polls it to reload its in-memory index after an import.
func (q Q) CatalogVersion(ctx context.Context) (int64, error) {
	return q.singleCounter(ctx, `SELECT version FROM catalog_state WHERE id = 1`)
}

// CatalogUpdatedAt returns when the catalog was last imported, with the
// version it is at (zero before the first import): the time the fare
// exports publish as Last-Modified (docs/fares.md).
func (q Q) CatalogUpdatedAt(ctx context.Context) (int64, time.Time, error) {
	var v int64
	var at time.Time
	err := q.db.QueryRowContext(ctx, `SELECT version, updated_at FROM catalog_state WHERE id = 1`).Scan(&v, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, time.Time{}, nil
	}
	return v, at.UTC(), mapErr(err)
}

// LoadCatalog reads the whole catalog and its version.
func (q Q) LoadCatalog(ctx context.Context) (*catalog.File, int64, error) {
	v, err := q.CatalogVersion(ctx)
	if err != nil {
		return nil, 0, err
	}
	areas, err := jsonRows[catalog.Area](ctx, q, `SELECT data FROM areas ORDER BY position, id`)
	if err != nil {
		return nil, 0, err
	}
	products, err := jsonRows[catalog.Product](ctx, q, `SELECT data FROM products ORDER BY position, id`)
	if err != nil {
		return nil, 0, err
	}
	return &catalog.File{Version: catalog.FormatVersion, Areas: areas, Products: products}, v, nil
}

// ProductOfTicket returns the stored catalog entry of ticket id's product;
// false when the ticket or its product is not stored. It reads the stored
// catalog, so a process that never loaded the catalog (the CLI) sees what
// the servers see.
func (q Q) ProductOfTicket(ctx context.Context, ticketID string) (catalog.Product, bool, error) {
	ps, err := jsonRows[catalog.Product](ctx, q, `SELECT p.data FROM tickets t JOIN products p ON p.id = t.product_id WHERE t.id = $1`, ticketID)
	if err != nil || len(ps) == 0 {
		return catalog.Product{}, false, err
	}
	return ps[0], true, nil
}

// jsonRows decodes the single JSON text column of every row of query.
func jsonRows[T any](ctx context.Context, q Q, query string, args ...any) ([]T, error) {
	out := []T{}
	err := q.eachRow(ctx, query, args, func(scan scanner) error {
		var data string
		var v T
		if err := scan(&data); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ProductIDs returns the ids of every stored product.
func (q Q) ProductIDs(ctx context.Context) (map[string]bool, error) {
	return idSet(ctx, q, `SELECT id FROM products`)
}

// idSet collects the single text column of every row of query as a set.
func idSet(ctx context.Context, q Q, query string, args ...any) (map[string]bool, error) {
	out := map[string]bool{}
	err := q.eachRow(ctx, query, args, func(scan scanner) error {
		var id string
		err := scan(&id)
		out[id] = true
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UpsertCatalog writes every area and product of f (inserting new ones,
// replacing changed ones; records not in f stay, since orders refer to
// them) and bumps the catalog version. Call it inside Write after
// validating f.
func (q Q) UpsertCatalog(ctx context.Context, f *catalog.File, at time.Time) error {
	base := 0
	_ = q.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(position), 0) FROM areas`).Scan(&base)
	for i, a := range f.Areas {
		data, err := json.Marshal(a)
		if err != nil {
			return err
		}
		if _, err := q.db.ExecContext(ctx, `INSERT INTO areas (id, position, data) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET data = excluded.data`, a.ID, base+i+1, string(data)); err != nil {
			return mapErr(err)
		}
	}
	_ = q.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(position), 0) FROM products`).Scan(&base)
	for i, p := range f.Products {
		data, err := json.Marshal(p)
		if err != nil {
			return err
		}
		if _, err := q.db.ExecContext(ctx, `INSERT INTO products (id, area_id, position, data) VALUES ($1, $2, $3, $4)
			ON CONFLICT (id) DO UPDATE SET area_id = excluded.area_id, data = excluded.data`, p.ID, p.AreaID, base+i+1, string(data)); err != nil {
			return mapErr(err)
		}
	}
	_, err := q.db.ExecContext(ctx, `INSERT INTO catalog_state (id, version, updated_at) VALUES (1, 1, $1)
		ON CONFLICT (id) DO UPDATE SET version = catalog_state.version + 1, updated_at = excluded.updated_at`, now(at))
	return mapErr(err)
}

// GrantProduct lets an account see and order a restricted product.
func (q Q) GrantProduct(ctx context.Context, accountID, productID string, at time.Time) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO account_product_grants (account_id, product_id, granted_at) VALUES ($1, $2, $3)
		ON CONFLICT (account_id, product_id) DO NOTHING`, accountID, productID, now(at))
	return mapErr(err)
}

// RevokeProduct removes a grant.
func (q Q) RevokeProduct(ctx context.Context, accountID, productID string) (int64, error) {
	res, err := q.db.ExecContext(ctx, `DELETE FROM account_product_grants WHERE account_id = $1 AND product_id = $2`, accountID, productID)
	if err != nil {
		return 0, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// Grants returns the restricted products an account may order.
func (q Q) Grants(ctx context.Context, accountID string) (map[string]bool, error) {
	return idSet(ctx, q, `SELECT product_id FROM account_product_grants WHERE account_id = $1`, accountID)
}
