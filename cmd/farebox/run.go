package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/farebox/farebox/internal/app"
	accountsapp "github.com/farebox/farebox/internal/app/accounts"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/deliveries"
	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/app/kit"
	productsapp "github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/app/transit"
	"github.com/farebox/farebox/internal/app/webhooks"
	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/pdf"
	"github.com/farebox/farebox/internal/store"
)

// errUsage means usage was printed; exit 2 without another message.
var errUsage = errors.New("usage")

const usageText = `farebox: public-transit ticketing service

Usage: farebox <command> [flags]

Commands:
  serve      run the HTTP service (embedded SQLite unless FAREBOX_DATABASE_URL is set)
  migrate    apply database migrations
  accounts   create, list and revoke partner accounts and API keys; grant restricted products; invite and remove dashboard users
  catalog    import and export the catalog of areas and products
  usage      report the usage ledger of every account
  inspect    verify an inspection barcode (image or payload) and say whose and whether valid
  tickets    revoke a ticket (it becomes invalid and enters the revocation feed)
  blocklist  export the signed VDV-KA and UIC 918.3 blocklist; import an external one (its tickets become invalid)
  keys       list, rotate, prune or revoke the inspection barcode signing keys
  gtfs       import, list and remove GTFS timetable feeds
  fares      export the catalog's fares as NeTEx or GTFS Fares v2 (journey planners, the national access point)
  books      verify the invoice number series and stored files; print an account's audit log
  clearing   the national ticket's revenue clearing by postal code: export a month's report, verify it, list unmappable postal codes
  admin-password  print an --admin-password-file line (argon2id) for a password read from stdin
  webhooks   create, list, change, rotate, disable and delete an account's webhook endpoints; its delivery log; redeliver
  retention  apply the retention periods of personal data now (--dry-run: only show what is due)
  inspectors add, list, password and revoke the inspectors, their devices' tokens and app passwords
  records    export a day's issuance and inspection records for the central reporting (age-encrypted)
  version    print the version

Run "farebox <command> -h" for the flags of a command.
`

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// run is the whole program; main only supplies the process's environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return errUsage
	}
	cmd, rest := args[0], args[1:]
	if c, ok := commands[cmd]; ok {
		return c(ctx, rest, getenv, stdin, stdout, stderr)
	}
	switch cmd {
	case "version":
		fmt.Fprintln(stdout, "farebox", version)
		return nil
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usageText)
		return nil
	}
	fmt.Fprintf(stderr, "farebox: unknown command %q\n\n%s", cmd, usageText)
	return errUsage
}

// command is one subcommand: the arguments after its name and the
// process's environment.
type command func(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error

// noStdin is a command that reads no standard input.
func noStdin(c func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error) command {
	return func(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) error {
		return c(ctx, args, getenv, stdout, stderr)
	}
}

// commands are the subcommands by name (usageText lists them).
var commands = map[string]command{
	"serve": noStdin(func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
		return serve(ctx, args, getenv, stdout, stderr, nil)
	}),
	"admin-password": func(_ context.Context, args []string, _ func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
		return adminPasswordCmd(args, stdin, stdout, stderr)
	},
	"catalog": catalogCmd, "inspect": inspectCmd, "inspectors": inspectorsCmd,
	"migrate": noStdin(migrate), "accounts": noStdin(accounts), "usage": noStdin(usageCmd), "gtfs": noStdin(gtfsCmd),
	"fares": noStdin(faresCmd), "tickets": noStdin(ticketsCmd), "blocklist": noStdin(blocklistCmd), "books": noStdin(booksCmd),
	"clearing": noStdin(clearingCmd), "keys": noStdin(keysCmd), "webhooks": noStdin(webhooksCmd),
	"retention": noStdin(retentionCmd), "records": noStdin(recordsCmd),
}

func exitCode(err error) int {
	if errors.Is(err, errUsage) || errors.Is(err, flag.ErrHelp) {
		return 2
	}
	return 1
}

// dbFlags are the database settings shared by the operator commands.
type dbFlags struct {
	url, dataDir, prefix string
	// create allows an operator command to create a missing embedded
	// database (--create); without it the command refuses, since a
	// command run in the wrong directory would otherwise work on a new,
	// empty database there.
	create bool
}

func (d *dbFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&d.url, "database-url", getenv("FAREBOX_DATABASE_URL"), "postgres:// URL (env FAREBOX_DATABASE_URL); empty uses embedded SQLite")
	dir := getenv("FAREBOX_DATA_DIR")
	if dir == "" {
		dir = "./farebox-data"
	}
	fs.StringVar(&d.dataDir, "data-dir", dir, "data directory of the embedded database (env FAREBOX_DATA_DIR)")
	prefix := getenv("FAREBOX_ID_PREFIX")
	if prefix == "" {
		prefix = "farebox"
	}
	fs.StringVar(&d.prefix, "id-prefix", prefix, "identifier prefix (env FAREBOX_ID_PREFIX)")
	fs.BoolVar(&d.create, "create", false, "create the embedded database (and --data-dir) when it does not exist; without it a missing database is an error")
}

