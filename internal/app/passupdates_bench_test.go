package app_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/farebox/farebox/internal/wallet"
	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/wallet/apple/apnstest"
)

// BenchmarkMonthTurnApplePushes: a month turn with 10,000 registered
// passes (FAREBOX_BENCH_PASSES overrides the number). Every pass is the
// June ticket of a monthly subscription, registered by its own device;
// July is ordered for each. Measured:
//
//   - reactivate_ms: the 10,000 reactivations a week ahead (each issues
//     July's ticket and enqueues its pass update, due at 00:00 on 1 July,
//     in the same transaction);
//
//   - enqueue_ms: the enqueue alone, 10,000 transactions of one
//     passesChanged each (due a year later, so they stay out of the turn);
//
//   - deliver_ms: from 00:00 on 1 July until the local APNs (HTTP/2, TLS,
//     JWT checked) has received all 10,000 pushes, with the two job workers
//     of one `farebox serve` instance.
//
//     go test -run XXX -bench BenchmarkMonthTurnApplePushes -benchtime 1x -timeout 60m ./internal/app
func BenchmarkMonthTurnApplePushes(b *testing.B) {
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("FAREBOX_BENCH_PASSES")); err == nil && v > 0 {
		n = v
	}
	for _, engine := range storetest.Engines {
		b.Run(string(engine), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				monthTurn(b, engine, n)
			}
		})
	}
}

func monthTurn(b *testing.B, engine store.Engine, n int) {
	b.StopTimer()
	tb := setup(b, engine)
	ctx := context.Background()
	month := tb.product(b, monthly)
	ids := make([]string, 0, app.MaxProductsPerOrder)
	for range app.MaxProductsPerOrder {
		ids = append(ids, month.ID)
	}
	var coupons []ticketing.Coupon
	for len(coupons) < n {
		o, err := tb.app.PlaceOrder(ctx, tb.live, app.OrderRequest{ProductIDs: ids[:min(len(ids), n-len(coupons))]})
		if err != nil {
			b.Fatal(err)
		}
		coupons = append(coupons, o.Coupons...)
	}
	june := make([]string, n)
	keys := make([]string, n)
	for i, c := range coupons {
		act, err := tb.app.ActivateCoupon(ctx, c.ID, activation(berlinTariff))
		if err != nil {
			b.Fatal(err)
		}
		june[i] = act.TicketID
		if err := tb.app.Reorder(ctx, tb.live, *c.SubscriptionID, ""); err != nil {
			b.Fatal(err)
		}
	}
	// Every June pass downloaded and registered by its device.
	err := tb.store.Write(ctx, func(q store.Q) error {
		for i, c := range coupons {
			if _, err := q.EnsureApplePass(ctx, wallet.ApplePassRecord{SerialNumber: june[i], CouponID: c.ID, AuthToken: fmt.Sprintf("token-%026d", i)}, start); err != nil {
				return err
			}
			if _, err := q.RegisterAppleDevice(ctx, fmt.Sprintf("device-%d", i), june[i], fmt.Sprintf("%064x", i+1), start); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for i, id := range june {
		d, err := tb.app.Ticket(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		keys[i] = *d.Ticket.ReactivationKey
	}

	july := berlin(2026, 7, 1, 0, 0, 0)
	tb.clock.Set(berlin(2026, 6, 24, 0, 0, 0))
	began := time.Now()
	next := make([]string, n)
	for i, c := range coupons {
		act, err := tb.app.ActivateCoupon(ctx, c.ID, app.ActivationRequest{ReactivationKey: keys[i], Version: 9})
		if err != nil {
			b.Fatal(err)
		}
		next[i] = act.TicketID
	}
	reactivate := time.Since(began)
	began = time.Now()
	for _, id := range next {
		if err := app.PassesChanged(ctx, tb.store, tb.clock.Now(), july.AddDate(1, 0, 0), id); err != nil {
			b.Fatal(err)
		}
	}
	enqueue := time.Since(began)

	srv := apnstest.New(b, "pass.org.farebox.development")
	c, err := apple.NewAPNs(srv.Config())
	if err != nil {
		b.Fatal(err)
	}
	tb.app.SetPassPusher(c)
	tb.clock.Set(july)
	wctx, stop := context.WithCancel(ctx)
	b.StartTimer()
	began = time.Now()
	tb.app.Jobs.Start(wctx, 2) // cmd/farebox JobWorkers
	tb.app.Jobs.Notify()
	for srv.Len() < n {
		if time.Since(began) > 30*time.Minute {
			b.Fatalf("after 30 minutes %d of %d pushes", srv.Len(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	deliver := time.Since(began)
	b.StopTimer()
	stop()
	tb.app.Jobs.Wait()
	if r := srv.Refused(); len(r) != 0 {
		b.Fatalf("APNs refused %d pushes: %v", len(r), r[0])
	}
	js, err := tb.store.Read().JobStates(ctx)
	if err != nil || js[jobs.StateDead] != 0 {
		b.Fatalf("job states %v %v", js, err)
	}
	b.ReportMetric(float64(reactivate.Milliseconds()), "reactivate_ms")
	b.ReportMetric(float64(enqueue.Milliseconds()), "enqueue_ms")
	b.ReportMetric(float64(deliver.Milliseconds()), "deliver_ms")
	b.ReportMetric(float64(n)/deliver.Seconds(), "pushes/s")
}
