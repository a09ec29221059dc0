package store

import (
	"context"
	"embed"
	"fmt"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations
var migrationsFS embed.FS

// Migrate applies every pending migration and returns how many it applied.
// On PostgreSQL a session advisory lock serialises concurrent migrators, so
// several instances starting at once apply each migration exactly once.
func (s *Store) Migrate(ctx context.Context) (int, error) {
	dialect := goose.DialectSQLite3
	var opts []goose.ProviderOption
	if s.engine == Postgres {
		dialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return 0, fmt.Errorf("store: migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	sub, err := Migrations(s.engine)
	if err != nil {
		return 0, err
	}
	p, err := goose.NewProvider(dialect, s.w, sub, opts...)
	if err != nil {
		return 0, fmt.Errorf("store: migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return len(res), fmt.Errorf("store: migrate: %w", err)
	}
	return len(res), nil
}

// SchemaVersion returns the newest applied migration version.
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.w.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&v)
	return v, err
}
