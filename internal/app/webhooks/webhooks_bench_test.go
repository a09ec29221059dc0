package webhooks_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/accounts"
	"github.com/farebox/farebox/internal/app/deliveries"
	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/app/webhooks"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/webhook"
)

// BenchmarkWebhookThroughput measures sustained delivery (issue 17: 1,000
// events/s to a local receiver, p99 from commit to delivery under 1 s).
// FAREBOX_WEBHOOK_BENCH_WRITERS concurrent writers (default 8, as
// concurrent requests) commit events at FAREBOX_WEBHOOK_BENCH_RATE per
// second together (default 1000), FAREBOX_WEBHOOK_BENCH_BATCH per change
// transaction (default 1), for FAREBOX_WEBHOOK_BENCH_SECONDS (default 10), each with
// its delivery to one endpoint; webhooks.DefaultWorkers delivery
// workers (farebox serve's default) post them to a local receiver. Reported: the rate committed,
// the rate delivered, and the latency from the commit of an event's change
// to the receiver having it (p50, p99, max). With
// FAREBOX_WEBHOOK_BENCH_BACKLOG=n it measures capacity instead: n events
// are committed first, then the workers start, and drained/s is how fast
// they reach the receiver. One run per engine:
//
//	go test ./internal/app/webhooks -run '^$' -bench WebhookThroughput -benchtime 1x
func BenchmarkWebhookThroughput(b *testing.B) {
	rate := envInt("FAREBOX_WEBHOOK_BENCH_RATE", 1000)
	batch := envInt("FAREBOX_WEBHOOK_BENCH_BATCH", 1)
	secs := envInt("FAREBOX_WEBHOOK_BENCH_SECONDS", 10)
	writers := envInt("FAREBOX_WEBHOOK_BENCH_WRITERS", 8)
	backlog := envInt("FAREBOX_WEBHOOK_BENCH_BACKLOG", 0)
	for _, engine := range storetest.Engines {
		b.Run(string(engine), func(b *testing.B) {
			for b.Loop() {
				webhookThroughput(b, engine, rate, batch, writers, backlog, time.Duration(secs)*time.Second)
			}
		})
	}
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func envInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil && n > 0 {
		return n
	}
	return def
}

func webhookThroughput(b *testing.B, engine store.Engine, rate, batch, writers, backlog int, d time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := storetest.Open(b, engine)
	s.NewLedger(store.LedgerCommitted, nil) // prepares SQLite's hot statements, as in farebox serve
	dl := deliveries.New(clock.System{}, "farebox")
	ev := events.New(store.NewView[events.Queries](s), clock.System{}, s.SettledEventSeq, nil)
	hooks := webhooks.New(store.NewView[webhooks.Queries](s), clock.System{}, "farebox", ev, dl,
		webhooks.Options{Queue: s.JobsOf(deliveries.JobDeliver)})
	k, err := accounts.New(store.NewView[accounts.Queries](s), clock.System{}, "farebox", 0).CreateAccount(ctx, idempotency.Claim{}, "Bench", account.Test)
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		_, _ = io.Copy(io.Discard, r.Body)
		id := r.Header.Get(webhook.EventIDHeader)
		mu.Lock()
		if _, ok := arrived[id]; !ok {
			arrived[id] = at
		}
		mu.Unlock()
	}))
	defer rc.Close()
	url, all := rc.URL, []string{"*"}
	if _, err := hooks.CreateEndpoint(ctx, idempotency.Claim{}, account.Principal{AccountID: k.AccountID, Environment: account.Test},
		webhooks.EndpointRequest{URL: &url, EnabledEvents: &all}); err != nil {
		b.Fatal(err)
	}
	r := hooks.Runner(jobs.Options{PollInterval: 250 * time.Millisecond})
	if backlog > 0 {
		// Capacity: the backlog is committed first, then delivered.
		for n := 0; n < backlog; n += 100 {
			if _, err := writeEvents(ctx, s, dl, k.AccountID, account.Test, 100); err != nil {
				b.Fatal(err)
			}
		}
		began := time.Now()
		r.Start(ctx, webhooks.DefaultWorkers)
		defer r.Wait()
		defer cancel()
		for {
			mu.Lock()
			n := len(arrived)
			mu.Unlock()
			if n >= backlog {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		b.ReportMetric(float64(backlog)/time.Since(began).Seconds(), "drained/s")
		return
	}
	r.Start(ctx, webhooks.DefaultWorkers)
	defer r.Wait()
	defer cancel()

	committed := map[string]time.Time{}
	var cmu sync.Mutex
	cpu0 := cpuTime()
	interval := time.Second * time.Duration(batch*writers) / time.Duration(rate)
	began := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := began.Add(interval * time.Duration(w) / time.Duration(writers))
			for time.Since(began) < d {
				if w := time.Until(next); w > 0 {
					time.Sleep(w)
				}
				next = next.Add(interval)
				ids, err := writeEvents(ctx, s, dl, k.AccountID, account.Test, batch)
				if err != nil {
					b.Error(err)
					return
				}
				at := time.Now()
				cmu.Lock()
				for _, id := range ids {
					committed[id] = at
				}
				cmu.Unlock()
			}
		}()
	}
	wg.Wait()
	wrote := time.Since(began)
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := len(arrived)
		mu.Unlock()
		if n >= len(committed) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	var lat []time.Duration
	var last time.Time
	for id, c := range committed {
		at, ok := arrived[id]
		if !ok {
			b.Errorf("event %s not delivered", id)
			continue
		}
		lat = append(lat, max(at.Sub(c), 0))
		if at.After(last) {
			last = at
		}
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(float64(len(lat)-1)*p)]) / 1e6 }
	b.ReportMetric(float64(len(committed))/wrote.Seconds(), "committed/s")
	b.ReportMetric(float64(len(lat))/last.Sub(began).Seconds(), "delivered/s")
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
	// CPU time of this process (writers, delivery workers, receiver, and
	// SQLite itself; not PostgreSQL's backends) per event: a measure that
	// a loaded machine changes much less than the rates.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(len(committed)), "cpu-us/event")
	out, _ := json.Marshal(map[string]any{"engine": engine, "events": len(committed), "batch": batch, "writers": writers})
	b.Log(string(out))
}

// writeEvents commits one change writing n order.created events about
// distinct objects (each about 1 kB) for acc and env, with their webhook
// deliveries (as internal/app's changes write them), and returns their
// ids once committed.
func writeEvents(ctx context.Context, s *store.Store, dl *deliveries.Service, acc string, env account.Environment, n int) ([]string, error) {
	ids := ident.Prefix("farebox")
	evs := make([]event.Event, n)
	out := make([]string, n)
	now := time.Now()
	for i := range evs {
		id := ids.New("order")
		evs[i] = event.Event{ID: ids.New("event"), AccountID: acc, Environment: env, Type: event.OrderCreated, ObjectID: id,
			APIVersion: event.APIVersion, CreatedAt: now, Object: []byte(`{"order_id":"` + id + `","note":"` + strings.Repeat("x", 1000) + `"}`)}
		out[i] = evs[i].ID
	}
	err := s.Write(ctx, func(q store.Q) error {
		hooks, err := q.InsertEvents(ctx, evs)
		if err != nil || !hooks {
			return err
		}
		return dl.FanOut(ctx, q, acc, env, evs)
	})
	return out, err
}
