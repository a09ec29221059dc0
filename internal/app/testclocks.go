package app

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// Test clocks (docs/test-clocks.md). A clock of an account's test
// environment stands at a frozen time; an order created on it
// (test_clock in the order request) and everything made from the order
// (coupons, subscriptions, billable items, tickets, invoices of its
// items, events) carry the clock's id and live at its time. timeOf is the
// one place the time of an object is resolved: every use case asks it
// with the object's TestClockID instead of asking the service clock.
// Advancing moves the clock and runs the time-driven work of its objects
// up to the new time through the job queue (JobTestClockAdvance).

// JobTestClockAdvance is the job kind that runs a clock's time-driven work
// after an advance; its payload is the clock id.
const JobTestClockAdvance = "test_clock.advance"

// A clock is created at most ClockPastLimit before the service's time
// (events are kept event.Retention by their time, which is the clock's)
// and stands before MaxFrozenTime.
const ClockPastLimit = 24 * time.Hour

// MaxFrozenTime bounds a clock's time (exclusive).
var MaxFrozenTime = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// MaxTestClockName is the longest clock name, in characters.
const MaxTestClockName = 255

// timeOf is the current time of an object bound to clockID: the service
// clock's for nil, the test clock's frozen time otherwise (read through q,
// so inside a transaction it is the time the transaction sees).
func (a *App) timeOf(ctx context.Context, q store.Q, clockID *string) (time.Time, error) {
	if clockID == nil {
		return a.clock.Now(), nil
	}
	return q.TestClockTime(ctx, *clockID)
}

// TestClockRequest is POST /v1/test_clocks.json's body, as sent.
type TestClockRequest struct {
	FrozenTime string
	Name       *string
}

// testMode refuses a live key: clocks exist only in the test environment.
func testMode(op string, p account.Principal) error {
	if p.Environment != account.Test {
		return apperr.E(op, apperr.Forbidden, CodeTestClockLiveMode,
			"test clocks exist only in the test environment: use a test key")
	}
	return nil
}

// frozenTime parses the frozen_time of a request; min is the earliest
// time allowed.
func frozenTime(op, v string, min time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, apperr.Validation(op, CodeInvalidFrozenTime, "/frozen_time", "frozen_time is required: an RFC 3339 timestamp")
	}
	t, err := clock.ParseTimestamp(v)
	if err != nil {
		return t, apperr.Validation(op, CodeInvalidFrozenTime, "/frozen_time", "frozen_time must be an RFC 3339 timestamp such as 2026-01-31T23:00:00Z")
	}
	if t.Before(min) || !t.Before(MaxFrozenTime) {
		return t, apperr.Validation(op, CodeInvalidFrozenTime, "/frozen_time",
			fmt.Sprintf("frozen_time must lie from %s to before %s", clock.Timestamp(min), clock.Timestamp(MaxFrozenTime)))
	}
	return t.Truncate(time.Second), nil
}

// CreateTestClock creates a clock standing at the requested time.
func (a *App) CreateTestClock(ctx context.Context, p account.Principal, req TestClockRequest) (ticketing.TestClock, error) {
	const op = "app.CreateTestClock"
	if err := testMode(op, p); err != nil {
		return ticketing.TestClock{}, err
	}
	now := a.clock.Now()
	t, err := frozenTime(op, req.FrozenTime, now.Add(-ClockPastLimit).Truncate(time.Second))
	if err != nil {
		return ticketing.TestClock{}, err
	}
	if n := req.Name; n != nil && (utf8.RuneCountInString(*n) > MaxTestClockName || !utf8.ValidString(*n)) {
		return ticketing.TestClock{}, apperr.Validation(op, CodeInvalidTestClockName, "/name",
			fmt.Sprintf("name must be at most %d characters", MaxTestClockName))
	}
	c := ticketing.TestClock{ID: a.IDs.New("clock"), AccountID: p.AccountID, Environment: p.Environment, Name: req.Name,
		FrozenTime: t, Status: ticketing.TestClockReady, CreatedAt: now}
	return c, a.store.Write(ctx, func(q store.Q) error { return q.InsertTestClock(ctx, c) })
}

// TestClock returns one of the caller's clocks.
func (a *App) TestClock(ctx context.Context, p account.Principal, id string) (ticketing.TestClock, error) {
	if err := testMode("app.TestClock", p); err != nil {
		return ticketing.TestClock{}, err
	}
	return a.store.Read().TestClock(ctx, p.AccountID, p.Environment, id)
}

// TestClocks lists the caller's clocks, newest first.
func (a *App) TestClocks(ctx context.Context, p account.Principal, req ListRequest) (ListJSON[TestClockJSON], error) {
	const op = "app.TestClocks"
	if err := testMode(op, p); err != nil {
		return ListJSON[TestClockJSON]{}, err
	}
	var l listParams
	var f ticketing.TestClockFilter
	return runList(ctx, a, p, op, "test_clocks", "test clock", req, &l, &f.Query,
		func(q store.Q) (list.Page[ticketing.TestClock], error) { return q.TestClocks(ctx, f) },
		func(c ticketing.TestClock) (TestClockJSON, error) { return TestClockResponse(c), nil })
}

