package app

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/retention"
	"github.com/farebox/farebox/internal/schema"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/webhook/sender"

	"golang.org/x/sync/singleflight"
)

// App wires the use cases to the store and the clock.
type App struct {
	store *store.Store
	clock clock.Clock
	IDs   ident.Prefix
	Loc   *time.Location // calendar rules (Europe/Berlin by default)

	catalog catalogPtr
	schemas schema.Cache

	authTTL time.Duration
	authMu  sync.RWMutex
	auth    map[account.KeyDigest]authEntry // by SHA-256 of the key (no hex per request)
	// keyUsed is when this instance last wrote a key's last_used_at
	// (dashboard.go touchKey).
	keyUsedMu sync.Mutex
	keyUsed   map[string]time.Time

	// Invoicing (invoices.go): seller, link base and the job runner.
	inv       InvoicingOptions
	Jobs      *jobs.Runner
	pdfFlight singleflight.Group // one PDF rendering per invoice at a time (ensurePDF)
	pdfRuns   atomic.Int64       // PDFs rendered by this instance (PDFsRendered)
	// PDFRenderer renders a document's PDF; nil is RenderPDF. Tests set
	// it to a renderer that fails or panics (TestInvoicePDFRenderPanic).
	PDFRenderer func(d *invoicedoc.Document, electronic bool) (invoicing.File, error)
	// pusher sends Apple pass-update pushes (passupdates.go); nil: none.
	pusher atomic.Pointer[PassPusher]

	parts partCache // event parts by hash (eventparts.go)

	// wallets is the instance's Wallets (NewWallets), which runs the pass
	// update jobs (googleupdates.go); nil until wallets are configured.
	wallets atomic.Pointer[Wallets]
	// Webhooks (webhooks.go).
	hooks          WebhookOptions
	sender         *sender.Sender
	hookRunner     atomic.Pointer[jobs.Runner] // WebhookRunner's, if started
	hookBatch      hookBatch                   // group commit of delivery attempts
	retention      retention.Policy            // retention classes (retention.go)
	retentionBatch int
	retentionYield float64
}

type authEntry struct {
	p       account.Principal
	expires time.Time
}

// Options configure New.
type Options struct {
	Store    *store.Store
	Clock    clock.Clock
	IDPrefix string
	Location *time.Location
	// AuthCacheTTL caches resolved keys per instance; a revoked key keeps
	// working on an instance for at most this long. 0 disables the cache.
	AuthCacheTTL time.Duration
	// Invoicing configures invoices (seller, public base URL, jobs).
	Invoicing InvoicingOptions
	// Webhooks configures webhook deliveries.
	Webhooks WebhookOptions
	// Retention is the retention policy (zero: retention.Default());
	// RetentionBatch the rows per retention transaction (0: DefaultRetentionBatch);
	// RetentionYield the pause after a full batch, in multiples of the
	// batch's duration (0: DefaultRetentionYield, negative: none).
	Retention      retention.Policy
	RetentionBatch int
	RetentionYield float64
}

// New returns an App.
func New(o Options) *App {
	if o.Clock == nil {
		o.Clock = clock.System{}
	}
	if o.Location == nil {
		o.Location = clock.Berlin
	}
	if o.IDPrefix == "" {
		o.IDPrefix = "farebox"
	}
	a := &App{store: o.Store, clock: o.Clock, IDs: ident.Prefix(o.IDPrefix), Loc: o.Location,
		authTTL: o.AuthCacheTTL, auth: map[account.KeyDigest]authEntry{}}
	a.initInvoicing(o.Invoicing)
	a.initPassUpdates()
	a.initWebhooks(o.Webhooks)
	a.retention, a.retentionBatch = o.Retention, o.RetentionBatch
	if a.retention == (retention.Policy{}) {
		a.retention = retention.Default()
	}
	if a.retentionBatch <= 0 {
		a.retentionBatch = DefaultRetentionBatch
	}
	switch a.retentionYield = o.RetentionYield; {
	case a.retentionYield == 0:
		a.retentionYield = DefaultRetentionYield
	case a.retentionYield < 0:
		a.retentionYield = 0
	}
	return a
}

// Authenticate resolves a presented API key. Malformed keys are rejected
// without a database query.
func (a *App) Authenticate(ctx context.Context, key string) (account.Principal, error) {
	p, err := a.resolveKey(ctx, key)
	if err == nil {
		a.touchKey(ctx, p.KeyID)
	}
	return p, err
}

