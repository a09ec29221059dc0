package testclock_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/testclock"
	"github.com/farebox/farebox/internal/idempotency"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/ticketing"
)

// now is where the service clock of every test here stands.
var now = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// fixture is the test clocks of a fresh database with two accounts: test
// and live are acc_1's principals, other is acc_2's test principal.
type fixture struct {
	ctx               context.Context
	s                 *store.Store
	svc               *testclock.Service
	clk               *clocktest.Fixed
	woken             int
	test, live, other account.Principal
}

func newFixture(t *testing.T, s *store.Store) *fixture {
	t.Helper()
	f := &fixture{ctx: context.Background(), s: s, clk: clocktest.NewFixed(now),
		test:  account.Principal{AccountID: "acc_1", Environment: account.Test},
		live:  account.Principal{AccountID: "acc_1", Environment: account.Live},
		other: account.Principal{AccountID: "acc_2", Environment: account.Test}}
	for _, id := range []string{"acc_1", "acc_2"} {
		if err := s.Write(f.ctx, func(q store.Q) error {
			return q.CreateAccount(f.ctx, account.Account{ID: id, Name: "Ω 東京 عربى", CreatedAt: now})
		}); err != nil {
			t.Fatal(err)
		}
	}
	f.svc = testclock.New(store.NewView[testclock.Queries](s), f.clk, "farebox", func() { f.woken++ })
	return f
}

// create makes a clock of the test principal standing at frozen.
func (f *fixture) create(t *testing.T, frozen string) ticketing.TestClock {
	t.Helper()
	c, err := f.svc.Create(f.ctx, idempotency.Claim{}, f.test, testclock.Request{FrozenTime: frozen})
	if err != nil {
		t.Fatalf("Create(%s): %v", frozen, err)
	}
	return c
}

// TestClockUseCases drives the use cases directly on both engines: a live
// key is refused, a clock is created, listed and advanced (its job is
// enqueued with the span and the workers are woken), a backwards advance
// and one while advancing are refused without a write, another account
// sees nothing, and a deleted clock is gone.
func TestClockUseCases(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		ctx, svc, test, live, other := f.ctx, f.svc, f.test, f.live, f.other

		if _, err := svc.Create(ctx, idempotency.Claim{}, live, testclock.Request{FrozenTime: "2026-07-01T00:00:00Z"}); testtool.Code(err) != testclock.CodeTestClockLiveMode {
			t.Fatalf("live key: %v", err)
		}
		name := "🚆 שעון"
		c, err := svc.Create(ctx, idempotency.Claim{}, test, testclock.Request{FrozenTime: "2026-07-01T00:00:00.9Z", Name: &name})
		if err != nil || c.FrozenTime != time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC) || c.Status != ticketing.TestClockReady || *c.Name != name {
			t.Fatalf("Create = %+v, %v", c, err)
		}
		l, err := svc.List(ctx, test, kit.ListRequest{})
		if err != nil || len(l.Data) != 1 || l.Data[0].ID != c.ID || l.Data[0].Object != "test_clock" {
			t.Fatalf("List = %+v, %v", l, err)
		}
		if l, err := svc.List(ctx, other, kit.ListRequest{}); err != nil || len(l.Data) != 0 {
			t.Fatalf("another account lists %+v, %v", l, err)
		}
		if _, err := svc.Get(ctx, other, c.ID); apperr.KindOf(err) != apperr.NotFound {
			t.Fatalf("another account reads the clock: %v", err)
		}

		if _, err := svc.Advance(ctx, idempotency.Claim{}, test, c.ID, "2026-06-30T00:00:00Z"); testtool.Code(err) != testclock.CodeInvalidFrozenTime {
			t.Fatalf("backwards: %v", err)
		}
		a, err := svc.Advance(ctx, idempotency.Claim{}, test, c.ID, "2026-08-01T00:00:00Z")
		if err != nil || a.Status != ticketing.TestClockAdvancing || f.woken != 1 {
			t.Fatalf("Advance = %+v, %v (woken %d)", a, err, f.woken)
		}
		js, err := s.Read().Jobs(ctx, ticketing.JobTestClockAdvance)
		if err != nil || len(js) != 1 {
			t.Fatalf("jobs = %+v, %v", js, err)
		}
		if id, from := ticketing.ParseAdvancePayload(js[0].Payload); id != c.ID || !from.Equal(c.FrozenTime) {
			t.Errorf("payload %q: clock %s from %s", js[0].Payload, id, from)
		}
		if _, err := svc.Advance(ctx, idempotency.Claim{}, test, c.ID, "2026-09-01T00:00:00Z"); testtool.Code(err) != testclock.CodeTestClockAdvancing {
			t.Fatalf("while advancing: %v", err)
		}
		if got, err := svc.Get(ctx, test, c.ID); err != nil || !got.FrozenTime.Equal(a.FrozenTime) {
			t.Fatalf("a refused advance wrote: %+v, %v", got, err)
		}

		if _, err := svc.Delete(ctx, idempotency.Claim{}, test, c.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Get(ctx, test, c.ID); apperr.KindOf(err) != apperr.NotFound {
			t.Fatalf("deleted clock: %v", err)
		}
	})
}