// AdvanceTestClock moves a clock forward to the requested time: at once
// every object on it sees the new time; the status is advancing until the
// job has run the time-driven work up to it (subscription.ended for the
// clock's subscriptions whose end has passed), then ready. Moving it
// backwards, or to the time it stands at, is a 400 naming frozen_time; a
// clock still advancing is a 409. Nothing is written on a refusal.
func (a *App) AdvanceTestClock(ctx context.Context, p account.Principal, id, to string) (ticketing.TestClock, error) {
	const op = "app.AdvanceTestClock"
	if err := testMode(op, p); err != nil {
		return ticketing.TestClock{}, err
	}
	t, err := frozenTime(op, to, time.Time{})
	if err != nil {
		return ticketing.TestClock{}, err
	}
	var c ticketing.TestClock
	err = a.store.Write(ctx, func(q store.Q) error {
		if err := q.LockTestClock(ctx, id); err != nil {
			return err
		}
		var err error
		if c, err = q.TestClock(ctx, p.AccountID, p.Environment, id); err != nil {
			return err
		}
		if c.Status == ticketing.TestClockAdvancing {
			return apperr.E(op, apperr.Conflict, CodeTestClockAdvancing, "the clock is still advancing; retry when its status is ready")
		}
		if !t.After(c.FrozenTime) {
			return apperr.Validation(op, CodeInvalidFrozenTime, "/frozen_time",
				fmt.Sprintf("frozen_time must be after the clock's time %s: a clock only moves forward", clock.Timestamp(c.FrozenTime)))
		}
		from := c.FrozenTime
		c.FrozenTime, c.Status = t, ticketing.TestClockAdvancing
		if err := q.SetTestClock(ctx, id, t, c.Status); err != nil {
			return err
		}
		return q.EnqueueJob(ctx, jobs.NewJob{Kind: JobTestClockAdvance, Payload: advancePayload(id, from)}, a.clock.Now())
	})
	if err == nil && a.Jobs != nil {
		a.Jobs.Notify()
	}
	return c, err
}

// DeleteTestClock deletes one of the caller's clocks: it is no longer
// listed, read, advanced or used for new orders; the objects made on it
// stay at its last time.
func (a *App) DeleteTestClock(ctx context.Context, p account.Principal, id string) (ticketing.TestClock, error) {
	const op = "app.DeleteTestClock"
	if err := testMode(op, p); err != nil {
		return ticketing.TestClock{}, err
	}
	var c ticketing.TestClock
	err := a.store.Write(ctx, func(q store.Q) error {
		if err := q.LockTestClock(ctx, id); err != nil {
			return err
		}
		var err error
		if c, err = q.TestClock(ctx, p.AccountID, p.Environment, id); err != nil {
			return err
		}
		return q.DeleteTestClock(ctx, id, a.clock.Now())
	})
	return c, err
}

// advanceJob is the JobTestClockAdvance handler: the clock's time-driven
// work up to its time, then status ready. A retry after a crash redoes
// only what is not done (each subscription ends once).
func (a *App) advanceJob(ctx context.Context, j jobs.Job) error {
	id, from := parseAdvancePayload(j.Payload)
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
// moves to it, as a cycle's start moves it in real time (passesChanged
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
		if err := q.EnqueueJob(ctx, jobs.NewJob{Kind: JobApplePassUpdate, Payload: id, MaxAttempts: passUpdateAttempts}, svc); err != nil {
			return err
		}
	}
	return nil
}

// advancePayload is the JobTestClockAdvance payload: the clock's id and
// the time it was advanced from (the start of the advance's span).
func advancePayload(id string, from time.Time) string {
	return id + " " + from.UTC().Format(time.RFC3339Nano)
}

// parseAdvancePayload reads advancePayload; a payload of only the id (a
// job queued before the span was recorded) spans everything before the
// clock's time.
func parseAdvancePayload(p string) (id string, from time.Time) {
	id, ts, ok := strings.Cut(p, " ")
	if ok {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			return id, t
		}
	}
	return id, time.Time{}
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

// TestClockJSON is a test clock as the API shows it.
type TestClockJSON struct {
	ID          string    `json:"id"`
	Object      string    `json:"object"`
	Name        *string   `json:"name"`
	FrozenTime  timestamp `json:"frozen_time"`
	Status      string    `json:"status"`
	Environment string    `json:"environment"`
	Created     timestamp `json:"created"`
}

// TestClockResponse is a test clock.
func TestClockResponse(c ticketing.TestClock) TestClockJSON {
	return TestClockJSON{ID: c.ID, Object: "test_clock", Name: c.Name, FrozenTime: timestamp(c.FrozenTime), Status: c.Status,
		Environment: string(c.Environment), Created: timestamp(c.CreatedAt)}
}

// DeletedTestClockJSON answers a deletion.
type DeletedTestClockJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// DeletedTestClockResponse is the answer of DELETE …/test_clocks/{id}.json.
func DeletedTestClockResponse(c ticketing.TestClock) DeletedTestClockJSON {
	return DeletedTestClockJSON{ID: c.ID, Object: "test_clock", Deleted: true}
}