func (a *App) resolveKey(ctx context.Context, key string) (account.Principal, error) {
	const op = "app.Authenticate"
	if _, ok := account.ParseKey(key); !ok {
		return account.Principal{}, apperr.E(op, apperr.Unauthenticated, CodeInvalidAPIKey, "API key malformed, unknown or revoked")
	}
	sum := account.Digest(key)
	now := a.clock.Now()
	if a.authTTL > 0 {
		a.authMu.RLock()
		e, ok := a.auth[sum]
		a.authMu.RUnlock()
		if ok && now.Before(e.expires) {
			return e.p, nil
		}
	}
	p, err := a.store.Read().PrincipalByKeyHash(ctx, sum.String())
	if err != nil {
		if apperr.KindOf(err) == apperr.Unauthenticated {
			return p, apperr.E(op, apperr.Unauthenticated, CodeInvalidAPIKey, "API key malformed, unknown or revoked")
		}
		return p, err
	}
	if a.authTTL > 0 {
		a.authMu.Lock()
		if len(a.auth) > 100_000 {
			a.auth = map[account.KeyDigest]authEntry{}
		}
		a.auth[sum] = authEntry{p: p, expires: now.Add(a.authTTL)}
		a.authMu.Unlock()
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
func (a *App) CreateAccount(ctx context.Context, name string, env account.Environment) (CreatedKey, error) {
	if name == "" {
		return CreatedKey{}, apperr.E("app.CreateAccount", apperr.Invalid, CodeNameRequired, "an account needs a name")
	}
	acc := account.Account{ID: a.IDs.New("account"), Name: name, CreatedAt: a.clock.Now()}
	var out CreatedKey
	err := a.store.Write(ctx, func(q store.Q) error {
		if err := q.CreateAccount(ctx, acc); err != nil {
			return err
		}
		var err error
		out, err = a.addKey(ctx, q, acc.ID, env)
		return err
	})
	return out, err
}

// CreateKey adds a key for env to an existing account.
func (a *App) CreateKey(ctx context.Context, accountID string, env account.Environment) (CreatedKey, error) {
	var out CreatedKey
	err := a.store.Write(ctx, func(q store.Q) error {
		if _, err := q.Account(ctx, accountID); err != nil {
			return err
		}
		var err error
		out, err = a.addKey(ctx, q, accountID, env)
		return err
	})
	return out, err
}

func (a *App) addKey(ctx context.Context, q store.Q, accountID string, env account.Environment) (CreatedKey, error) {
	secret, prefix, hash := account.NewKey(env)
	k := account.Key{ID: a.IDs.New("key"), AccountID: accountID, Prefix: prefix, Environment: env, CreatedAt: a.clock.Now()}
	if err := q.CreateKey(ctx, k, hash); err != nil {
		return CreatedKey{}, err
	}
	return CreatedKey{AccountID: accountID, Secret: secret, Prefix: prefix}, nil
}

// RevokeKeys revokes the active keys whose visible prefix starts with
// prefix, of any one account (RevokeKeysOf with no account).
func (a *App) RevokeKeys(ctx context.Context, prefix string) (int64, error) {
	return a.RevokeKeysOf(ctx, prefix, "")
}

// KeyMatch is an active key a revocation by prefix names.
type KeyMatch struct {
	AccountID, AccountName string
	KeyID, Prefix          string
	Environment            Environment
}

// KeysWithPrefix lists the active keys whose visible prefix starts with
// prefix, of accountID ("" for every account): what RevokeKeysOf would
// revoke, for the operator to read first. The prefix must have at least
// account.MinKeyPrefixChars characters after fbx_live_ or fbx_test_.
func (a *App) KeysWithPrefix(ctx context.Context, prefix, accountID string) ([]KeyMatch, error) {
	return keysWithPrefix(ctx, a.store.Read(), prefix, accountID)
}

func keysWithPrefix(ctx context.Context, q store.Q, prefix, accountID string) ([]KeyMatch, error) {
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
func (a *App) RevokeKeysOf(ctx context.Context, prefix, accountID string) (int64, error) {
	var n int64
	err := a.store.Write(ctx, func(q store.Q) error {
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
		now := a.clock.Now()
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
	a.authMu.Lock()
	a.auth = map[account.KeyDigest]authEntry{}
	a.authMu.Unlock()
	return n, nil
}

// Ping checks that the database answers (for /readyz).
func (a *App) Ping(ctx context.Context) error { return a.store.Ping(ctx) }

// Database names the engine the store runs on ("sqlite" or "postgres").
func (a *App) Database() string { return string(a.store.Engine()) }

// ParseEnvironment reads "live" or "test".
func ParseEnvironment(s string) (Environment, error) {
	switch Environment(s) {
	case account.Live, account.Test:
		return Environment(s), nil
	}
	return "", apperr.Validation("app.ParseEnvironment", CodeInvalidEnvironment, "environment", "environment: live or test")
}
