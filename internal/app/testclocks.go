package app

import (
	"context"
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// The time of test clocks (docs/test-clocks.md); the clocks' own use cases
// are package testclock. A clock of an account's test
// environment stands at a frozen time; an order created on it
// (test_clock in the order request) and everything made from the order
// (coupons, subscriptions, billable items, tickets, invoices of its
// items, events) carry the clock's id and live at its time. timeOf is the
// one place the time of an object is resolved: every use case asks it
// with the object's TestClockID instead of asking the service clock.
// Advancing moves the clock and runs the time-driven work of its objects
// up to the new time through the job queue (JobTestClockAdvance).

// JobTestClockAdvance is the job kind that runs a clock's time-driven work
// after an advance (ticketing.JobTestClockAdvance; advanceJob handles it).
const JobTestClockAdvance = ticketing.JobTestClockAdvance

// timeOf is the current time of an object bound to clockID: the service
// clock's for nil, the test clock's frozen time otherwise (read through q,
// so inside a transaction it is the time the transaction sees).
func (a *App) timeOf(ctx context.Context, q store.Q, clockID *string) (time.Time, error) {
	return kit.TimeOf(ctx, q, a.clock, clockID)
}

// advanceJob is the JobTestClockAdvance handler: the clock's time-driven
// work up to its time, then status ready. A retry after a crash redoes
// only what is not done (each subscription ends once).
func (a *App) advanceJob(ctx context.Context, j jobs.Job) error {
	id, from := ticketing.ParseAdvancePayload(j.Payload)
	t, err := a.store.Read().TestClockTime(ctx, id)
	if err != nil {
		return err
	}
	if _, err := a.endSubscriptions(ctx, id, t); err != nil {
		return err
	}
	err = a.store.Write(ctx, func(q store.Q) error {
		if err := a.clockPassUpdates(ctx, q, id, from, t); err != nil {
			return err
		}
		return q.SetTestClockStatus(ctx, id, ticketing.TestClockReady)
	})
	if err == nil {
		a.notifyJobs()
	}
	return err
}

// clockPassUpdates is the wallet work of an advance from from to to: the
// pass of every coupon on the clock whose next cycle started on the way
// moves to it, as a cycle's start moves it in real time (passes.Changed
// due now: the Apple update job, pushed to the pass's devices). A retry
// enqueues them again (a device asks once more and finds nothing new).
func (a *App) clockPassUpdates(ctx context.Context, q store.Q, clockID string, from, to time.Time) error {
	ids, err := q.ClockTicketsStarted(ctx, clockID, from, to)
	if err != nil {
		return err
	}
	svc := a.clock.Now()
	for _, id := range ids {
		n, err := q.CountApplePasses(ctx, id)
		if err != nil {
			return err
		}
		if n == 0 {
			continue
		}
		if err := q.EnqueueJob(ctx, jobs.NewJob{Kind: passes.JobApplePassUpdate, Payload: id, MaxAttempts: passes.UpdateAttempts}, svc); err != nil {
			return err
		}
	}
	return nil
}

// orderClock resolves the test_clock of an order request: nil without
// one, else the clock, which must be one of the caller's test clocks.
func (a *App) orderClock(ctx context.Context, p account.Principal, id *string) (*ticketing.TestClock, error) {
	const op = "app.PlaceOrder"
	if id == nil {
		return nil, nil
	}
	if p.Environment != account.Test {
		return nil, apperr.Validation(op, CodeInvalidTestClock, "/test_clock", "test_clock: test clocks exist only in the test environment")
	}
	c, err := a.store.Read().TestClock(ctx, p.AccountID, p.Environment, *id)
	if apperr.KindOf(err) == apperr.NotFound {
		return nil, apperr.Validation(op, CodeInvalidTestClock, "/test_clock", fmt.Sprintf("test_clock: no test clock %q in this account", *id))
	}
	return &c, err
}
