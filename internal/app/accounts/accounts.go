// Package accounts is the accounts and API keys capability
// (docs/operations.md): creating accounts and keys, resolving a presented
// key to its principal (with a per-instance cache), revoking keys by
// prefix (the command) or by id (the dashboard), and the keys' last use.
// It reaches the database only through Queries.
package accounts

import (
	"context"
	"github.com/farebox/farebox/internal/idempotency"
	"strings"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ident"
)

// Queries are the store methods of accounts and keys (store.Q implements
// them; the wiring passes store.NewView[Queries]).
type Queries interface {
	PrincipalByKeyHash(ctx context.Context, hash string) (account.Principal, error)
	CreateAccount(ctx context.Context, a account.Account) error
	Account(ctx context.Context, id string) (account.Account, error)
	CreateKey(ctx context.Context, k account.Key, hash string) error
	Keys(ctx context.Context, accountID string) ([]account.Key, error)
	KeysOfEnvironment(ctx context.Context, accountID string, env account.Environment) ([]account.Key, error)
	TouchKey(ctx context.Context, id string, at time.Time) error
	RevokeAccountKey(ctx context.Context, accountID string, env account.Environment, id string, at time.Time) error
}

// DB is the database as accounts see it (store.View).
type DB = kit.DB[Queries]

// Service holds the account and key use cases.
type Service struct {
	kit.Base[DB]

	authTTL time.Duration
	authMu  sync.RWMutex
	auth    map[account.KeyDigest]authEntry // by SHA-256 of the key (no hex per request)
	// keyUsed is when this instance last wrote a key's last_used_at
	// (touchKey).
	keyUsedMu sync.Mutex
	keyUsed   map[string]time.Time
}

// New returns the accounts of db; c is the service clock (nil: the system
// clock), ids the id prefix. authTTL caches resolved keys per instance: a
// revoked key keeps working on an instance for at most this long (0
// disables the cache).
func New(db DB, c clock.Clock, ids ident.Prefix, authTTL time.Duration) *Service {
	return &Service{Base: kit.NewBase(db, c, ids), authTTL: authTTL, auth: map[account.KeyDigest]authEntry{}}
}

type authEntry struct {
	p       account.Principal
	expires time.Time
}

// Authenticate resolves a presented API key. Malformed keys are rejected
// without a database query.
func (s *Service) Authenticate(ctx context.Context, key string) (account.Principal, error) {
	p, err := s.resolveKey(ctx, key)
	if err == nil {
		s.touchKey(ctx, p.KeyID)
	}
	return p, err
}

func (s *Service) resolveKey(ctx context.Context, key string) (account.Principal, error) {
	const op = "app.Authenticate"
	if _, ok := account.ParseKey(key); !ok {
		return account.Principal{}, apperr.E(op, apperr.Unauthenticated, CodeInvalidAPIKey, "API key malformed, unknown or revoked")
	}
	sum := account.Digest(key)
	now := s.Clock.Now()
	if s.authTTL > 0 {
		s.authMu.RLock()
		e, ok := s.auth[sum]
		s.authMu.RUnlock()
		if ok && now.Before(e.expires) {
			return e.p, nil
		}
	}
	p, err := s.DB.Read().PrincipalByKeyHash(ctx, sum.String())
	if err != nil {
		if apperr.KindOf(err) == apperr.Unauthenticated {
			return p, apperr.E(op, apperr.Unauthenticated, CodeInvalidAPIKey, "API key malformed, unknown or revoked")
		}
		return p, err
	}
	if s.authTTL > 0 {
		s.authMu.Lock()
		if len(s.auth) > 100_000 {
			s.auth = map[account.KeyDigest]authEntry{}
		}
		s.auth[sum] = authEntry{p: p, expires: now.Add(s.authTTL)}
		s.authMu.Unlock()
	}
	return p, nil
}

// CreatedKey is a new key, shown once.
type CreatedKey struct {
	AccountID string
	Secret    string
	Prefix    string
}

// CreateAccount creates an account named name with one key for env.
func (s *Service) CreateAccount(ctx context.Context, claim idempotency.Claim, name string, env account.Environment) (CreatedKey, error) {
	if name == "" {
		return CreatedKey{}, apperr.E("app.CreateAccount", apperr.Invalid, CodeNameRequired, "an account needs a name")
	}
	acc := account.Account{ID: s.IDs.New("account"), Name: name, CreatedAt: s.Clock.Now()}
	var out CreatedKey
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		if err := q.CreateAccount(ctx, acc); err != nil {
			return err
		}
		var err error
		out, err = s.addKey(ctx, q, acc.ID, env)
		return err
	})
	return out, err
}

// CreateKey adds a key for env to an existing account.
func (s *Service) CreateKey(ctx context.Context, claim idempotency.Claim, accountID string, env account.Environment) (CreatedKey, error) {
	var out CreatedKey
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		if _, err := q.Account(ctx, accountID); err != nil {
			return err
		}
		var err error
		out, err = s.addKey(ctx, q, accountID, env)
		return err
	})
	return out, err
}

func (s *Service) addKey(ctx context.Context, q Queries, accountID string, env account.Environment) (CreatedKey, error) {
	secret, prefix, hash := account.NewKey(env)
	k := account.Key{ID: s.IDs.New("key"), AccountID: accountID, Prefix: prefix, Environment: env, CreatedAt: s.Clock.Now()}
	if err := q.CreateKey(ctx, k, hash); err != nil {
		return CreatedKey{}, err
	}
	return CreatedKey{AccountID: accountID, Secret: secret, Prefix: prefix}, nil
}

