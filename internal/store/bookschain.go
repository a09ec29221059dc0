package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/ticketing"
)

// The books' hash chain and its signed checkpoints (migration 00036,
// docs/books.md "The chain"). Entries and checkpoints are refused UPDATE
// and DELETE by triggers like the records they chain; the heads are
// working state.

// The statements of every append, prepared on SQLite's writer
// (hotStatements); PostgreSQL runs appendChainPostgres.
const (
	lockChainHeadSQL = `INSERT INTO books_chain_heads (account_id, environment, size, head_hash) VALUES ($1, $2, 0, '')
		ON CONFLICT (account_id, environment) DO UPDATE SET size = books_chain_heads.size RETURNING size, head_hash`
	setChainHeadSQL     = `UPDATE books_chain_heads SET size = $1, head_hash = $2 WHERE account_id = $3 AND environment = $4`
	insertChainEntrySQL = `INSERT INTO books_chain (account_id, environment, seq, kind, record_id, record_hash, commitment,
		prev_hash, entry_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`
	insertSaltSQL = `INSERT INTO books_salts (kind, record_id, salt) VALUES ($1, $2, $3)`
	// appendChainPostgres is the three in one statement ($11: the salt,
	// '' for none).
	appendChainPostgres = `WITH e AS (` + insertChainEntrySQL + ` RETURNING account_id, environment, seq, entry_hash),
		s AS (INSERT INTO books_salts (kind, record_id, salt) SELECT $4, $5, $11 WHERE $11 <> '')
		UPDATE books_chain_heads h SET size = e.seq, head_hash = e.entry_hash FROM e
		WHERE h.account_id = e.account_id AND h.environment = e.environment`
)

// LockChainHead returns the head of an account's chain in environment env
// (size 0 for a new chain) and holds its row until the transaction ends:
// on PostgreSQL the upsert takes the row's lock, so a concurrent append to
// the same chain waits and then reads the head this one leaves (as
// NextNumber); SQLite has one writer.
func (q Q) LockChainHead(ctx context.Context, accountID string, env account.Environment) (invoicing.ChainHead, error) {
	h := invoicing.ChainHead{AccountID: accountID, Environment: env}
	err := q.prepared(ctx, lockChainHeadSQL).QueryRowContext(ctx, accountID, string(env)).Scan(&h.Size, &h.HeadHash)
	return h, mapErr(err)
}

// InsertChainEntry appends an entry, with the salt of its record's
// commitment when salt is not empty, and moves its chain's head to it
// (after LockChainHead in the same transaction). On PostgreSQL that is one
// statement (one round trip per entry); on SQLite, in process, the
// prepared statements one after the other.
func (q Q) InsertChainEntry(ctx context.Context, e invoicing.ChainEntry, salt string) error {
	args := []any{e.AccountID, string(e.Environment), e.Seq, e.Kind, e.RecordID, e.RecordHash, e.Commitment, e.PrevHash, e.EntryHash,
		now(e.CreatedAt), salt}
	if q.engine == Postgres {
		_, err := q.db.ExecContext(ctx, appendChainPostgres, args...)
		return mapErr(err)
	}
	if _, err := q.execPrepared(ctx, insertChainEntrySQL, args[:10]...); err != nil {
		return mapErr(err)
	}
	if _, err := q.execPrepared(ctx, setChainHeadSQL, e.Seq, e.EntryHash, e.AccountID, string(e.Environment)); err != nil {
		return mapErr(err)
	}
	if salt == "" {
		return nil
	}
	_, err := q.execPrepared(ctx, insertSaltSQL, e.Kind, e.RecordID, salt)
	return mapErr(err)
}

// ChainHeads are the heads of every chain, and a chain that has entries
// but no head row with size -1.
func (q Q) ChainHeads(ctx context.Context) ([]invoicing.ChainHead, error) {
	return collect(ctx, q, `SELECT account_id, environment, size, head_hash FROM books_chain_heads
		UNION ALL SELECT DISTINCT c.account_id, c.environment, -1, '' FROM books_chain c WHERE NOT EXISTS (
			SELECT 1 FROM books_chain_heads h WHERE h.account_id = c.account_id AND h.environment = c.environment)
		ORDER BY 1, 2`, nil,
		func(scan scanner) (h invoicing.ChainHead, err error) {
			var env string
			err = scan(&h.AccountID, &env, &h.Size, &h.HeadHash)
			h.Environment = account.Environment(env)
			return h, err
		})
}