// TestCreateClockLimits is Create at the edges of what it accepts: the
// frozen time from exactly ClockPastLimit before the service's time
// (truncated to the second) to before MaxFrozenTime, in any offset, and a
// name of up to MaxTestClockName characters in any script. A refusal
// names its field and writes nothing.
func TestCreateClockLimits(t *testing.T) {
	long := strings.Repeat("ع", 100) + strings.Repeat("ש", 100) + strings.Repeat("東", 54) + "🚆" // 255 characters
	tooLong := long + "x"
	invalid := "clock \xff"
	empty := ""
	for _, c := range []struct {
		name       string
		frozen     string
		clockName  *string
		wantFrozen time.Time // zero: refused
		wantCode   string
	}{
		{"a day back to the second", "2026-06-14T10:00:00Z", nil, now.Add(-testclock.ClockPastLimit), ""},
		{"a day back, the fraction cut", "2026-06-14T10:00:00.999999999Z", nil, now.Add(-testclock.ClockPastLimit), ""},
		{"a second more than a day back", "2026-06-14T09:59:59Z", nil, time.Time{}, testclock.CodeInvalidFrozenTime},
		{"a day back in another offset", "2026-06-14T12:00:00+02:00", nil, now.Add(-testclock.ClockPastLimit), ""},
		{"the last second allowed", "2099-12-31T23:59:59Z", nil, testclock.MaxFrozenTime.Add(-time.Second), ""},
		{"the last instant allowed", "2099-12-31T23:59:59.999999999Z", nil, testclock.MaxFrozenTime.Add(-time.Second), ""},
		{"the bound itself", "2100-01-01T00:00:00Z", nil, time.Time{}, testclock.CodeInvalidFrozenTime},
		{"the bound in an offset east", "2100-01-01T01:00:00+01:00", nil, time.Time{}, testclock.CodeInvalidFrozenTime},
		{"a date only", "2026-07-01", nil, time.Time{}, testclock.CodeInvalidFrozenTime},
		{"unix seconds", "1782864000", nil, time.Time{}, testclock.CodeInvalidFrozenTime},
		{"no time", "", nil, time.Time{}, testclock.CodeInvalidFrozenTime},
		{"a leap day", "2028-02-29T23:59:59Z", nil, time.Date(2028, 2, 29, 23, 59, 59, 0, time.UTC), ""},
		{"a name of the largest length", "2026-07-01T00:00:00Z", &long, time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), ""},
		{"an empty name", "2026-07-01T00:00:00Z", &empty, time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), ""},
		{"a name one character too long", "2026-07-01T00:00:00Z", &tooLong, time.Time{}, testclock.CodeInvalidTestClockName},
		{"a name not UTF-8", "2026-07-01T00:00:00Z", &invalid, time.Time{}, testclock.CodeInvalidTestClockName},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, e := range storetest.Engines {
				t.Run(string(e), func(t *testing.T) {
					t.Parallel()
					f := newFixture(t, storetest.Open(t, e))
					got, err := f.svc.Create(f.ctx, idempotency.Claim{}, f.test, testclock.Request{FrozenTime: c.frozen, Name: c.clockName})
					if c.wantCode != "" {
						if e := apperr.As(err); e == nil || e.Kind != apperr.Invalid && e.Kind != apperr.Unprocessable || e.Code != c.wantCode || len(e.Details) != 1 {
							t.Fatalf("Create = %+v, %v; want %s", got, err, c.wantCode)
						}
						if l, err := f.svc.List(f.ctx, f.test, kit.ListRequest{}); err != nil || len(l.Data) != 0 {
							t.Fatalf("a refused create wrote %+v, %v", l, err)
						}
						return
					}
					if err != nil || !got.FrozenTime.Equal(c.wantFrozen) {
						t.Fatalf("Create = %+v, %v; want frozen at %s", got, err, c.wantFrozen)
					}
					read, err := f.svc.Get(f.ctx, f.test, got.ID)
					if err != nil || !read.FrozenTime.Equal(c.wantFrozen) || (c.clockName == nil) != (read.Name == nil) || c.clockName != nil && *read.Name != *c.clockName {
						t.Fatalf("Get = %+v, %v", read, err)
					}
				})
			}
		})
	}
}

