// Package console is what the operator console lists and changes
// (docs/web.md): the accounts with their keys, grants and dashboard users,
// the catalog's products, and the job queue (listing, retrying a dead
// job). It reaches the database only through Queries and the catalog only
// through the function it is given.
package console

import (
	"context"
	"github.com/farebox/farebox/internal/idempotency"
	"sort"
	"strconv"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/jobs"
)

// Queries are the store methods the console uses (store.Q implements
// them; the wiring passes store.NewView[Queries]).
type Queries interface {
	Accounts(ctx context.Context) ([]account.Account, error)
	Keys(ctx context.Context, accountID string) ([]account.Key, error)
	DashboardUsers(ctx context.Context, accountID string) ([]account.DashboardUser, error)
	Grants(ctx context.Context, accountID string) (map[string]bool, error)
	JobsInState(ctx context.Context, state string, limit int) ([]jobs.Record, error)
	JobStates(ctx context.Context) (map[string]int, error)
	RetryDeadJob(ctx context.Context, id int64, at time.Time) error
}

// DB is the database as the console sees it (store.View).
type DB = kit.DB[Queries]

// Service holds the console's use cases.
type Service struct {
	kit.Base[DB]
	catalog func() *catalog.Index
	notify  func()
}

// New returns the console over db; c is the service clock (nil: the
// system clock), cat returns the instance's current catalog, notify (may
// be nil) wakes the job workers after a retry.
func New(db DB, c clock.Clock, cat func() *catalog.Index, notify func()) *Service {
	if notify == nil {
		notify = func() {}
	}
	return &Service{Base: kit.NewBase(db, c, ""), catalog: cat, notify: notify}
}

// AdminAccount is an account with its keys and restricted-product grants.
type AdminAccount struct {
	ID, Name  string
	CreatedAt time.Time
	Keys      []AdminKey
	Grants    []string
	// Users are the e-mail addresses of the account's dashboard users.
	Users []AdminUser
}

// AdminKey is an API key on the console: never its secret.
type AdminKey struct {
	AccountID, Prefix, Environment string
	CreatedAt                      time.Time
	RevokedAt                      *time.Time // nil while the key works
}

// AdminUser is a dashboard user on the console.
type AdminUser struct{ Email string }

// Accounts lists every account for the console.
func (s *Service) Accounts(ctx context.Context) ([]AdminAccount, error) {
	q := s.DB.Read()
	accs, err := q.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]AdminAccount, 0, len(accs))
	for _, acc := range accs {
		x := AdminAccount{ID: acc.ID, Name: acc.Name, CreatedAt: acc.CreatedAt}
		keys, err := q.Keys(ctx, acc.ID)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			x.Keys = append(x.Keys, AdminKey{AccountID: k.AccountID, Prefix: k.Prefix, Environment: string(k.Environment), CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt})
		}
		users, err := q.DashboardUsers(ctx, acc.ID)
		if err != nil {
			return nil, err
		}
		for _, u := range users {
			x.Users = append(x.Users, AdminUser{u.Email})
		}
		g, err := q.Grants(ctx, acc.ID)
		if err != nil {
			return nil, err
		}
		for id := range g {
			x.Grants = append(x.Grants, id)
		}
		sort.Strings(x.Grants)
		out = append(out, x)
	}
	return out, nil
}

// AdminProduct is one catalog product as the console lists it.
type AdminProduct struct {
	ID, Name, Area, Type, Customer, Price string
	Subscription, Restricted              bool
}

// Catalog lists the catalog's products by area and name.
func (s *Service) Catalog() []AdminProduct {
	f := s.catalog().File()
	names := map[string]string{}
	for _, ar := range f.Areas {
		names[ar.ID] = ar.Name
	}
	out := make([]AdminProduct, 0, len(f.Products))
	for _, p := range f.Products {
		out = append(out, AdminProduct{ID: p.ID, Name: p.LocalTicketName, Area: names[p.AreaID], Type: p.TicketType,
			Customer: p.CustomerType, Price: p.PriceInCents.Decimal() + " " + p.Currency,
			Subscription: p.IsSubscription, Restricted: p.Restricted})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Area != out[j].Area {
			return out[i].Area < out[j].Area
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// AdminJobLimit is how many jobs the console lists.
const AdminJobLimit = 200

// AdminJob is a job as the console lists it.
type AdminJob struct {
	ID          int64
	Kind        string
	State       string
	Attempts    int
	MaxAttempts int
	RunAt       time.Time
	LastError   string // "" when the job has not failed
}

// Jobs lists the newest jobs in state ("" for all) and the count of
// jobs per state.
func (s *Service) Jobs(ctx context.Context, state string) ([]AdminJob, map[string]int, error) {
	switch state {
	case "", jobs.StateReady, jobs.StateRunning, jobs.StateDone, jobs.StateDead:
	default:
		return nil, nil, apperr.Validation("app.AdminJobs", CodeInvalidJobState, "state", "state: one of ready, running, done, dead")
	}
	q := s.DB.Read()
	list, err := q.JobsInState(ctx, state, AdminJobLimit)
	if err != nil {
		return nil, nil, err
	}
	counts, err := q.JobStates(ctx)
	out := make([]AdminJob, len(list))
	for i, j := range list {
		out[i] = AdminJob{ID: j.ID, Kind: j.Kind, State: j.State, Attempts: j.Attempts, MaxAttempts: j.MaxAttempts, RunAt: j.RunAt}
		if j.LastError != nil {
			out[i].LastError = *j.LastError
		}
	}
	return out, counts, err
}

// RetryDeadJob makes the dead job id ready to run again now.
func (s *Service) RetryDeadJob(ctx context.Context, claim idempotency.Claim, id string) (int64, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return 0, apperr.Validation("app.RetryDeadJob", CodeInvalidJobID, "job_id", "job_id: a positive integer")
	}
	err = s.DB.WriteClaimed(ctx, claim, func(q Queries) error { return q.RetryDeadJob(ctx, n, s.Clock.Now()) })
	if err == nil {
		s.notify()
	}
	return n, err
}
