package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
)

// InsertCustomer writes a customer (customers are never updated).
func (q Q) InsertCustomer(ctx context.Context, c invoicing.Customer) error {
	lines, err := json.Marshal(c.AddressLines)
	if err != nil {
		return apperr.Wrap("store.InsertCustomer", err)
	}
	ei, err := jsonIfSet("store.InsertCustomer", c.Electronic != nil, c.Electronic)
	if err != nil {
		return err
	}
	_, err = q.db.ExecContext(ctx, `INSERT INTO customers (id, account_id, environment, address_lines, electronic_invoicing, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, c.ID, c.AccountID, string(c.Environment), string(lines), ei, now(c.CreatedAt))
	return mapErr(err)
}

// Customer returns a customer of one account and environment; another
// tenant's customer is apperr.NotFound.
func (q Q) Customer(ctx context.Context, accountID string, env account.Environment, id string) (invoicing.Customer, error) {
	c, err := scanCustomer(q.db.QueryRowContext(ctx, `SELECT `+customerCols+`
		FROM customers WHERE id = $1 AND account_id = $2 AND environment = $3`, id, accountID, string(env)).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return c, apperr.NotFoundf("store.Customer", CodeCustomerNotFound)
	}
	return c, err
}

const customerCols = `id, account_id, environment, address_lines, electronic_invoicing, created_at, erased_at, restricted_until`

// scanCustomer reads a row of customerCols.
func scanCustomer(scan scanner) (c invoicing.Customer, err error) {
	var e, lines string
	var ei sql.NullString
	var erased, restricted sql.NullTime
	if err = scan(&c.ID, &c.AccountID, &e, &lines, &ei, &c.CreatedAt, &erased, &restricted); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return c, err
		}
		return c, mapErr(err)
	}
	c.Environment = account.Environment(e)
	c.CreatedAt = c.CreatedAt.UTC()
	c.ErasedAt, c.RestrictedUntil = utcPtr(erased), utcPtr(restricted)
	if err := json.Unmarshal([]byte(lines), &c.AddressLines); err != nil {
		return c, apperr.Wrap("store.Customer", err)
	}
	if ei.Valid {
		c.Electronic = &invoicing.Electronic{}
		if err := json.Unmarshal([]byte(ei.String), c.Electronic); err != nil {
			return c, apperr.Wrap("store.Customer", err)
		}
	}
	return c, nil
}

// Customers is a page of an account's customers, newest first (one range
// of customers_list).
func (q Q) Customers(ctx context.Context, f invoicing.CustomerFilter) (list.Page[invoicing.Customer], error) {
	return listPage(ctx, q, customersSQL(f), f.Limit, scanCustomer)
}

func customersSQL(f invoicing.CustomerFilter) pageStmt {
	return newListWhere(f.Query, "").pageSQL(`SELECT `+customerCols+` FROM customers`, "", f.Query)
}

// InsertCollection writes a billable collection.
func (q Q) InsertCollection(ctx context.Context, id, accountID string, env account.Environment, at time.Time) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO billable_collections (id, account_id, environment, created_at) VALUES ($1, $2, $3, $4)`,
		id, accountID, string(env), now(at))
	return mapErr(err)
}

