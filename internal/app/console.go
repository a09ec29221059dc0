package app

// What the operator console lists and changes (docs/web.md): accounts,
// the catalog, jobs and the inspection key set.

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
)

// AdminAccount is an account with its keys and restricted-product grants.
type AdminAccount struct {
	account.Account
	Keys   []account.Key
	Grants []string
	// Users are the account's dashboard users.
	Users []account.DashboardUser
}

// AdminAccounts lists every account for the console.
func (a *App) AdminAccounts(ctx context.Context) ([]AdminAccount, error) {
	q := a.store.Read()
	accs, err := q.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]AdminAccount, 0, len(accs))
	for _, acc := range accs {
		x := AdminAccount{Account: acc}
		if x.Keys, err = q.Keys(ctx, acc.ID); err != nil {
			return nil, err
		}
		if x.Users, err = q.DashboardUsers(ctx, acc.ID); err != nil {
			return nil, err
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

// AdminCatalog lists the catalog's products by area and name.
func (a *App) AdminCatalog() []AdminProduct {
	f := a.Catalog().File()
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

// AdminJobs lists the newest jobs in state ("" for all) and the count of
// jobs per state.
func (a *App) AdminJobs(ctx context.Context, state string) ([]jobs.Record, map[string]int, error) {
	switch state {
	case "", jobs.StateReady, jobs.StateRunning, jobs.StateDone, jobs.StateDead:
	default:
		return nil, nil, apperr.Validation("app.AdminJobs", CodeInvalidJobState, "state", "state: one of ready, running, done, dead")
	}
	q := a.store.Read()
	list, err := q.JobsInState(ctx, state, AdminJobLimit)
	if err != nil {
		return nil, nil, err
	}
	counts, err := q.JobStates(ctx)
	return list, counts, err
}

// RetryDeadJob makes the dead job id ready to run again now.
func (a *App) RetryDeadJob(ctx context.Context, id string) (int64, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return 0, apperr.Validation("app.RetryDeadJob", CodeInvalidJobID, "job_id", "job_id: a positive integer")
	}
	err = a.store.Write(ctx, func(q store.Q) error { return q.RetryDeadJob(ctx, n, a.clock.Now()) })
	if err == nil && a.Jobs != nil {
		a.Jobs.Notify()
	}
	return n, err
}

// InspectionKeySet is the public inspection key set as indented JSON for
// the console ("" and Unavailable when no keyring is configured).
func (w *Wallets) InspectionKeySet() (string, error) {
	ks, err := w.InspectionKeys()
	if err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(ks, "", "  ")
	return string(b), err
}
