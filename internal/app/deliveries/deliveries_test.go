package deliveries_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/deliveries"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/webhook"
)

// TestFanOut: in the caller's transaction, each event gets a delivery to
// every enabled endpoint of its account and environment that wants its
// type; the first of an object's deliveries to an endpoint is enqueued at
// once (payload "<delivery> 1"), the next waits behind it; the workers are
// woken after the commit, and a rolled-back change leaves no delivery, no
// job and wakes nobody.
func TestFanOut(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
		storetest.Accounts(t, s, now, "acc_1")
		dl := deliveries.New(clocktest.NewFixed(now), "farebox")
		woken := 0
		dl.WakeWith(func() { woken++ })
		ep := func(id string, types []string, disabled bool) webhook.Endpoint {
			e := webhook.Endpoint{ID: id, AccountID: "acc_1", Environment: account.Test, URL: "http://127.0.0.1/" + id,
				EventTypes: types, Secret: webhook.NewSecret(), CreatedAt: now, UpdatedAt: now}
			if disabled {
				e.DisabledAt, e.DisabledReason = &now, "disabled by the account"
			}
			return e
		}
		if err := s.Write(ctx, func(q store.Q) error {
			for _, e := range []webhook.Endpoint{ep("wh_all", []string{"*"}, false), ep("wh_orders", []string{"order.created"}, false),
				ep("wh_off", []string{"*"}, true)} {
				if err := q.InsertEndpoint(ctx, e); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		evs := []event.Event{
			{ID: "ev_1", AccountID: "acc_1", Environment: account.Test, Type: event.OrderCreated, ObjectID: "order_1"},
			{ID: "ev_2", AccountID: "acc_1", Environment: account.Test, Type: event.CouponActivated, ObjectID: "coupon_1"},
			{ID: "ev_3", AccountID: "acc_1", Environment: account.Test, Type: event.CouponRestored, ObjectID: "coupon_1"},
		}
		for i := range evs {
			evs[i].APIVersion, evs[i].CreatedAt, evs[i].Object = event.APIVersion, now, []byte(`{}`)
		}
		fanOut := func(fail error) error {
			return s.Write(ctx, func(q store.Q) error {
				hooks, err := q.InsertEvents(ctx, evs)
				if err != nil || !hooks {
					return errors.Join(err, errors.New("the insert found no enabled endpoint"))
				}
				if err := dl.FanOut(ctx, q, "acc_1", account.Test, evs); err != nil {
					return err
				}
				return fail
			})
		}
		refused := errors.New("refused by the test")
		if err := fanOut(refused); !errors.Is(err, refused) {
			t.Fatal(err)
		}
		if js, err := s.Read().Jobs(ctx, deliveries.JobDeliver); err != nil || len(js) != 0 || woken != 0 {
			t.Fatalf("after a rollback: %d jobs, woken %d, %v", len(js), woken, err)
		}
		if err := fanOut(nil); err != nil {
			t.Fatal(err)
		}
		if woken != 1 {
			t.Errorf("woken %d times after the commit, want 1", woken)
		}
		js, err := s.Read().Jobs(ctx, deliveries.JobDeliver)
		if err != nil {
			t.Fatal(err)
		}
		// ev_1 to both enabled endpoints, ev_2 to wh_all; ev_3 waits behind ev_2.
		if len(js) != 3 {
			t.Fatalf("%d jobs, want 3: %+v", len(js), js)
		}
		for _, j := range js {
			if !strings.HasSuffix(j.Payload, " 1") || !j.RunAt.Equal(now) {
				t.Errorf("job %q at %v", j.Payload, j.RunAt)
			}
		}
		if got := deliveries.AttemptJob("d_1", 3, now.Add(time.Minute)); got.Kind != deliveries.JobDeliver || got.Payload != "d_1 3" || !got.RunAt.Equal(now.Add(time.Minute)) {
			t.Errorf("AttemptJob = %+v", got)
		}
	})
}
