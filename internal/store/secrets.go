package store

import (
	"context"
	"strings"
	"time"
)

// InsertServiceSecret stores data under name unless the name exists already
// (another instance generated it first). inserted reports whether this call
// wrote the row.
func (q Q) InsertServiceSecret(ctx context.Context, name string, data []byte, at time.Time) (inserted bool, err error) {
	res, err := q.db.ExecContext(ctx, `INSERT INTO service_secrets (name, data, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING`, name, string(data), now(at))
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, mapErr(err)
}

// ServiceSecrets returns the secrets whose name starts with prefix.
func (q Q) ServiceSecrets(ctx context.Context, prefix string) (map[string][]byte, error) {
	rows, err := q.db.QueryContext(ctx, `SELECT name, data FROM service_secrets ORDER BY name`)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var name, data string
		if err := rows.Scan(&name, &data); err != nil {
			return nil, mapErr(err)
		}
		if strings.HasPrefix(name, prefix) {
			out[name] = []byte(data)
		}
	}
	return out, mapErr(rows.Err())
}

// EnsureSecret returns the secret called name, storing value first when
// there is none yet. Concurrent callers on several instances all get the
// value that was stored first.
func (q Q) EnsureSecret(ctx context.Context, name, value string, at time.Time) (string, error) {
	if _, err := q.InsertServiceSecret(ctx, name, []byte(value), at); err != nil {
		return "", err
	}
	var v string
	err := q.db.QueryRowContext(ctx, `SELECT data FROM service_secrets WHERE name = $1`, name).Scan(&v)
	return v, mapErr(err)
}
