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
	n, err := q.affected(ctx, `INSERT INTO service_secrets (name, data, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING`, name, string(data), now(at))
	return n == 1, mapErr(err)
}

// DeleteServiceSecret removes the secret called name (a pruned or revoked
// inspection key); deleted is false when there was none.
func (q Q) DeleteServiceSecret(ctx context.Context, name string) (deleted bool, err error) {
	n, err := affected(q.db.ExecContext(ctx, `DELETE FROM service_secrets WHERE name = $1`, name))
	return n == 1, err
}

// ServiceSecrets returns the secrets whose name starts with prefix.
func (q Q) ServiceSecrets(ctx context.Context, prefix string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := q.eachRow(ctx, `SELECT name, data FROM service_secrets ORDER BY name`, nil, func(scan scanner) error {
		var name, data string
		if err := scan(&name, &data); err != nil {
			return err
		}
		if strings.HasPrefix(name, prefix) {
			out[name] = []byte(data)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