// TestClockRefusals: a live key is refused by every use case before it
// reads anything, and another account's, an unknown or a deleted clock is
// not found by any, on both engines; nothing is written.
func TestClockRefusals(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.create(t, "2026-07-01T00:00:00Z")
		gone := f.create(t, "2026-07-01T00:00:00Z")
		if _, err := f.svc.Delete(f.ctx, idempotency.Claim{}, f.test, gone.ID); err != nil {
			t.Fatal(err)
		}
		uses := map[string]func(p account.Principal, id string) error{
			"get": func(p account.Principal, id string) error { _, err := f.svc.Get(f.ctx, p, id); return err },
			"advance": func(p account.Principal, id string) error {
				_, err := f.svc.Advance(f.ctx, idempotency.Claim{}, p, id, "2026-08-01T00:00:00Z")
				return err
			},
			"delete": func(p account.Principal, id string) error {
				_, err := f.svc.Delete(f.ctx, idempotency.Claim{}, p, id)
				return err
			},
			"list": func(p account.Principal, _ string) error {
				_, err := f.svc.List(f.ctx, p, kit.ListRequest{})
				return err
			},
		}
		for name, use := range uses {
			if e := apperr.As(use(f.live, c.ID)); e == nil || e.Kind != apperr.Forbidden || e.Code != testclock.CodeTestClockLiveMode {
				t.Errorf("%s with a live key: %v", name, e)
			}
			if name == "list" {
				continue
			}
			for _, id := range []string{gone.ID, "clock_unknown", ""} {
				if err := use(f.test, id); apperr.KindOf(err) != apperr.NotFound {
					t.Errorf("%s of %q: %v", name, id, err)
				}
			}
			if err := use(f.other, c.ID); apperr.KindOf(err) != apperr.NotFound {
				t.Errorf("%s of another account's clock: %v", name, err)
			}
		}
		got, err := f.svc.Get(f.ctx, f.test, c.ID)
		if err != nil || !got.FrozenTime.Equal(c.FrozenTime) || got.Status != ticketing.TestClockReady || f.woken != 0 {
			t.Fatalf("after the refusals: %+v, %v (woken %d)", got, err, f.woken)
		}
		if js, err := s.Read().Jobs(f.ctx, ticketing.JobTestClockAdvance); err != nil || len(js) != 0 {
			t.Fatalf("refusals enqueued %+v, %v", js, err)
		}
	})
}

