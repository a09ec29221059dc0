package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/privacy"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/retention"
	"github.com/farebox/farebox/internal/store"
)

// retentionCmd is `farebox retention [--dry-run]` (docs/privacy.md): the
// retention job run now, or with --dry-run what it would do, per class.
func retentionCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, db := newCommand("retention", getenv, stderr)
	dry := fs.Bool("dry-run", false, "only count what is due, per class, with the oldest affected record; change nothing")
	batch := fs.Int("batch", privacy.DefaultBatch, "rows changed per transaction (1 to 10000)")
	yield := fs.Float64("yield", privacy.DefaultYield, "pause after each full batch, in multiples of the batch's duration, so requests get the writer in between (0: none, e.g. in a maintenance window)")
	def := func(env, d string) string {
		if v := getenv(env); v != "" {
			return v
		}
		return d
	}
	ident := fs.String("retention-identification", def("FAREBOX_RETENTION_IDENTIFICATION", "183d"), "identification data kept after a ticket's validity ends (env FAREBOX_RETENTION_IDENTIFICATION; at least 30d)")
	billing := fs.String("retention-billing-records", def("FAREBOX_RETENTION_BILLING_RECORDS", "8y"), "calendar years billing records are kept after the end of their year (env FAREBOX_RETENTION_BILLING_RECORDS; at least 8y)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("retention: unexpected argument %q", pos[0])
	}
	if *batch < 1 || *batch > 10000 {
		return fmt.Errorf("--batch: %d is not 1 to 10000", *batch)
	}
	if *yield < 0 || *yield > 100 {
		return fmt.Errorf("--yield: %g is not 0 to 100", *yield)
	}
	y := *yield
	if y == 0 {
		y = -1 // privacy.Options: negative is none
	}
	var p retention.Policy
	if p.Identification, err = retention.ParsePeriod(*ident); err != nil {
		return fmt.Errorf("--retention-identification: %v", err)
	}
	if p.BillingYears, err = retention.ParseYears(*billing); err != nil {
		return fmt.Errorf("--retention-billing-records: %v", err)
	}
	if err := p.Validate(); err != nil {
		return err
	}
	return db.withStore(ctx, func(s *store.Store) error {
		a := app.New(app.Options{Store: s, Clock: clock.System{}, IDPrefix: db.prefix})
		r, err := privacyOn(s, a, privacy.Options{Policy: p, Batch: *batch, Yield: y}).RunRetention(ctx, *dry)
		if err != nil {
			return err
		}
		writeRetention(stdout, r, p)
		return nil
	})
}

// writeRetention prints a run's report, a line per class.
func writeRetention(w io.Writer, r privacy.Report, p retention.Policy) {
	oldest := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(w, "retention%s: identification period %d days (cutoff %s), billing records %d years after their calendar year\n",
		map[bool]string{true: " (dry run)", false: ""}[r.DryRun], p.Identification/retention.Day, r.IdentificationCutoff.UTC().Format(time.RFC3339), p.BillingYears)
	fmt.Fprintf(w, "%-16s %-28s %10s %10s  %s\n", "class", "records", "due", "erased", "oldest affected")
	row := func(class retention.Class, what string, due, done int64, old *time.Time) {
		d := fmt.Sprint(done)
		if r.DryRun {
			d = "-"
		}
		fmt.Fprintf(w, "%-16s %-28s %10d %10s  %s\n", class, what, due, d, oldest(old))
	}
	row(retention.Identification, "tickets (medium, postcode)", r.Due.Tickets, r.Tickets, r.Due.OldestTicket)
	row(retention.Identification, "coupons (postcode)", r.Due.Coupons, r.Coupons, r.Due.OldestCoupon)
	row(retention.BillingRecords, "restricted customers", r.Due.Customers, r.Customers, r.Due.OldestCustomer)
	if !r.DryRun {
		fmt.Fprintf(w, "events redacted: %d; %d transactions in %s\n", r.Events, r.Batches, r.Took.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "invoices past their retention period (kept, never altered by this job): %d\n", r.Due.InvoicesPastPeriod)
}

// privacyOn is the privacy use cases over st (docs/privacy.md): an
// erasure's transaction is bound to a's work (App.TxWork), billing years
// are a's calendar years.
func privacyOn(st *store.Store, a *app.App, o privacy.Options) *privacy.Service {
	o.Location = a.Loc
	return privacy.New(store.NewView[privacy.Queries](st), clock.System{}, o, privacy.NewTx(st.WriteClaimed, a.TxWork))
}

// retainDaily starts the retention loop of serve (docs/privacy.md): every
// instance looks each hour whether the daily run is due; one claims it
// (retention_state) and erases in short batches.
func retainDaily(bg *loops, p *privacy.Service, log *slog.Logger) {
	bg.every(time.Hour, func(ctx context.Context) {
		r, ran, err := p.DailyRetention(ctx)
		if ran {
			log.Info("retention run", "tickets", r.Tickets, "coupons", r.Coupons, "customers", r.Customers, "events", r.Events,
				"batches", r.Batches, "took", r.Took.String())
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("retention run failed", "error", err.Error())
		}
	})
}
