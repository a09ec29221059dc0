package testclock_test

import (
	"context"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/app/testclock"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
)

// TestClockUseCases drives the use cases directly on both engines: a live
// key is refused, a clock is created, listed and advanced (its job is
// enqueued with the span and the workers are woken), a backwards advance
// and one while advancing are refused without a write, another account
// sees nothing, and a deleted clock is gone.
func TestClockUseCases(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
		for _, id := range []string{"acc_1", "acc_2"} {
			if err := s.Write(ctx, func(q store.Q) error {
				return q.CreateAccount(ctx, account.Account{ID: id, Name: "Ω 東京 عربى", CreatedAt: now})
			}); err != nil {
				t.Fatal(err)
			}
		}
		woken := 0
		svc := testclock.New(store.NewView[testclock.Queries](s), clocktest.NewFixed(now), "farebox", func() { woken++ })
		test := account.Principal{AccountID: "acc_1", Environment: account.Test}
		live := account.Principal{AccountID: "acc_1", Environment: account.Live}
		other := account.Principal{AccountID: "acc_2", Environment: account.Test}
		code := func(err error) string {
			if e := apperr.As(err); e != nil {
				return e.Code
			}
			return ""
		}

		if _, err := svc.Create(ctx, live, testclock.Request{FrozenTime: "2026-07-01T00:00:00Z"}); code(err) != testclock.CodeTestClockLiveMode {
			t.Fatalf("live key: %v", err)
		}
		name := "🚆 שעון"
		c, err := svc.Create(ctx, test, testclock.Request{FrozenTime: "2026-07-01T00:00:00.9Z", Name: &name})
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

		if _, err := svc.Advance(ctx, test, c.ID, "2026-06-30T00:00:00Z"); code(err) != testclock.CodeInvalidFrozenTime {
			t.Fatalf("backwards: %v", err)
		}
		a, err := svc.Advance(ctx, test, c.ID, "2026-08-01T00:00:00Z")
		if err != nil || a.Status != ticketing.TestClockAdvancing || woken != 1 {
			t.Fatalf("Advance = %+v, %v (woken %d)", a, err, woken)
		}
		js, err := s.Read().Jobs(ctx, ticketing.JobTestClockAdvance)
		if err != nil || len(js) != 1 {
			t.Fatalf("jobs = %+v, %v", js, err)
		}
		if id, from := ticketing.ParseAdvancePayload(js[0].Payload); id != c.ID || !from.Equal(c.FrozenTime) {
			t.Errorf("payload %q: clock %s from %s", js[0].Payload, id, from)
		}
		if _, err := svc.Advance(ctx, test, c.ID, "2026-09-01T00:00:00Z"); code(err) != testclock.CodeTestClockAdvancing {
			t.Fatalf("while advancing: %v", err)
		}
		if got, err := svc.Get(ctx, test, c.ID); err != nil || !got.FrozenTime.Equal(a.FrozenTime) {
			t.Fatalf("a refused advance wrote: %+v, %v", got, err)
		}

		if _, err := svc.Delete(ctx, test, c.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Get(ctx, test, c.ID); apperr.KindOf(err) != apperr.NotFound {
			t.Fatalf("deleted clock: %v", err)
		}
	})
}