// TestAdvanceEdges: a clock moves forward by as little as a second (a
// fraction is cut, so half a second is not forward) and up to the last
// second before MaxFrozenTime, never to it; each advance enqueues one job
// naming the time it left, and the next is accepted once the job has set
// the clock ready again.
func TestAdvanceEdges(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.create(t, "2026-07-01T00:00:00Z")
		ready := func() {
			t.Helper()
			if err := s.Write(f.ctx, func(q store.Q) error { return q.SetTestClockStatus(f.ctx, c.ID, ticketing.TestClockReady) }); err != nil {
				t.Fatal(err)
			}
		}
		steps := []struct {
			to, want string // want "": refused with invalid_frozen_time
		}{
			{"2026-07-01T00:00:00Z", ""},
			{"2026-07-01T00:00:00.5Z", ""},
			{"2026-06-30T23:59:59Z", ""},
			{"2026-07-01T00:00:01Z", "2026-07-01T00:00:01Z"},
			{"2026-07-01T02:00:02+02:00", "2026-07-01T00:00:02Z"},
			{"2100-01-01T00:00:00Z", ""},
			{"2099-12-31T23:59:59.999Z", "2099-12-31T23:59:59Z"},
			{"2100-01-01T00:00:01Z", ""},
		}
		from := c.FrozenTime
		jobs := 0
		for _, st := range steps {
			got, err := f.svc.Advance(f.ctx, idempotency.Claim{}, f.test, c.ID, st.to)
			if st.want == "" {
				if testtool.Code(err) != testclock.CodeInvalidFrozenTime {
					t.Fatalf("advance to %s: %+v, %v", st.to, got, err)
				}
				continue
			}
			want, _ := time.Parse(time.RFC3339, st.want)
			if err != nil || !got.FrozenTime.Equal(want) || got.Status != ticketing.TestClockAdvancing {
				t.Fatalf("advance to %s: %+v, %v", st.to, got, err)
			}
			jobs++
			js, err := s.Read().Jobs(f.ctx, ticketing.JobTestClockAdvance)
			if err != nil || len(js) != jobs {
				t.Fatalf("after advancing to %s: jobs %+v, %v", st.to, js, err)
			}
			if id, left := ticketing.ParseAdvancePayload(js[len(js)-1].Payload); id != c.ID || !left.Equal(from) {
				t.Errorf("advance to %s: job of clock %s from %s, want from %s", st.to, id, left, from)
			}
			from = want
			ready()
		}
		if f.woken != jobs {
			t.Errorf("woken %d times for %d advances", f.woken, jobs)
		}
	})
}

// TestAdvanceTwins: two advances of one clock at once (the same request
// sent twice, or two different ones): exactly one wins, the other finds
// the clock advancing and writes nothing, so one job is enqueued.
func TestAdvanceTwins(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.create(t, "2026-07-01T00:00:00Z")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, to := range []string{"2026-08-01T00:00:00Z", "2026-09-01T00:00:00Z"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = f.svc.Advance(f.ctx, idempotency.Claim{}, f.test, c.ID, to)
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case testtool.Code(err) != testclock.CodeTestClockAdvancing || apperr.KindOf(err) != apperr.Conflict:
				t.Errorf("the losing twin: %v", err)
			}
		}
		js, err := s.Read().Jobs(f.ctx, ticketing.JobTestClockAdvance)
		if won != 1 || err != nil || len(js) != 1 {
			t.Fatalf("%d twins won, jobs %+v, %v", won, js, err)
		}
		got, err := f.svc.Get(f.ctx, f.test, c.ID)
		if id, from := ticketing.ParseAdvancePayload(js[0].Payload); err != nil || id != c.ID || !from.Equal(c.FrozenTime) || got.Status != ticketing.TestClockAdvancing {
			t.Errorf("clock %+v (%v), job %q", got, err, js[0].Payload)
		}
	})
}

// TestListClocksPaged: the clocks are listed newest first, a page at a
// time, without the deleted ones.
func TestListClocksPaged(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var ids []string
		for i := 0; i < 4; i++ {
			ids = append(ids, f.create(t, "2026-07-01T00:00:00Z").ID)
			f.clk.Advance(time.Second)
		}
		if _, err := f.svc.Delete(f.ctx, idempotency.Claim{}, f.test, ids[1]); err != nil {
			t.Fatal(err)
		}
		first, err := f.svc.List(f.ctx, f.test, kit.ListRequest{Limit: "2"})
		if err != nil || len(first.Data) != 2 || !first.HasMore || first.Data[0].ID != ids[3] || first.Data[1].ID != ids[2] {
			t.Fatalf("first page %+v, %v", first, err)
		}
		rest, err := f.svc.List(f.ctx, f.test, kit.ListRequest{Limit: "2", StartingAfter: ids[2]})
		if err != nil || len(rest.Data) != 1 || rest.HasMore || rest.Data[0].ID != ids[0] {
			t.Fatalf("second page %+v, %v", rest, err)
		}
		if _, err := f.svc.List(f.ctx, f.test, kit.ListRequest{Limit: "101"}); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("limit 101: %v", err)
		}
	})
}
