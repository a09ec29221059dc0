// Package testclock is the test clocks capability (docs/test-clocks.md):
// creating, reading, listing, advancing and deleting the clocks of an
// account's test environment. What an advance sets off (subscriptions
// ending, passes moving to a new cycle) is the work of the capabilities
// owning those objects: an advance enqueues ticketing.JobTestClockAdvance
// and internal/app handles it. It reaches the database only through
// Queries.
package testclock

import (
	"context"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/ticketing"
)

// Queries are the store methods the test clocks use (store.Q implements
// them; the wiring passes store.NewView[Queries]).
type Queries interface {
	kit.CursorReader
	InsertTestClock(ctx context.Context, c ticketing.TestClock) error
	TestClock(ctx context.Context, accountID string, env account.Environment, id string) (ticketing.TestClock, error)
	TestClocks(ctx context.Context, f ticketing.TestClockFilter) (list.Page[ticketing.TestClock], error)
	LockTestClock(ctx context.Context, id string) error
	SetTestClock(ctx context.Context, id string, frozen time.Time, status string) error
	DeleteTestClock(ctx context.Context, id string, at time.Time) error
	EnqueueJob(ctx context.Context, j jobs.NewJob, at time.Time) error
}

// DB is the database as the test clocks see it (store.View).
type DB = kit.DB[Queries]

// Service holds the test clock use cases.
type Service struct {
	kit.Base[DB]
	notify func()
}

// New returns the test clocks of db; c is the service clock (nil: the
// system clock), ids the id prefix, notify (may be nil) wakes the job
// workers after an advance enqueued its job.
func New(db DB, c clock.Clock, ids ident.Prefix, notify func()) *Service {
	if notify == nil {
		notify = func() {}
	}
	return &Service{Base: kit.NewBase(db, c, ids), notify: notify}
}

// A clock is created at most ClockPastLimit before the service's time
// (events are kept event.Retention by their time, which is the clock's)
// and stands before MaxFrozenTime.
const ClockPastLimit = 24 * time.Hour

// MaxFrozenTime bounds a clock's time (exclusive).
var MaxFrozenTime = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// MaxTestClockName is the longest clock name, in characters.
const MaxTestClockName = 255

// Request is POST /v1/test_clocks.json's body, as sent.
type Request struct {
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
		return time.Time{}, apperr.Validation(op, CodeInvalidFrozenTime, "/frozen_time", "frozen_time is required: an RFC 3339 kit.Timestamp")
	}
	t, err := clock.ParseTimestamp(v)
	if err != nil {
		return t, apperr.Validation(op, CodeInvalidFrozenTime, "/frozen_time", "frozen_time must be an RFC 3339 kit.Timestamp such as 2026-01-31T23:00:00Z")
	}
	if t.Before(min) || !t.Before(MaxFrozenTime) {
		return t, apperr.Validation(op, CodeInvalidFrozenTime, "/frozen_time",
			fmt.Sprintf("frozen_time must lie from %s to before %s", clock.Timestamp(min), clock.Timestamp(MaxFrozenTime)))
	}
	return t.Truncate(time.Second), nil
}

// Create creates a clock standing at the requested time.
func (s *Service) Create(ctx context.Context, claim idempotency.Claim, p account.Principal, req Request) (ticketing.TestClock, error) {
	const op = "app.CreateTestClock"
	if err := testMode(op, p); err != nil {
		return ticketing.TestClock{}, err
	}
	now := s.Clock.Now()
	t, err := frozenTime(op, req.FrozenTime, now.Add(-ClockPastLimit).Truncate(time.Second))
	if err != nil {
		return ticketing.TestClock{}, err
	}
	if n := req.Name; n != nil && (utf8.RuneCountInString(*n) > MaxTestClockName || !utf8.ValidString(*n)) {
		return ticketing.TestClock{}, apperr.Validation(op, CodeInvalidTestClockName, "/name",
			fmt.Sprintf("name must be at most %d characters", MaxTestClockName))
	}
	c := ticketing.TestClock{ID: s.IDs.New("clock"), AccountID: p.AccountID, Environment: p.Environment, Name: req.Name,
		FrozenTime: t, Status: ticketing.TestClockReady, CreatedAt: now}
	return c, s.DB.WriteClaimed(ctx, claim, func(q Queries) error { return q.InsertTestClock(ctx, c) })
}

