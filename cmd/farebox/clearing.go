package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	clearingapp "github.com/farebox/farebox/internal/app/clearing"
	"github.com/farebox/farebox/internal/clearing"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/config"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/store"
)

// clearingCmd is `farebox clearing export|verify|postal-codes`
// (docs/clearing.md).
func clearingCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const help = `Usage:
  farebox clearing export --month YYYY-MM [--format csv|json] [--output FILE]
                                       write the month's revenue clearing report (stdout unless --output); a month that
                                       has ended is reported (frozen) the first time it is exported
  farebox clearing verify YYYY-MM      reconcile the month's clearing with its billable items; any difference fails (exit 1)
  farebox clearing postal-codes        list every postal code the table cannot map and those in several states`
	if len(args) == 0 || !slices.Contains([]string{"export", "verify", "postal-codes"}, args[0]) {
		fmt.Fprintln(stderr, help)
		return errUsage
	}
	if args[0] == "postal-codes" {
		return clearingPostalCodes(stdout)
	}
	fs, db := newSubcommand("clearing", args, getenv, stderr)
	tz := fs.String("timezone", envOr(getenv, "FAREBOX_TIMEZONE", "Europe/Berlin"), "time zone of the ticket months (env FAREBOX_TIMEZONE)")
	issuer := fs.String("seller-name", envOr(getenv, "FAREBOX_SELLER_NAME", config.DevSellerName), "the issuing company (env FAREBOX_SELLER_NAME)")
	var month, format, output *string
	if args[0] == "export" {
		month = fs.String("month", "", "the reporting month, YYYY-MM (required)")
		format = fs.String("format", "csv", "csv or json")
		output = fs.String("output", "", "write to FILE instead of standard output")
	}
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if args[0] == "verify" {
		if len(pos) != 1 {
			fmt.Fprintln(stderr, help)
			return errUsage
		}
		month = &pos[0]
	} else if len(pos) != 0 {
		fmt.Fprintln(stderr, help)
		return errUsage
	}
	loc, err := time.LoadLocation(*tz)
	if err != nil {
		return fmt.Errorf("--timezone: %w", err)
	}
	s, err := db.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	svc, err := clearingOn(ctx, s, db.prefix, loc, *issuer)
	if err != nil {
		return err
	}
	field := "--month"
	if args[0] == "verify" {
		field = "MONTH"
	}
	m, err := svc.ParseMonth(field, *month)
	if err != nil {
		return err
	}
	if args[0] == "verify" {
		return clearingVerify(ctx, svc, m, stdout)
	}
	return clearingExport(ctx, svc, m, *format, *output, stdout, stderr)
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

// clearingOn is the clearing on s, its national products read from the
// stored catalog.
func clearingOn(ctx context.Context, s *store.Store, prefix string, loc *time.Location, issuer string) (*clearingapp.Service, error) {
	prods := productsOn(s, prefix)
	if err := prods.Load(ctx); err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	national := func() []string { return clearing.National(prods.Catalog().File().Products) }
	return clearingapp.New(store.NewView[clearingapp.Queries](s), clock.System{}, ident.Prefix(prefix), loc, issuer, national), nil
}

// clearingExport writes the report to output (stdout when ""), buffered,
// and its totals per state to stderr.
func clearingExport(ctx context.Context, svc *clearingapp.Service, m clearing.Month, format, output string, stdout, stderr io.Writer) error {
	f, err := clearingapp.ParseFormat("--format", format)
	if err != nil {
		return err
	}
	w := stdout
	if output != "" {
		file, err := os.Create(output)
		if err != nil {
			return err
		}
		defer file.Close()
		w = file
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	t, err := svc.Export(ctx, m, f, bw)
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%s: %d ticket months, %s EUR gross\n", m, t.All.Count, t.All.Gross.Decimal())
	if output != "" {
		f := w.(*os.File)
		return f.Close()
	}
	return nil
}

// clearingVerify prints the reconciliation; a difference fails.
func clearingVerify(ctx context.Context, svc *clearingapp.Service, m clearing.Month, stdout io.Writer) error {
	v, err := svc.Verify(ctx, m)
	if err != nil {
		return err
	}
	state := "preview (not reported yet)"
	if v.Final {
		state = "reported"
	}
	for _, d := range v.Differences {
		fmt.Fprintf(stdout, "DIFFERENCE %s: %s (cleared %s, billable %s)\n", orDash(d.BillableItemID), d.Problem, d.Cleared.Decimal(), d.Billable.Decimal())
	}
	fmt.Fprintf(stdout, "%s %s: cleared %d ticket months, %s EUR; billable items %d, %s EUR; %d differences\n", m, state,
		v.ClearedMonths, v.ClearedGross.Decimal(), v.BillableMonths, v.BillableGross.Decimal(), v.DifferenceCount)
	if !v.OK {
		return fmt.Errorf("clearing verify %s: %d differences", m, v.DifferenceCount)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clearingPostalCodes lists the table's codes that are not simply one
// state's: UNMAPPED (reported in the unmapped row) and MAJORITY.
func clearingPostalCodes(stdout io.Writer) error {
	notes := clearing.TableNotes()
	un := 0
	for _, n := range notes {
		if n.State == "" {
			un++
			fmt.Fprintf(stdout, "UNMAPPED %s: %s\n", n.Code, n.Note)
		}
	}
	for _, n := range notes {
		if n.State != "" {
			fmt.Fprintf(stdout, "MAJORITY %s → %s: %s\n", n.Code, n.State, n.Note)
		}
	}
	fmt.Fprintf(stdout, "%d postal codes in the table; %d cannot be mapped, %d in several states mapped to the state of most of their places; "+
		"a code not in the table is unmapped too\n", clearing.TableSize(), un, len(notes)-un)
	return nil
}
