package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// BenchmarkClaimBacklog is a month turn of the job queue: 10,000 jobs all
// due at once next to 8,000 done ones, claimed 16 at a time and completed
// one by one by a single worker until none is due (docs/storage.md, "The
// job queue"). It logs the plan of the first claim (EXPLAIN ANALYZE in a
// rolled-back transaction on PostgreSQL, EXPLAIN QUERY PLAN on SQLite).
//
//	go test -run XXX -bench BenchmarkClaimBacklog -benchtime 1x -v ./internal/store
func BenchmarkClaimBacklog(b *testing.B) {
	const due, done, batch = 10000, 8000, 16
	storetest.EachEngineBench(b, func(b *testing.B, engine store.Engine) {
		ctx := context.Background()
		t0 := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			s := storetest.Open(b, engine)
			fillQueue(b, s, t0, done, due)
			if i == 0 {
				b.Logf("claim plan with %d due and %d done jobs:\n%s", due, done, claimPlan(b, s, t0, batch))
			}
			b.StartTimer()
			began := time.Now()
			ran, claims := 0, 0
			var claiming time.Duration
			for {
				c := time.Now()
				js, err := s.Jobs().Claim(ctx, "w", t0, time.Minute, batch)
				claiming += time.Since(c)
				claims++
				if err != nil {
					b.Fatal(err)
				}
				if len(js) == 0 {
					break
				}
				for _, j := range js {
					if err := s.Jobs().Complete(ctx, j.ID, "w", t0); err != nil {
						b.Fatal(err)
					}
					ran++
				}
			}
			b.StopTimer()
			if ran != due {
				b.Fatalf("ran %d of %d jobs", ran, due)
			}
			b.ReportMetric(float64(due)/time.Since(began).Seconds(), "jobs/s")
			b.ReportMetric(float64(claiming.Microseconds())/float64(claims), "µs/claim")
			s.Close()
		}
	})
}

// fillQueue enqueues done finished jobs (run an hour before t0) and due
// ready jobs (due at t0).
func fillQueue(b testing.TB, s *store.Store, t0 time.Time, done, due int) {
	ctx := context.Background()
	err := s.Write(ctx, func(q store.Q) error {
		for i := 0; i < done+due; i++ {
			at := t0
			if i < done {
				at = t0.Add(-time.Hour)
			}
			if err := q.EnqueueJob(ctx, jobs.NewJob{Kind: "pass.update", Payload: fmt.Sprint(i), RunAt: at}, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for done > 0 {
		js, err := s.Jobs().Claim(ctx, "setup", t0.Add(-time.Hour), time.Minute, min(done, 500))
		if err != nil {
			b.Fatal(err)
		}
		for _, j := range js {
			if err := s.Jobs().Complete(ctx, j.ID, "setup", t0.Add(-time.Hour)); err != nil {
				b.Fatal(err)
			}
		}
		done -= len(js)
	}
}

// claimPlan explains the claim statement at t0.
func claimPlan(b testing.TB, s *store.Store, t0 time.Time, limit int) string {
	ctx := context.Background()
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	explain := "EXPLAIN QUERY PLAN "
	if s.Engine() == store.Postgres {
		explain = "EXPLAIN (ANALYZE, BUFFERS) "
	}
	rows, err := tx.QueryContext(ctx, explain+store.ClaimJobSQL(s.Engine()), "w", t0.Add(time.Minute), t0, limit)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			b.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals[len(vals)-1]))
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// TestClaimPlanWithStaleStatistics: on PostgreSQL the claim finds the jobs
// it takes by the primary key however wrong the statistics are. A month
// turn enqueues thousands of jobs at once; until autovacuum analyzes them
// the planner believes the table empty, and the claim's UPDATE once joined
// the claimed ids to a scan of every job (478 × 20,000 comparisons, 3.4 s
// per claim of 484 in BenchmarkMonthTurnApplePushes). Here the table is
// analyzed empty, then 3,000 jobs are due and a claim of 484 is explained.
func TestClaimPlanWithStaleStatistics(t *testing.T) {
	s := storetest.Open(t, store.Postgres)
	ctx := context.Background()
	if _, err := s.DB().ExecContext(ctx, "ANALYZE jobs"); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	fillQueue(t, s, t0, 0, 3000)
	plan := claimPlan(t, s, t0, 484)
	if !strings.Contains(plan, "Index Cond: (id = ANY") || strings.Contains(plan, "Join Filter") {
		t.Fatalf("the claim does not find its jobs by the primary key:\n%s", plan)
	}
	if !strings.Contains(plan, "rows=484") {
		t.Fatalf("the claim did not take 484 jobs:\n%s", plan)
	}
}