// storeOptions are the store settings of an operator command.
func (d *dbFlags) storeOptions() store.Options {
	return store.Options{URL: d.url, DataDir: d.dataDir, MaxConns: 4, MustExist: !d.create}
}

// openStore opens the database without migrating; a missing embedded
// database is an error naming the path unless --create was given.
func (d *dbFlags) openStore(ctx context.Context) (*store.Store, error) {
	s, err := store.Open(ctx, d.storeOptions())
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, fmt.Errorf("%w (data dir %q): run the command where the service's data dir is, or set --data-dir / FAREBOX_DATA_DIR "+
			"(or --database-url / FAREBOX_DATABASE_URL); pass --create to start a new, empty database there", err, d.dataDir)
	}
	return s, err
}

// newSubcommand starts the flag set of "farebox <group> <args[0]>" with
// the database flags registered.
func newSubcommand(group string, args []string, getenv func(string) string, stderr io.Writer) (*flag.FlagSet, *dbFlags) {
	return newCommand(group+" "+args[0], getenv, stderr)
}

// newCommand starts the flag set of "farebox <name>" with the database
// flags registered.
func newCommand(name string, getenv func(string) string, stderr io.Writer) (*flag.FlagSet, *dbFlags) {
	fs := flag.NewFlagSet("farebox "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := &dbFlags{}
	db.register(fs, getenv)
	return fs, db
}

// openApp opens (and migrates) the database and returns an App on it; the
// caller closes the store.
func (d *dbFlags) openApp(ctx context.Context) (*app.App, *store.Store, error) {
	s, err := d.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	return app.New(app.Options{Store: s, Clock: clock.System{}, IDPrefix: d.prefix}), s, nil
}

// feedsOn is the transit capability's stored feeds on s (the one place
// the command wires package transit to the store).
func feedsOn(s *store.Store, c clock.Clock, prefix string) *transit.Feeds {
	return transit.NewFeeds(store.NewView[transit.Queries](s), c, ident.Prefix(prefix))
}

// webhooksOn is the events' read side on s and the webhooks capability
// over it, the deliveries of a's changes and a's job runner (the one place
// the command wires packages events and webhooks to the store).
func webhooksOn(s *store.Store, c clock.Clock, prefix string, a *app.App, o webhooks.Options) (*events.Service, *webhooks.Service) {
	ev := events.New(store.NewView[events.Queries](s), c, s.SettledEventSeq, a.EndSubscriptions)
	o.Jobs, o.Queue = a.Jobs, s.JobsOf(deliveries.JobDeliver)
	return ev, webhooks.New(store.NewView[webhooks.Queries](s), c, ident.Prefix(prefix), ev, a.Deliveries(), o)
}

// productsOn is the catalog on s (package products), not yet loaded.
func productsOn(s *store.Store, prefix string) *productsapp.Service {
	return productsapp.New(store.NewView[productsapp.Queries](s), clock.System{}, ident.Prefix(prefix))
}

// accountsOn is the accounts and keys capability on s, for the commands
// (no key cache: a command resolves no keys).
func accountsOn(s *store.Store, prefix string) *accountsapp.Service {
	return accountsapp.New(store.NewView[accountsapp.Queries](s), clock.System{}, ident.Prefix(prefix), 0)
}

// booksOn is the books on s: the audit log, the receipts (their PDFs with
// seller's letterhead rendered through renderer, their links under links)
// and verify.
func booksOn(s *store.Store, prefix string, seller invoicedoc.Seller, links *kit.Links, renderer *pdf.Queue) *books.Books {
	return books.New(store.NewView[books.Queries](s), clock.System{}, ident.Prefix(prefix), seller, links, renderer)
}

// webusersOn is the web users and sessions capability on s.
func webusersOn(s *store.Store, c clock.Clock, prefix string) *webusers.Service {
	return webusers.New(store.NewView[webusers.Queries](s), c, ident.Prefix(prefix))
}

// parseAndOpen parses a subcommand's flags (see parseFlags) and opens its
// App (see openApp); the caller closes the store.
func (d *dbFlags) parseAndOpen(ctx context.Context, fs *flag.FlagSet, args []string) ([]string, *app.App, *store.Store, error) {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, nil, nil, err
	}
	a, s, err := d.openApp(ctx)
	return pos, a, s, err
}

// open connects and migrates, so operator commands work on a fresh install.
func (d *dbFlags) open(ctx context.Context) (*store.Store, error) {
	s, err := d.openStore(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// withStore opens the database (open: migrated), runs fn on it and closes
// it.
func (d *dbFlags) withStore(ctx context.Context, fn func(s *store.Store) error) error {
	s, err := d.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

// parseFlags parses with flags allowed after positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if strings.HasPrefix(args[0], "-") && args[0] != "-" {
			continue
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