// Get returns one of the caller's clocks.
func (s *Service) Get(ctx context.Context, p account.Principal, id string) (ticketing.TestClock, error) {
	if err := testMode("app.TestClock", p); err != nil {
		return ticketing.TestClock{}, err
	}
	return s.DB.Read().TestClock(ctx, p.AccountID, p.Environment, id)
}

// List lists the caller's clocks, newest first.
func (s *Service) List(ctx context.Context, p account.Principal, req kit.ListRequest) (kit.ListJSON[TestClockJSON], error) {
	const op = "app.TestClocks"
	if err := testMode(op, p); err != nil {
		return kit.ListJSON[TestClockJSON]{}, err
	}
	var l kit.ListParams
	var f ticketing.TestClockFilter
	return kit.RunList(ctx, s.DB.Read(), p, op, "test_clocks", "test clock", req, &l, &f.Query,
		func(q Queries) (list.Page[ticketing.TestClock], error) { return q.TestClocks(ctx, f) },
		func(c ticketing.TestClock) (TestClockJSON, error) { return Response(c), nil })
}

// Advance moves a clock forward to the requested time: at once
// every object on it sees the new time; the status is advancing until the
// job has run the time-driven work up to it (subscription.ended for the
// clock's subscriptions whose end has passed), then ready. Moving it
// backwards, or to the time it stands at, is a 400 naming frozen_time; a
// clock still advancing is a 409. Nothing is written on a refusal.
func (s *Service) Advance(ctx context.Context, claim idempotency.Claim, p account.Principal, id, to string) (ticketing.TestClock, error) {
	const op = "app.AdvanceTestClock"
	if err := testMode(op, p); err != nil {
		return ticketing.TestClock{}, err
	}
	t, err := frozenTime(op, to, time.Time{})
	if err != nil {
		return ticketing.TestClock{}, err
	}
	var c ticketing.TestClock
	err = s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
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
		return q.EnqueueJob(ctx, jobs.NewJob{Kind: ticketing.JobTestClockAdvance, Payload: ticketing.AdvancePayload(id, from)}, s.Clock.Now())
	})
	if err == nil {
		s.notify()
	}
	return c, err
}

// Delete deletes one of the caller's clocks: it is no longer
// listed, read, advanced or used for new orders; the objects made on it
// stay at its last time.
func (s *Service) Delete(ctx context.Context, claim idempotency.Claim, p account.Principal, id string) (ticketing.TestClock, error) {
	const op = "app.DeleteTestClock"
	if err := testMode(op, p); err != nil {
		return ticketing.TestClock{}, err
	}
	var c ticketing.TestClock
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		if err := q.LockTestClock(ctx, id); err != nil {
			return err
		}
		var err error
		if c, err = q.TestClock(ctx, p.AccountID, p.Environment, id); err != nil {
			return err
		}
		return q.DeleteTestClock(ctx, id, s.Clock.Now())
	})
	return c, err
}

// TestClockJSON is a test clock as the API shows it.
type TestClockJSON struct {
	ID          string        `json:"id"`
	Object      string        `json:"object"`
	Name        *string       `json:"name"`
	FrozenTime  kit.Timestamp `json:"frozen_time"`
	Status      string        `json:"status"`
	Environment string        `json:"environment"`
	Created     kit.Timestamp `json:"created"`
}

// Response is a test clock as the API shows it.
func Response(c ticketing.TestClock) TestClockJSON {
	return TestClockJSON{ID: c.ID, Object: "test_clock", Name: c.Name, FrozenTime: kit.Timestamp(c.FrozenTime), Status: c.Status,
		Environment: string(c.Environment), Created: kit.Timestamp(c.CreatedAt)}
}

// DeletedTestClockJSON answers a deletion.
type DeletedTestClockJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// DeletedResponse is the answer of DELETE …/test_clocks/{id}.json.
func DeletedResponse(c ticketing.TestClock) DeletedTestClockJSON {
	return DeletedTestClockJSON{ID: c.ID, Object: "test_clock", Deleted: true}
}