// ChainEntries are up to limit entries of a chain after position
// afterSeq, in position order.
func (q Q) ChainEntries(ctx context.Context, accountID string, env account.Environment, afterSeq int64, limit int) ([]invoicing.ChainEntry, error) {
	return collect(ctx, q, `SELECT seq, kind, record_id, record_hash, commitment, prev_hash, entry_hash, created_at FROM books_chain
		WHERE account_id = $1 AND environment = $2 AND seq > $3 ORDER BY seq LIMIT $4`, []any{accountID, string(env), afterSeq, limit},
		func(scan scanner) (e invoicing.ChainEntry, err error) {
			e.AccountID, e.Environment = accountID, env
			err = scan(&e.Seq, &e.Kind, &e.RecordID, &e.RecordHash, &e.Commitment, &e.PrevHash, &e.EntryHash, &e.CreatedAt)
			e.CreatedAt = e.CreatedAt.UTC()
			return e, err
		})
}

// ChainRecords reads the records the entries name (those still there) and
// the salts of their commitments.
func (q Q) ChainRecords(ctx context.Context, entries []invoicing.ChainEntry) (invoicing.ChainRecords, error) {
	rs := invoicing.ChainRecords{Invoices: map[string]invoicing.Invoice{}, Files: map[string]invoicing.StoredFile{},
		Audit: map[string]invoicing.AuditEntry{}, Receipts: map[string]ticketing.CancellationReceipt{}, Salts: map[invoicing.ChainRef]string{}}
	ids := map[string][]string{}
	var all []string
	for _, e := range entries {
		id := e.RecordID
		if e.Kind == "file" {
			id, _, _ = strings.Cut(id, "/")
		}
		ids[e.Kind] = append(ids[e.Kind], id)
		all = append(all, e.RecordID)
	}
	read := func(kind, query string, row func(scan scanner) error) error {
		if len(ids[kind]) == 0 {
			return nil
		}
		in, args := idList(nil, ids[kind])
		return q.eachRow(ctx, fmt.Sprintf(query, in), args, row)
	}
	err := read("invoice", `SELECT `+invoiceCols+` FROM invoices WHERE id IN (%s)`, func(scan scanner) error {
		inv, err := scanInvoice(scan)
		rs.Invoices[inv.ID] = inv
		return err
	})
	if err == nil {
		err = read("file", `SELECT f.invoice_id, (SELECT i.number FROM invoices i WHERE i.id = f.invoice_id), f.format, f.sha256, f.body
			FROM invoice_files f WHERE f.invoice_id IN (%s)`, func(scan scanner) error {
			var f invoicing.StoredFile
			err := scan(&f.InvoiceID, &f.Number, &f.Format, &f.SHA256, &f.Body)
			rs.Files[f.InvoiceID+"/"+f.Format] = f
			return err
		})
	}
	if err == nil {
		err = read("audit", `SELECT `+auditCols+` FROM audit_log WHERE id IN (%s)`, func(scan scanner) error {
			e, err := scanAudit(scan)
			rs.Audit[e.ID] = e
			return err
		})
	}
	if err == nil {
		err = read("receipt", `SELECT `+receiptCols+` FROM cancellation_receipts WHERE id IN (%s)`, func(scan scanner) error {
			r, err := scanReceipt(scan)
			rs.Receipts[r.ID] = r
			return err
		})
	}
	if err == nil && len(all) > 0 {
		in, args := idList(nil, all)
		err = q.eachRow(ctx, `SELECT kind, record_id, salt FROM books_salts WHERE record_id IN (`+in+`)`, args, func(scan scanner) error {
			var ref invoicing.ChainRef
			var salt string
			err := scan(&ref.Kind, &ref.RecordID, &salt)
			rs.Salts[ref] = salt
			return err
		})
	}
	return rs, err
}

