package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/farebox/farebox/internal/account"
	accountsapp "github.com/farebox/farebox/internal/app/accounts"
	"github.com/farebox/farebox/internal/app/billing"
	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
)

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, db := newCommand("migrate", getenv, stderr)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	s, err := db.openStore(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	n, err := s.Migrate(ctx)
	if err != nil {
		return err
	}
	v, _ := s.SchemaVersion(ctx)
	fmt.Fprintf(stdout, "applied %d migrations; schema version %d (%s)\n", n, v, s.Engine())
	return nil
}

// accountsHelp is the usage line of `farebox accounts`.
const accountsHelp = "Usage: farebox accounts create --name NAME [--test] [--json] (with --test: a test key for the account of that name, if there is one) | create --account ID [--test] [--json] | list [--json] | revoke KEY_PREFIX [--account ID] [--yes] | grant-product ACCOUNT_ID PRODUCT_ID | invite --account ID --email ADDRESS [--url BASE] | remove-user --account ID --email ADDRESS"

func accounts(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || !strings.Contains(" create list revoke grant-product invite remove-user ", " "+args[0]+" ") {
		fmt.Fprintln(stderr, accountsHelp)
		return errUsage
	}
	// Each subcommand registers only its own flags, so its --help lists
	// what it reads (issue 28: invite --help showed create's flags).
	fs, db := newSubcommand("accounts", args, getenv, stderr)
	name, accountID, email, base := new(string), new(string), new(string), new(string)
	test, asJSON, yes := new(bool), new(bool), new(bool)
	switch args[0] {
	case "create":
		name = fs.String("name", "", "name of the new account")
		accountID = fs.String("account", "", "add a key to this existing account instead")
		test = fs.Bool("test", false, "create a test-environment key (fbx_test_...)")
		asJSON = fs.Bool("json", false, "print JSON only")
	case "list":
		asJSON = fs.Bool("json", false, "print JSON only")
	case "revoke":
		accountID = fs.String("account", "", "revoke only keys of this account (names the account; no --yes needed)")
		yes = fs.Bool("yes", false, "revoke the keys listed without naming the account")
	case "invite":
		accountID = fs.String("account", "", "the account the dashboard user belongs to")
		email = fs.String("email", "", "the dashboard user's e-mail address")
		base = fs.String("url", getenv("FAREBOX_PUBLIC_URL"), "the server's public base URL (default $FAREBOX_PUBLIC_URL or http://127.0.0.1:8080)")
	case "remove-user":
		accountID = fs.String("account", "", "the account the dashboard user belongs to")
		email = fs.String("email", "", "the dashboard user's e-mail address")
	}
	pos, _, s, err := db.parseAndOpen(ctx, fs, args[1:])
	if err != nil {
		return err
	}
	defer s.Close()
	keys := accountsOn(s, db.prefix)
	switch args[0] {
	case "create":
		return accountsCreate(ctx, keys, s, *name, *accountID, *test, *asJSON, stdout)
	case "list":
		return accountsList(ctx, s, *asJSON, stdout)
	case "grant-product":
		if len(pos) != 2 {
			return fmt.Errorf("accounts grant-product needs ACCOUNT_ID PRODUCT_ID")
		}
		prods := productsOn(s, db.prefix)
		if err := prods.Load(ctx); err != nil {
			return err
		}
		if err := prods.Grant(ctx, idempotency.Claim{}, pos[0], pos[1]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "account %s may now order %s\n", pos[0], pos[1])
		return nil
	case "invite":
		if *accountID == "" || *email == "" {
			return fmt.Errorf("accounts invite needs --account ID and --email ADDRESS")
		}
		token, err := webusersOn(s, clock.System{}, db.prefix).InviteDashboardUser(ctx, idempotency.Claim{}, *accountID, *email)
		if err != nil {
			return err
		}
		b := strings.TrimRight(*base, "/")
		if b == "" {
			b = "http://127.0.0.1:8080"
		}
		fmt.Fprintf(stdout, "%s%s%s\n(good once, for %s; send it to %s only)\n", b, webusers.DashboardPath, token, webusers.InviteTTL, *email)
		return nil
	case "remove-user":
		if *accountID == "" || *email == "" {
			return fmt.Errorf("accounts remove-user needs --account ID and --email ADDRESS")
		}
		if err := webusersOn(s, clock.System{}, db.prefix).RemoveDashboardUser(ctx, idempotency.Claim{}, *accountID, *email); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed dashboard user %s of account %s; their sessions have ended\n", strings.ToLower(strings.TrimSpace(*email)), *accountID)
		return nil
	case "revoke":
		if len(pos) != 1 {
			return fmt.Errorf("accounts revoke needs exactly one KEY_PREFIX")
		}
		return revokeKeys(ctx, keys, pos[0], *accountID, *yes, stdout)
	}
	fmt.Fprintln(stderr, accountsHelp)
	return errUsage
}

// accountsCreate is `accounts create`: a new account with its first key
// (--name), another key of an account (--account), or the test key of the
// account of that name (--name --test).
func accountsCreate(ctx context.Context, keys *accountsapp.Service, s *store.Store, name, accountID string, test, asJSON bool, stdout io.Writer) error {
	env := account.Live
	if test {
		env = account.Test
	}
	var k accountsapp.CreatedKey
	var err error
	switch {
	case accountID != "":
		k, err = keys.CreateKey(ctx, idempotency.Claim{}, accountID, env)
	case name != "" && test:
		// The test key of a partner created with --name: the account
		// of that name gets it, rather than a second account.
		k, err = testKeyByName(ctx, keys, s, name)
	case name != "":
		k, err = keys.CreateAccount(ctx, idempotency.Claim{}, name, env)
	default:
		return fmt.Errorf("accounts create needs --name NAME (or --account ID)")
	}
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{"account_id": k.AccountID, "api_key": k.Secret})
	}
	fmt.Fprintf(stdout, "account: %s\napi key: %s\n(the key is shown only now; store it safely)\n", k.AccountID, k.Secret)
	return nil
}