// RevokeKeys revokes the active keys whose visible prefix starts with
// prefix, of any one account (RevokeKeysOf with no account).
func (s *Service) RevokeKeys(ctx context.Context, claim idempotency.Claim, prefix string) (int64, error) {
	return s.RevokeKeysOf(ctx, claim, prefix, "")
}

// KeyMatch is an active key a revocation by prefix names.
type KeyMatch struct {
	AccountID, AccountName string
	KeyID, Prefix          string
	Environment            account.Environment
}

// KeysWithPrefix lists the active keys whose visible prefix starts with
// prefix, of accountID ("" for every account): what RevokeKeysOf would
// revoke, for the operator to read first. The prefix must have at least
// account.MinKeyPrefixChars characters after fbx_live_ or fbx_test_.
func (s *Service) KeysWithPrefix(ctx context.Context, prefix, accountID string) ([]KeyMatch, error) {
	return keysWithPrefix(ctx, s.DB.Read(), prefix, accountID)
}

func keysWithPrefix(ctx context.Context, q Queries, prefix, accountID string) ([]KeyMatch, error) {
	if !account.IsKeyPrefix(prefix) {
		return nil, apperr.E("app.RevokeKeys", apperr.Invalid, CodeInvalidKeyPrefix,
			"a key prefix starts with fbx_live_ or fbx_test_ and has at least 8 more characters (the prefix `farebox accounts list` shows)")
	}
	keys, err := q.Keys(ctx, accountID)
	if err != nil {
		return nil, err
	}
	var out []KeyMatch
	names := map[string]string{}
	for _, k := range keys {
		if k.RevokedAt != nil || !strings.HasPrefix(k.Prefix, prefix) {
			continue
		}
		if _, ok := names[k.AccountID]; !ok {
			acc, err := q.Account(ctx, k.AccountID)
			if err != nil {
				return nil, err
			}
			names[k.AccountID] = acc.Name
		}
		out = append(out, KeyMatch{AccountID: k.AccountID, AccountName: names[k.AccountID], KeyID: k.ID, Prefix: k.Prefix, Environment: k.Environment})
	}
	if len(out) == 0 {
		return nil, apperr.E("app.RevokeKeys", apperr.NotFound, CodeKeyNotFound, "no active key has this prefix")
	}
	return out, nil
}

// RevokeKeysOf revokes the active keys whose visible prefix starts with
// prefix, of accountID ("" for any account). A prefix matching keys of more
// than one account revokes nothing (Conflict): one prefix is meant to name
// one partner's key, so the caller names the account.
func (s *Service) RevokeKeysOf(ctx context.Context, claim idempotency.Claim, prefix, accountID string) (int64, error) {
	var n int64
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		keys, err := keysWithPrefix(ctx, q, prefix, accountID)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k.AccountID != keys[0].AccountID {
				return apperr.E("app.RevokeKeys", apperr.Conflict, CodeKeyPrefixAmbiguous,
					"this prefix matches keys of more than one account: name the account, or give more of the prefix")
			}
		}
		now := s.Clock.Now()
		for _, k := range keys {
			if err := q.RevokeAccountKey(ctx, k.AccountID, k.Environment, k.KeyID, now); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.authMu.Lock()
	s.auth = map[account.KeyDigest]authEntry{}
	s.authMu.Unlock()
	return n, nil
}

// touchEvery is how often an instance writes a key's last use.
const touchEvery = time.Minute

// touchKey records that key id was used now, at most once a minute per
// key on this instance. The time is informational (the key page's "last
// used"): a failed write does not refuse the request it belongs to.
func (s *Service) touchKey(ctx context.Context, id string) {
	now := s.Clock.Now()
	s.keyUsedMu.Lock()
	last, ok := s.keyUsed[id]
	fresh := ok && now.Sub(last) < touchEvery && !now.Before(last)
	if !fresh {
		if s.keyUsed == nil || len(s.keyUsed) > 100_000 {
			s.keyUsed = map[string]time.Time{}
		}
		s.keyUsed[id] = now
	}
	s.keyUsedMu.Unlock()
	if fresh {
		return
	}
	_ = s.DB.Write(ctx, func(q Queries) error { return q.TouchKey(ctx, id, now.Truncate(touchEvery)) })
}

// DashboardKeys lists the account's keys of env, newest first.
func (s *Service) DashboardKeys(ctx context.Context, accountID string, env account.Environment) ([]DashboardKey, error) {
	keys, err := s.DB.Read().KeysOfEnvironment(ctx, accountID, env)
	if err != nil {
		return nil, err
	}
	out := make([]DashboardKey, len(keys))
	for i, k := range keys {
		out[i] = DashboardKey{ID: k.ID, Prefix: k.Prefix, CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt, LastUsedAt: k.LastUsedAt}
	}
	return out, nil
}

// DashboardKey is an API key as the partner dashboard lists it: never its
// secret, only the visible prefix.
type DashboardKey struct {
	ID         string
	Prefix     string // e.g. fbx_live_AB12CD34
	CreatedAt  time.Time
	RevokedAt  *time.Time // nil while the key works
	LastUsedAt *time.Time // to the minute; nil: never used
}

// RevokeDashboardKey revokes the key id of the account in env (NotFound
// for a key of another account or environment).
func (s *Service) RevokeDashboardKey(ctx context.Context, claim idempotency.Claim, accountID string, env account.Environment, id string) error {
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error { return q.RevokeAccountKey(ctx, accountID, env, id, s.Clock.Now()) })
	if err == nil {
		s.authMu.Lock()
		s.auth = map[account.KeyDigest]authEntry{}
		s.authMu.Unlock()
	}
	return err
}