// UnchainedRecords are up to limit records of the books that have no
// chain entry and are not listed as written before the chain (migration
// 00036), and how many are listed so.
func (q Q) UnchainedRecords(ctx context.Context, limit int) ([]invoicing.ChainRef, int, error) {
	var before int
	if err := q.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM books_unchained`).Scan(&before); err != nil {
		return nil, 0, mapErr(err)
	}
	missing := func(kind, id string) string {
		return fmt.Sprintf(`NOT EXISTS (SELECT 1 FROM books_chain c WHERE c.kind = '%[1]s' AND c.record_id = %[2]s)
			AND NOT EXISTS (SELECT 1 FROM books_unchained u WHERE u.kind = '%[1]s' AND u.record_id = %[2]s)`, kind, id)
	}
	refs, err := collect(ctx, q, `SELECT 'invoice', id FROM invoices WHERE `+missing("invoice", "invoices.id")+`
		UNION ALL SELECT 'file', invoice_id || '/' || format FROM invoice_files WHERE `+missing("file", "invoice_files.invoice_id || '/' || invoice_files.format")+`
		UNION ALL SELECT 'audit', id FROM audit_log WHERE `+missing("audit", "audit_log.id")+`
		UNION ALL SELECT 'receipt', id FROM cancellation_receipts WHERE `+missing("receipt", "cancellation_receipts.id")+`
		ORDER BY 1, 2 LIMIT $1`, []any{limit},
		func(scan scanner) (r invoicing.ChainRef, err error) { return r, scan(&r.Kind, &r.RecordID) })
	return refs, before, err
}

// NextSignatureCounter takes the next value of a books key's signature
// counter (1 for its first signature) in the caller's transaction.
func (q Q) NextSignatureCounter(ctx context.Context, keyID string) (int64, error) {
	return q.nextCounter(ctx, `INSERT INTO books_signature_counters (key_id, last_value) VALUES ($1, 1)
		ON CONFLICT (key_id) DO UPDATE SET last_value = books_signature_counters.last_value + 1 RETURNING last_value`, keyID)
}

// InsertCheckpoint stores a signed checkpoint; a second one of the same
// chain and size, or of the same key and counter, is apperr.Conflict. It
// moves the signers' newest signing time (LockCheckpointSigning) to it.
func (q Q) InsertCheckpoint(ctx context.Context, c invoicing.Checkpoint) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO books_checkpoints (account_id, environment, tree_size, head_hash, signed_at, counter,
		key_id, signature, tree_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, c.AccountID, string(c.Environment), c.TreeSize, c.HeadHash,
		now(c.SignedAt), c.Counter, c.KeyID, c.Signature, c.TreeHash)
	if err == nil {
		_, err = q.db.ExecContext(ctx, `UPDATE books_signing SET signed_at = $1 WHERE id = 1`, now(c.SignedAt))
	}
	return mapErr(err)
}

// LockCheckpointSigning takes the signers' lock (the one row of
// books_signing) until the transaction ends, so that two instances sign
// one after the other: on PostgreSQL the upsert holds the row's lock (a
// second signer waits, then reads what the first committed), SQLite has
// one writer. It returns the newest signing time (the zero time before
// the first checkpoint).
func (q Q) LockCheckpointSigning(ctx context.Context) (time.Time, error) {
	var at time.Time
	err := q.db.QueryRowContext(ctx, `INSERT INTO books_signing (id, signed_at) VALUES (1, $1)
		ON CONFLICT (id) DO UPDATE SET id = books_signing.id RETURNING signed_at`, now(time.Unix(0, 0))).Scan(&at)
	if at.Equal(time.Unix(0, 0)) {
		at = time.Time{}
	}
	return at.UTC(), mapErr(err)
}

// RegisterBooksKey records the public key (base64) of books key keyID,
// once (the first stays).
func (q Q) RegisterBooksKey(ctx context.Context, keyID, public string) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO books_keys (key_id, public_key) VALUES ($1, $2) ON CONFLICT (key_id) DO NOTHING`,
		keyID, public)
	return mapErr(err)
}

// BooksKeys are the public keys (base64) of the books keys named, by key
// id; an unknown id is left out.
func (q Q) BooksKeys(ctx context.Context, keyIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(keyIDs) == 0 {
		return out, nil
	}
	in, args := idList(nil, keyIDs)
	err := q.eachRow(ctx, `SELECT key_id, public_key FROM books_keys WHERE key_id IN (`+in+`) ORDER BY key_id`, args, func(scan scanner) error {
		var id, pub string
		err := scan(&id, &pub)
		out[id] = pub
		return err
	})
	return out, err
}

const checkpointCols = `account_id, environment, tree_size, head_hash, signed_at, counter, key_id, signature, tree_hash`

