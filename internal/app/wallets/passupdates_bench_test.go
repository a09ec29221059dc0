package wallets_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/apptest"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/farebox/farebox/internal/wallet"
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
//     passes.Changed each (due a year later, so they stay out of the turn);
//
//   - deliver_ms: from 00:00 on 1 July until the local APNs (HTTP/2, TLS,
//     JWT checked) has received all 10,000 pushes, with the two job workers
//     of one `farebox serve` instance.
//
//     go test -run XXX -bench BenchmarkMonthTurnApplePushes -benchtime 1x -timeout 60m ./internal/app/wallets
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
	tb := apptest.New(b, engine)
	ctx := context.Background()
	month := tb.Product(b, apptest.Monthly)
	ids := make([]string, 0, app.MaxProductsPerOrder)
	for range app.MaxProductsPerOrder {
		ids = append(ids, month.ID)
	}
	var coupons []ticketing.Coupon
	for len(coupons) < n {
		o, err := tb.App.PlaceOrder(ctx, idempotency.Claim{}, tb.Live, app.OrderRequest{ProductIDs: ids[:min(len(ids), n-len(coupons))]})
		if err != nil {
			b.Fatal(err)
		}
		coupons = append(coupons, o.Coupons...)
	}
	june := make([]string, n)
	keys := make([]string, n)
	for i, c := range coupons {
		june[i] = tb.Activate(b, c.ID, apptest.BerlinTariff)
		if err := tb.App.Reorder(ctx, idempotency.Claim{}, tb.Live, *c.SubscriptionID, ""); err != nil {
			b.Fatal(err)
		}
	}
	// Every June pass downloaded and registered by its device.
	err := tb.Store.Write(ctx, func(q store.Q) error {
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
		keys[i] = *tb.Ticket(b, id).Ticket.ReactivationKey
	}

	july := time.Date(2026, 7, 1, 0, 0, 0, 0, clock.Berlin)
	tb.Clock.Set(time.Date(2026, 6, 24, 0, 0, 0, 0, clock.Berlin))
	began := time.Now()
	next := make([]string, n)
	for i, c := range coupons {
		act, err := tb.App.ActivateCoupon(ctx, idempotency.Claim{}, c.ID, app.ActivationRequest{ReactivationKey: keys[i], Version: 9})
		if err != nil {
			b.Fatal(err)
		}
		next[i] = act.TicketID
	}
	reactivate := time.Since(began)
	began = time.Now()
	for _, id := range next {
		changed(b, tb, tb.Clock.Now(), july.AddDate(1, 0, 0), id)
	}
	enqueue := time.Since(began)

	srv := apnstest.New(b, "pass.org.farebox.development")
	withPusher(b, tb, tb.App, srv)
	tb.Clock.Set(july)
	wctx, stop := context.WithCancel(ctx)
	b.StartTimer()
	began = time.Now()
	tb.App.Jobs.Start(wctx, 2) // cmd/farebox JobWorkers
	tb.App.Jobs.Notify()
	for srv.Len() < n {
		if time.Since(began) > 30*time.Minute {
			b.Fatalf("after 30 minutes %d of %d pushes", srv.Len(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	deliver := time.Since(began)
	b.StopTimer()
	stop()
	tb.App.Jobs.Wait()
	if r := srv.Refused(); len(r) != 0 {
		b.Fatalf("APNs refused %d pushes: %v", len(r), r[0])
	}
	js, err := tb.Store.Read().JobStates(ctx)
	if err != nil || js[jobs.StateDead] != 0 {
		b.Fatalf("job states %v %v", js, err)
	}
	b.ReportMetric(float64(reactivate.Milliseconds()), "reactivate_ms")
	b.ReportMetric(float64(enqueue.Milliseconds()), "enqueue_ms")
	b.ReportMetric(float64(deliver.Milliseconds()), "deliver_ms")
	b.ReportMetric(float64(n)/deliver.Seconds(), "pushes/s")
}