// CollectionExists reports apperr.NotFound unless the collection belongs to the tenant.
func (q Q) CollectionExists(ctx context.Context, accountID string, env account.Environment, id string) error {
	var n int
	err := q.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM billable_collections WHERE id = $1 AND account_id = $2 AND environment = $3`,
		id, accountID, string(env)).Scan(&n)
	if err != nil {
		return mapErr(err)
	}
	if n == 0 {
		return apperr.E("store.Collection", apperr.NotFound, CodeBillableCollectionNotFound, "billable collection not found")
	}
	return nil
}

const itemCols = `b.id, b.account_id, b.environment, b.product_id, b.description, b.amount_cents, b.currency, b.vat_rate_bp,
	b.coupon_id, b.subscription_id, b.cycle_id, b.ordered_at, b.test_clock_id, a.customer_id, a.split, a.collection_id`

// BillableItem returns an item of one tenant with its assignment.
func (q Q) BillableItem(ctx context.Context, accountID string, env account.Environment, id string) (invoicing.BillableItem, error) {
	items, err := q.itemsWhere(ctx, `b.id = $1 AND b.account_id = $2 AND b.environment = $3`, id, accountID, string(env))
	if err != nil {
		return invoicing.BillableItem{}, err
	}
	if len(items) == 0 {
		return invoicing.BillableItem{}, apperr.E("store.BillableItem", apperr.NotFound, CodeBillableItemNotFound, "billable item not found")
	}
	return items[0], nil
}

// CollectionItems returns the items of a collection, oldest first.
func (q Q) CollectionItems(ctx context.Context, collectionID string) ([]invoicing.BillableItem, error) {
	return q.itemsWhere(ctx, `a.collection_id = $1 ORDER BY b.ordered_at, b.id`, collectionID)
}

func (q Q) itemsWhere(ctx context.Context, where string, args ...any) ([]invoicing.BillableItem, error) {
	return collect(ctx, q, `SELECT `+itemCols+` FROM billable_items b
		LEFT JOIN billable_item_assignments a ON a.billable_item_id = b.id WHERE `+where, args, scanItem)
}

// scanItem reads a row of itemCols.
func scanItem(scan scanner) (b invoicing.BillableItem, err error) {
	var env string
	var coupon, sub, cycle, clk, cust, split, coll sql.NullString
	if err = scan(&b.ID, &b.AccountID, &env, &b.ProductID, &b.Description, &b.AmountCents, &b.Currency, &b.VATRateBP,
		&coupon, &sub, &cycle, &b.OrderedAt, &clk, &cust, &split, &coll); err != nil {
		return b, err
	}
	b.TestClockID = nullStr(clk)
	b.Environment = account.Environment(env)
	b.OrderedAt = b.OrderedAt.UTC()
	b.CouponID, b.SubscriptionID, b.CycleID = nullStr(coupon), nullStr(sub), nullStr(cycle)
	b.CustomerID, b.CollectionID = nullStr(cust), nullStr(coll)
	if split.Valid {
		if err := json.Unmarshal([]byte(split.String), &b.Split); err != nil {
			return b, apperr.Wrap("store.BillableItem", err)
		}
	}
	return b, nil
}

// BillableItems is a page of an account's billable items, newest first by
// ordered_at: one range of billable_items_list, each row's assignment and
// claims by primary key; a customer or collection filter may instead read
// billable_item_assignments_customer or _collection and sort what it
// finds (docs/lists.md).
func (q Q) BillableItems(ctx context.Context, f invoicing.BillableItemFilter) (list.Page[invoicing.BillableItem], error) {
	return listPage(ctx, q, billableItemsSQL(f), f.Limit, scanItem)
}

func billableItemsSQL(f invoicing.BillableItemFilter) pageStmt {
	w := newListWhere(f.Query, "b.")
	w.at = "ordered_at"
	if f.CustomerID != nil {
		w.add("a.customer_id = $%d", *f.CustomerID)
	}
	if f.CollectionID != nil {
		w.add("a.collection_id = $%d", *f.CollectionID)
	}
	if f.Invoiced != nil {
		cond := "EXISTS (SELECT 1 FROM invoice_claims c WHERE c.billable_item_id = b.id)"
		if !*f.Invoiced {
			cond = "NOT " + cond
		}
		w.conds = append(w.conds, cond)
	}
	return w.pageSQL(`SELECT `+itemCols+` FROM billable_items b LEFT JOIN billable_item_assignments a ON a.billable_item_id = b.id`, "b.", f.Query)
}

// Collections is a page of an account's billable collections, newest
// first (one range of billable_collections_list).
func (q Q) Collections(ctx context.Context, f invoicing.CollectionFilter) (list.Page[invoicing.Collection], error) {
	return listPage(ctx, q, collectionsSQL(f), f.Limit, func(scan scanner) (c invoicing.Collection, err error) {
		var env string
		err = scan(&c.ID, &c.AccountID, &env, &c.CreatedAt)
		c.Environment, c.CreatedAt = account.Environment(env), c.CreatedAt.UTC()
		return c, err
	})
}

func collectionsSQL(f invoicing.CollectionFilter) pageStmt {
	return newListWhere(f.Query, "").pageSQL(`SELECT id, account_id, environment, created_at FROM billable_collections`, "", f.Query)
}

// jsonIfSet is v as JSON text for a nullable column, or NULL (nil) unless set.
func jsonIfSet(op string, set bool, v any) (any, error) {
	if !set {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, apperr.Wrap(op, err)
	}
	return string(b), nil
}

// SetAssignment writes an item's assignment (insert or replace).
func (q Q) SetAssignment(ctx context.Context, itemID string, a invoicing.Assignment, at time.Time) error {
	split, err := jsonIfSet("store.SetAssignment", a.Split != nil, a.Split)
	if err != nil {
		return err
	}
	_, err = q.db.ExecContext(ctx, `INSERT INTO billable_item_assignments (billable_item_id, customer_id, split, collection_id, updated_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (billable_item_id) DO UPDATE SET customer_id = excluded.customer_id,
		split = excluded.split, collection_id = excluded.collection_id, updated_at = excluded.updated_at`,
		itemID, a.CustomerID, split, a.CollectionID, now(at))
	return mapErr(err)
}

// ItemClaims returns the customer keys an item is currently invoiced for
// ("" = invoiced without customer).
func (q Q) ItemClaims(ctx context.Context, itemID string) (map[string]string, error) {
	return keyed[string](ctx, q, `SELECT customer_key, invoice_id FROM invoice_claims WHERE billable_item_id = $1`, itemID)
}

// LockItem takes the item's row lock on PostgreSQL (a no-op update) so that
// concurrent changes of one item serialize; SQLite's writer is exclusive.
func (q Q) LockItem(ctx context.Context, itemID string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE billable_items SET id = id WHERE id = $1`, itemID)
	return mapErr(err)
}
