package privacy

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/retention"
)

// DefaultBatch is how many rows one retention transaction changes: small,
// so that on SQLite (one writer) a request waits at most one short batch
// (docs/privacy.md has the measurements).
const DefaultBatch = 500

// DefaultYield: after each full batch the job pauses as long as the batch
// took (docs/privacy.md has the measurements with and without).
const DefaultYield = 1.0

// Interval is how often the retention job runs (by one instance).
const Interval = 24 * time.Hour

// Report is what a retention run did (or, dry, would do).
type Report struct {
	DryRun bool
	// IdentificationCutoff: tickets whose validity ended before it lose
	// their identification data.
	IdentificationCutoff time.Time
	Due                  retention.Due // counted before the run
	Tickets, Coupons     int64         // erased by the run
	Customers, Events    int64
	Batches              int
	Took                 time.Duration
}

// RunRetention applies the retention classes (docs/privacy.md): the
// identification data of tickets whose validity ended more than the
// identification period ago, the tariff settings of their coupons, the
// recipient data of customers whose restriction ended, and the personal
// data in the oldest kept events. Each batch is its own short write
// transaction of at most the batch's rows. Issued documents are never
// touched. With dryRun it only counts.
func (s *Service) RunRetention(ctx context.Context, dryRun bool) (Report, error) {
	start := time.Now()
	now := s.Clock.Now()
	cut := s.policy.IdentificationCutoff(now)
	r := Report{DryRun: dryRun, IdentificationCutoff: cut}
	due, err := s.DB.Read().RetentionDue(ctx, cut, now, s.policy.BillingCutoff(now, s.loc))
	if err != nil {
		return r, err
	}
	r.Due = due
	if dryRun {
		r.Took = time.Since(start)
		return r, nil
	}
	n := s.batch
	var cur retention.TicketCursor
	if err := s.batches(ctx, &r, &r.Tickets, func(q Queries) (int64, error) {
		k, next, err := q.EraseExpiredTickets(ctx, cut, cur, n)
		cur = next
		return int64(k), err
	}); err != nil {
		return r, err
	}
	if err := s.batches(ctx, &r, &r.Coupons, func(q Queries) (int64, error) { return q.EraseExpiredCouponSettings(ctx, cut, n) }); err != nil {
		return r, err
	}
	if err := s.batches(ctx, &r, &r.Customers, func(q Queries) (int64, error) { return q.EraseRestrictedCustomers(ctx, now, n) }); err != nil {
		return r, err
	}
	ev, err := s.redactOldEvents(ctx, cut)
	r.Events = ev
	r.Took = time.Since(start)
	return r, err
}

// batches runs step in write transactions until one changes fewer rows
// than a batch, adding the count to *total.
func (s *Service) batches(ctx context.Context, r *Report, total *int64, step func(q Queries) (int64, error)) error {
	for {
		var k int64
		t0 := time.Now()
		if err := s.DB.Write(ctx, func(q Queries) error {
			var err error
			k, err = step(q)
			return err
		}); err != nil {
			return err
		}
		*total += k
		r.Batches++
		if k < int64(s.batch) {
			return nil
		}
		if err := s.yieldWriter(ctx, t0); err != nil {
			return err
		}
	}
}

// yieldWriter pauses after a full batch that started at t0 for as long as
// the batch took (Options.Yield times), so the job holds the database's
// writer (SQLite has one) at most about half the time and requests'
// transactions get in between its batches.
func (s *Service) yieldWriter(ctx context.Context, t0 time.Time) error {
	if s.yield <= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(float64(time.Since(t0)) * s.yield))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// redactOldEvents redacts (retention.RedactObject) the objects of events
// created before cut. Events are pruned after event.Retention (shorter
// than any identification period), so only an account's newest event,
// kept for numbering, can be that old: the oldest event of each stream is
// looked at.
func (s *Service) redactOldEvents(ctx context.Context, cut time.Time) (int64, error) {
	streams, err := s.DB.Read().EventStreams(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, st := range streams {
		env := account.Environment(st[1])
		seq, at, obj, ok, err := s.DB.Read().OldestEvent(ctx, st[0], env)
		if err != nil {
			return n, err
		}
		if !ok || !at.Before(cut) {
			continue
		}
		red, changed := retention.RedactObject([]byte(obj))
		if !changed {
			continue
		}
		if err := s.DB.Write(ctx, func(q Queries) error { return q.SetEventObject(ctx, st[0], env, seq, string(red)) }); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// DailyRetention runs the retention job when no instance ran it in the
// last Interval; ran is false when it was not due here.
func (s *Service) DailyRetention(ctx context.Context) (r Report, ran bool, err error) {
	now := s.Clock.Now()
	err = s.DB.Write(ctx, func(q Queries) error {
		var err error
		ran, err = q.ClaimRetentionRun(ctx, now, Interval)
		return err
	})
	if err != nil || !ran {
		return r, false, err
	}
	r, err = s.RunRetention(ctx, false)
	if err != nil {
		return r, true, err
	}
	return r, true, s.DB.Write(ctx, func(q Queries) error { return q.FinishRetentionRun(ctx, s.Clock.Now()) })
}