func scanCheckpoint(scan scanner) (c invoicing.Checkpoint, err error) {
	var env string
	err = scan(&c.AccountID, &env, &c.TreeSize, &c.HeadHash, &c.SignedAt, &c.Counter, &c.KeyID, &c.Signature, &c.TreeHash)
	c.Environment, c.SignedAt = account.Environment(env), c.SignedAt.UTC()
	return c, err
}

// Checkpoints are the stored checkpoints in the order they were signed
// (per key by counter), and the last counter value of each key.
func (q Q) Checkpoints(ctx context.Context) ([]invoicing.Checkpoint, map[string]int64, error) {
	cps, err := collect(ctx, q, `SELECT `+checkpointCols+` FROM books_checkpoints ORDER BY key_id, counter`, nil, scanCheckpoint)
	if err != nil {
		return nil, nil, err
	}
	last := map[string]int64{}
	err = q.eachRow(ctx, `SELECT key_id, last_value FROM books_signature_counters`, nil, func(scan scanner) error {
		var k string
		var n int64
		err := scan(&k, &n)
		last[k] = n
		return err
	})
	return cps, last, err
}

// ChainCheckpoint is the checkpoint of one chain signed by key keyID
// with counter; false when that chain has none (another chain's looks
// the same as none).
func (q Q) ChainCheckpoint(ctx context.Context, accountID string, env account.Environment, keyID string, counter int64) (invoicing.Checkpoint, bool, error) {
	c, err := scanCheckpoint(q.db.QueryRowContext(ctx, `SELECT `+checkpointCols+` FROM books_checkpoints
		WHERE key_id = $1 AND counter = $2 AND account_id = $3 AND environment = $4`, keyID, counter, accountID, string(env)).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	return c, err == nil, mapErr(err)
}

// ChainCheckpoints is a page of one chain's checkpoints, newest (largest)
// first: one range of the unique index (account_id, environment,
// tree_size).
func (q Q) ChainCheckpoints(ctx context.Context, f invoicing.CheckpointFilter) (list.Page[invoicing.Checkpoint], error) {
	w := newListWhere(f.Query, "")
	if f.CreatedGTE != nil {
		w.add("signed_at >= $%d", now(*f.CreatedGTE))
	}
	if f.CreatedLT != nil {
		w.add("signed_at < $%d", now(*f.CreatedLT))
	}
	order := "DESC"
	switch {
	case f.BeforeSize > 0:
		order = "ASC"
		w.add("tree_size > $%d", f.BeforeSize)
	case f.AfterSize > 0:
		w.add("tree_size < $%d", f.AfterSize)
	}
	args := append(w.args, f.Limit+1)
	return listPage(ctx, q, pageStmt{query: fmt.Sprintf(`SELECT %s FROM books_checkpoints WHERE %s ORDER BY tree_size %s LIMIT $%d`,
		checkpointCols, strings.Join(w.conds, " AND "), order, len(args)), args: args, ascending: order == "ASC"}, f.Limit, scanCheckpoint)
}

// ChainEntryOf is the entry of one chain that names record (kind,
// recordID); NotFound (CodeChainEntryNotFound) when that chain has none.
func (q Q) ChainEntryOf(ctx context.Context, accountID string, env account.Environment, kind, recordID string) (invoicing.ChainEntry, error) {
	e := invoicing.ChainEntry{AccountID: accountID, Environment: env}
	err := q.db.QueryRowContext(ctx, `SELECT seq, kind, record_id, record_hash, commitment, prev_hash, entry_hash, created_at FROM books_chain
		WHERE kind = $1 AND record_id = $2 AND account_id = $3 AND environment = $4`, kind, recordID, accountID, string(env)).
		Scan(&e.Seq, &e.Kind, &e.RecordID, &e.RecordHash, &e.Commitment, &e.PrevHash, &e.EntryHash, &e.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return e, apperr.NotFoundf("store.ChainEntryOf", CodeChainEntryNotFound)
	}
	e.CreatedAt = e.CreatedAt.UTC()
	return e, mapErr(err)
}

// idList appends ids to args and returns their placeholders for an
// IN (…) list ("$1, $2, …" after no arguments, "$3, $4, …" after two) and
// the arguments.
func idList(args []any, ids []string) (string, []any) {
	ph := make([]string, len(ids))
	for i, id := range ids {
		args = append(args, id)
		ph[i] = fmt.Sprintf("$%d", len(args))
	}
	return strings.Join(ph, ", "), args
}
