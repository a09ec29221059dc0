package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/wallet"
	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/wallet/apple/apnstest"
)

// TestMonthTurnBatchedPushes: 1,200 pass updates due at the same instant
// (more than two batches) are served by two instances with two job workers
// each. Every device is pushed exactly once, every pass gets a new update
// tag, and each job has its own outcome: the device APNs calls gone
// (410) loses its registration and its job is done; the device whose push
// fails with a 500 is retried alone (its job, no other device pushed
// again) and delivered on the retry; the device APNs refuses for good
// (400 TopicDisallowed) buries its job at once instead of retrying it.
func TestMonthTurnBatchedPushes(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		const n = 1200
		ctx := b.ctx
		month := b.product(t, monthly)
		ids := make([]string, app.MaxProductsPerOrder)
		for i := range ids {
			ids[i] = month.ID
		}
		var tickets []string
		for len(tickets) < n {
			o, err := b.app.PlaceOrder(ctx, b.live, app.OrderRequest{ProductIDs: ids[:min(len(ids), n-len(tickets))]})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range o.Coupons {
				act, err := b.app.ActivateCoupon(ctx, c.ID, activation(berlinTariff))
				if err != nil {
					t.Fatal(err)
				}
				tickets = append(tickets, act.TicketID)
				if err := b.store.Write(ctx, func(q store.Q) error {
					if _, err := q.EnsureApplePass(ctx, wallet.ApplePassRecord{SerialNumber: act.TicketID, CouponID: c.ID,
						AuthToken: fmt.Sprintf("token-%026d", len(tickets))}, start); err != nil {
						return err
					}
					_, err := q.RegisterAppleDevice(ctx, fmt.Sprintf("device-%d", len(tickets)), act.TicketID, pushToken(len(tickets)), start)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
		}
		const failOnce, gone, refused = 17, 600, 1100 // 1-based device numbers
		srv := apnstest.New(t, "pass.org.farebox.development")
		srv.Respond(func(token string, k int) (int, string) {
			switch {
			case token == pushToken(failOnce) && k == 0:
				return http.StatusInternalServerError, "InternalServerError"
			case token == pushToken(gone):
				return http.StatusGone, "Unregistered"
			case token == pushToken(refused):
				return http.StatusBadRequest, "TopicDisallowed"
			}
			return http.StatusOK, ""
		})
		// A second instance on the same database.
		other := app.New(app.Options{Store: b.store, Clock: b.clock, IDPrefix: "farebox"})
		for _, a := range []*app.App{b.app, other} {
			c, err := apple.NewAPNs(srv.Config())
			if err != nil {
				t.Fatal(err)
			}
			a.SetPassPusher(c)
		}
		turn := b.clock.Now().Add(time.Hour)
		if err := app.PassesChanged(ctx, b.store, b.clock.Now(), turn, tickets...); err != nil {
			t.Fatal(err)
		}
		b.clock.Set(turn)
		wctx, stop := context.WithCancel(ctx)
		defer func() { stop(); b.app.Jobs.Wait(); other.Jobs.Wait() }()
		for _, a := range []*app.App{b.app, other} {
			a.Jobs.Start(wctx, 2)
			a.Jobs.Notify()
		}
		failed := tickets[failOnce-1]
		job := func(ticket string) jobs.Record {
			t.Helper()
			js, err := b.store.Read().Jobs(ctx, app.JobApplePassUpdate)
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range js {
				if j.Payload == ticket {
					return j
				}
			}
			t.Fatalf("no job for %s", ticket)
			return jobs.Record{}
		}
		// states counts the jobs by state. A job that failed for a reason
		// other than the scripted answers (the database under load) ends
		// the test: its retry would wait for a clock that stands still.
		states := func() map[string]int {
			t.Helper()
			js, err := b.store.Read().Jobs(ctx, app.JobApplePassUpdate)
			if err != nil {
				t.Fatal(err)
			}
			s := map[string]int{}
			for _, j := range js {
				s[j.State]++
				if e := j.LastError; e != nil && !strings.Contains(*e, "500 InternalServerError") && !strings.Contains(*e, "400 TopicDisallowed") {
					t.Fatalf("job %d of %s failed: %s", j.ID, j.Payload, *e)
				}
			}
			return s
		}
		waitUntil(t, "every job to run once", func() bool {
			s := states()
			return s[jobs.StateDone] == n-2 && s[jobs.StateDead] == 1 && s[jobs.StateReady] == 1
		})
		if j := job(failed); j.Attempts != 1 || j.LastError == nil || !strings.Contains(*j.LastError, "500") {
			t.Errorf("the failed device's job: %+v", j)
		}
		if j := job(tickets[refused-1]); j.State != jobs.StateDead || j.Attempts != 1 || j.LastError == nil ||
			!strings.Contains(*j.LastError, "TopicDisallowed") {
			t.Errorf("the refused device's job: %+v, want dead after one attempt", j)
		}
		if j := job(tickets[gone-1]); j.State != jobs.StateDone {
			t.Errorf("the gone device's job: %+v", j)
		}
		devs, err := b.store.Read().AppleDevicePasses(ctx, fmt.Sprintf("device-%d", gone))
		if err != nil || len(devs) != 0 {
			t.Errorf("the gone device is still registered: %v %v", devs, err)
		}
		b.clock.Advance(time.Minute) // past the first backoff
		b.app.Jobs.Notify()
		waitUntil(t, "the retry", func() bool { return states()[jobs.StateDone] == n-1 })
		per := map[string][]int{}
		for _, p := range srv.Pushes() {
			per[p.Token] = append(per[p.Token], p.Status)
		}
		if len(per) != n {
			t.Errorf("%d devices pushed, want %d", len(per), n)
		}
		for i := 1; i <= n; i++ {
			got, want := fmt.Sprint(per[pushToken(i)]), "[200]"
			switch i {
			case failOnce:
				want = "[500 200]"
			case gone:
				want = "[410]"
			case refused:
				want = "[400]"
			}
			if got != want {
				t.Errorf("device %d: answers %s, want %s", i, got, want)
			}
		}
		if r := srv.Refused(); len(r) != 0 {
			t.Errorf("APNs refused %d requests: %v", len(r), r[0])
		}
		for _, id := range tickets {
			p, ok, err := b.store.Read().ApplePass(ctx, id)
			if err != nil || !ok || p.UpdateSeq == 0 || p.UpdatedAt.Before(turn) {
				t.Fatalf("pass %s: %+v %v %v, want a new tag at the turn", id, p, ok, err)
			}
		}
	})
}

// pushToken is the APNs token of device i.
func pushToken(i int) string { return fmt.Sprintf("%064x", i) }

// waitUntil polls cond until it holds (the job workers run meanwhile); a
// hang ends with the test binary's -timeout, which names what it waited for.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	t.Logf("waiting for %s", what)
	for !cond() {
		time.Sleep(50 * time.Millisecond)
	}
}