// accountsList is `accounts list`: every account with its keys (prefix,
// environment, created, revoked), as a table or as JSON.
func accountsList(ctx context.Context, s *store.Store, asJSON bool, stdout io.Writer) error {
	accs, err := s.Read().Accounts(ctx)
	if err != nil {
		return err
	}
	keys, err := s.Read().Keys(ctx, "")
	if err != nil {
		return err
	}
	type keyOut struct {
		Prefix      string  `json:"prefix"`
		Environment string  `json:"environment"`
		CreatedAt   string  `json:"created_at"`
		RevokedAt   *string `json:"revoked_at"`
	}
	type accOut struct {
		ID        string   `json:"account_id"`
		Name      string   `json:"name"`
		CreatedAt string   `json:"created_at"`
		Keys      []keyOut `json:"keys"`
	}
	out := []accOut{}
	for _, ac := range accs {
		o := accOut{ID: ac.ID, Name: ac.Name, CreatedAt: clock.Timestamp(ac.CreatedAt), Keys: []keyOut{}}
		for _, k := range keys {
			if k.AccountID == ac.ID {
				ko := keyOut{Prefix: k.Prefix, Environment: string(k.Environment), CreatedAt: clock.Timestamp(k.CreatedAt)}
				if k.RevokedAt != nil {
					r := clock.Timestamp(*k.RevokedAt)
					ko.RevokedAt = &r
				}
				o.Keys = append(o.Keys, ko)
			}
		}
		out = append(out, o)
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACCOUNT\tNAME\tKEY PREFIX\tENV\tSTATUS")
	for _, o := range out {
		if len(o.Keys) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\n", o.ID, o.Name)
		}
		for _, k := range o.Keys {
			status := "active"
			if k.RevokedAt != nil {
				status = "revoked " + *k.RevokedAt
			}
			fmt.Fprintf(tw, "%s\t%s\t%s…\t%s\t%s\n", o.ID, o.Name, k.Prefix, k.Environment, status)
		}
	}
	return tw.Flush()
}

// revokeKeys is `accounts revoke KEY_PREFIX [--account ID] [--yes]`: it
// prints every active key the prefix names (account, name, key prefix,
// environment) and revokes them only when the operator confirmed: with
// --account (the keys of that account only: the operator named both the
// account and the key) or with --yes. A prefix naming keys of more than one
// account revokes nothing, --yes or not.
func revokeKeys(ctx context.Context, a *accountsapp.Service, prefix, accountID string, yes bool, stdout io.Writer) error {
	keys, err := a.KeysWithPrefix(ctx, prefix, accountID)
	if err != nil {
		return err
	}
	accounts := map[string]bool{}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACCOUNT\tNAME\tKEY PREFIX\tENV")
	for _, k := range keys {
		accounts[k.AccountID] = true
		fmt.Fprintf(tw, "%s\t%s\t%s…\t%s\n", k.AccountID, k.AccountName, k.Prefix, k.Environment)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case len(accounts) > 1:
		return fmt.Errorf("nothing revoked: %s matches keys of %d accounts; give the whole prefix and --account ID", prefix, len(accounts))
	case accountID == "" && !yes:
		return fmt.Errorf("nothing revoked: to revoke the %d key(s) above, run again with --yes or with --account %s", len(keys), keys[0].AccountID)
	}
	n, err := a.RevokeKeysOf(ctx, idempotency.Claim{}, prefix, keys[0].AccountID)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked %d key(s)\n", n)
	return nil
}

func usageCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, db := newCommand("usage", getenv, stderr)
	now := time.Now().UTC()
	from := fs.String("from", time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly), "first day YYYY-MM-DD (UTC)")
	to := fs.String("to", now.Format(time.DateOnly), "last day YYYY-MM-DD (UTC)")
	acct := fs.String("account", "", "only this account")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	return db.withStore(ctx, func(s *store.Store) error {
		rows, err := billing.New(s.Read(), clock.System{}).Usage(ctx, *acct, *from, *to)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(rows)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ACCOUNT\tDATE\tENDPOINT\tCOUNTED\tUNCOUNTED\tREFUSED")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\n", r.AccountID, r.Day, r.Endpoint, r.Counted, r.Uncounted, r.Refused)
		}
		return tw.Flush()
	})
}

// testKeyByName gives the one account named name a test key, or creates
// the account with a test key when none has that name; several accounts of
// that name are ambiguous (--account ID says which).
func testKeyByName(ctx context.Context, a *accountsapp.Service, s *store.Store, name string) (accountsapp.CreatedKey, error) {
	accs, err := s.Read().Accounts(ctx)
	if err != nil {
		return accountsapp.CreatedKey{}, err
	}
	var ids []string
	for _, ac := range accs {
		if ac.Name == name {
			ids = append(ids, ac.ID)
		}
	}
	switch len(ids) {
	case 0:
		return a.CreateAccount(ctx, idempotency.Claim{}, name, account.Test)
	case 1:
		return a.CreateKey(ctx, idempotency.Claim{}, ids[0], account.Test)
	default:
		return accountsapp.CreatedKey{}, fmt.Errorf("%d accounts are named %q (%s): say which with --account ID --test", len(ids), name, strings.Join(ids, ", "))
	}
}
