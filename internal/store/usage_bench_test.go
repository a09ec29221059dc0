package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/usage"
)

// BenchmarkInsertUsage measures one group commit of 64 ledger rows.
func BenchmarkInsertUsage(b *testing.B) {
	storetest.EachEngineBench(b, func(b *testing.B, engine store.Engine) {
		s := storetest.Open(b, engine)
		ctx := context.Background()
		batch := make([]usage.Event, 64)
		for i := range batch {
			batch[i] = usage.Event{RequestID: fmt.Sprintf("req-%024d", i), AccountID: "farebox-account-0d1f2e3c-4b5a-4687-9a0b-c1d2e3f40516",
				Environment: account.Live, Endpoint: "GET /v1/account.json", Status: 200, Counted: true, Reason: usage.ReasonCounted, At: time.Now()}
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := s.Write(ctx, func(q store.Q) error { return q.InsertUsage(ctx, batch) }); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*64), "µs/row")
	})
}

// BenchmarkLedgerRecord measures the cost per request of the usage ledger
// under 64 concurrent callers: enqueue, group commit, wait.
func BenchmarkLedgerRecord(b *testing.B) {
	storetest.EachEngineBench(b, func(b *testing.B, engine store.Engine) {
		s := storetest.Open(b, engine)
		l := s.NewLedger(store.LedgerCommitted, nil)
		defer l.Close()
		recordInParallel(b, l)
	})
}

// recordInParallel records one counted request through l from 64
// concurrent callers (2 cores × 32) until b.N.
func recordInParallel(b *testing.B, l *usage.Ledger) {
	ev := usage.Event{RequestID: "req-0123456789abcdef0123", AccountID: "farebox-account-0d1f2e3c-4b5a-4687-9a0b-c1d2e3f40516",
		Environment: account.Live, Endpoint: "GET /v1/account.json", Status: 200, Counted: true, Reason: usage.ReasonCounted, At: time.Now()}
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := l.Record(context.Background(), ev); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
