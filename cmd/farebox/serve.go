package main

import (
	"context"
	"errors"
	"fmt"
	clearingapp "github.com/farebox/farebox/internal/app/clearing"
	"github.com/farebox/farebox/internal/clearing"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/app"
	accountsapp "github.com/farebox/farebox/internal/app/accounts"
	"github.com/farebox/farebox/internal/app/billing"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/console"
	"github.com/farebox/farebox/internal/app/devices"
	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/app/invoicedelivery"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/app/privacy"
	productsapp "github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/app/testclock"
	"github.com/farebox/farebox/internal/app/transit"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/app/webhooks"
	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/config"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/invoicedoc/pdf"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// serve runs the HTTP service until ctx ends, then shuts down gracefully:
// the listener closes, in-flight requests finish (up to the shutdown
// timeout), the usage ledger commits what it holds, the workers, the
// transit loader and the background loops end, and only then the database
// closes. ready, if not nil, receives the bound address (tests listen on :0).
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- string) error {
	cfg, err := config.Load(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	// Deferred after st.Close, so it runs before it: every loop has
	// returned before the store closes.
	bg := startLoops(ctx, log)
	defer bg.stop()

	metrics := httpapi.NewMetrics(collectors.NewDBStatsCollector(st.DB(), "farebox"))
	observeJob := watchJobs(metrics, st, log)
	renderer := watchPDF(metrics, cfg)
	prods := productsOn(st, cfg.IDPrefix)
	links := kit.NewLinks(cfg.BaseURL())
	bk := booksOn(st, cfg.IDPrefix, cfg.Seller, links, renderer)
	a, err := newApp(ctx, cfg, st, prods, bk, log, observeJob)
	if err != nil {
		return err
	}
	inv, del := invoicesOn(cfg, st, a, bk, links, renderer)
	feeds, tr, sessionKey, stopTransit, err := startTransit(ctx, cfg, st, a, log)
	if err != nil {
		return err
	}
	defer stopTransit()
	ev, hooks := webhooksOn(st, clock.System{}, cfg.IDPrefix, a, webhooks.Options{AllowPrivate: cfg.WebhookAllowPrivate, Timeout: cfg.WebhookTimeout})
	maintain(bg, cfg, a, prods, ev, st, log)
	priv := privacyOn(st, a, privacy.Options{Policy: cfg.Retention})
	retainDaily(bg, priv, log)
	importBlocklists(bg, cfg, a, log)
	if err := exportRecordsDaily(ctx, bg, cfg, st, clock.System{}, log); err != nil {
		return err
	}
	if err := checkpointBooks(bg, cfg, bk, log); err != nil {
		return err
	}
	if cfg.Seller.Name == config.DevSellerName {
		log.Warn("invoices are issued by the development seller: set FAREBOX_SELLER_* for production")
	}
	// The wallets (serverDeps) register the pass-update job handlers
	// before the workers start.
	deps, err := serverDeps(ctx, cfg, st, a, prods, log)
	if err != nil {
		return err
	}
	defer startWorkers(ctx, cfg, a, hooks, log, observeJob)()
	ledger, err := startLedger(ctx, cfg, st, metrics, log)
	if err != nil {
		return err
	}
	defer ledger.stop()
	if ledger.flush != nil {
		deps.Billing.ReadAfterFlush(ledger.flush)
	}
	deps.Ledger, deps.Metrics, deps.Feeds, deps.Transit, deps.SessionKey, deps.Ready = ledger.rec, metrics, feeds, tr, sessionKey, tr.Ready
	deps.Fares = faresOn(prods, tr, cfg.IDPrefix, cfg.Seller.Name, clock.System{})
	deps.Privacy = priv
	limits, closeLimits, err := sharedLimits(cfg, sessionKey, metrics, log)
	if err != nil {
		return err
	}
	defer closeLimits()
	deps.Limits = limits
	deps.Events, deps.Webhooks = ev, hooks
	deps.Invoices, deps.Delivery, deps.Books = inv, del, bk
	srv := httpapi.New(deps)

	if cfg.PprofAddr != "" {
		bg.run(func(ctx context.Context) { servePprof(ctx, cfg.PprofAddr, log) })
	}
	if cfg.MetricsAddr != "" {
		stopMetrics, err := serveMetrics(cfg.MetricsAddr, metrics, log)
		if err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		defer stopMetrics()
	}
	return listenAndServe(ctx, cfg, srv, links, log, ready)
}

// testLoop, when a test sets it, runs as one more background loop of serve
// (loops_test.go: shutdown joins the loops before the store closes).
var testLoop func(ctx context.Context, st *store.Store)

// openStore opens and migrates the database.
func openStore(ctx context.Context, cfg config.Config, log *slog.Logger) (*store.Store, error) {
	st, err := store.Open(ctx, store.Options{URL: cfg.DatabaseURL, DataDir: cfg.DataDir, MaxConns: cfg.DBMaxConns})
	if err != nil {
		return nil, err
	}
	n, err := st.Migrate(ctx)
	if err != nil {
		st.Close()
		return nil, err
	}
	log.Info("database ready", "engine", st.Engine(), "migrations_applied", n)
	return st, nil
}

// newApp builds the use cases on st, loads the catalog prods and stores
// the VDV ticket numbers of tickets issued without one; bk receives the
// receipts of cancellations.
func newApp(ctx context.Context, cfg config.Config, st *store.Store, prods *productsapp.Service, bk *books.Books, log *slog.Logger,
	observeJob func(string, error, time.Duration)) (*app.App, error) {
	loc, _ := time.LoadLocation(cfg.Timezone)
	pdf.SetFontDir(cfg.FontDir)
	a := app.New(app.Options{Store: st, Clock: clock.System{}, IDPrefix: cfg.IDPrefix, Location: loc, Products: prods,
		Books: bk, Jobs: jobs.Options{Log: log, Lease: cfg.JobLease, Observe: observeJob}})
	if err := prods.Load(ctx); err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	areas, products := prods.Catalog().Len()
	log.Info("catalog loaded", "areas", areas, "products", products)
	if n, err := wallets.BackfillVDVNumbers(ctx, store.NewView[wallets.Queries](st), clock.System{}, a.Catalog().File().Products); err != nil {
		return nil, fmt.Errorf("VDV ticket numbers: %w", err)
	} else if n > 0 {
		log.Info("VDV ticket numbers: stored the hash-derived numbers of tickets issued without one", "tickets", n)
	}
	return a, nil
}

// invoicesOn is invoicing on st: documents issued by the configured
// seller with download links under links, changes recorded in bk, events
// written by a, and its file jobs run by a's job runner (registered
// before the workers start); its PDFs wait their turn in renderer.
// With --smtp-url its documents are delivered to their buyers by e-mail
// (the delivery attempts run by the same runner).
func invoicesOn(cfg config.Config, st *store.Store, a *app.App, bk *books.Books, links *kit.Links, renderer *pdf.Queue) (*invoices.Service, *invoicedelivery.Service) {
	ts := invoicedelivery.EmailOver(cfg.SMTP, cfg.InvoiceFrom)
	inv := invoices.New(store.NewView[invoices.Queries](st), clock.System{}, ident.Prefix(cfg.IDPrefix), invoices.Options{
		Seller: cfg.Seller, Links: links, PaymentDays: cfg.PaymentDays, Books: bk, PDF: renderer,
		Events: app.EventWriter[invoices.Queries](a), Notify: a.Jobs.Notify, Channels: invoicedelivery.Channels(ts)})
	inv.Handle(a.Jobs)
	del := invoicedelivery.New(store.NewView[invoicedelivery.Queries](st), clock.System{}, ident.Prefix(cfg.IDPrefix), invoicedelivery.Options{
		Transports: ts, Files: inv.EnsureFiles, Events: app.EventWriter[invoicedelivery.Queries](a), Notify: a.Jobs.Notify})
	del.Handle(a.Jobs)
	return inv, del
}

// startTransit starts loading the transit feeds. The session key is shared
// through the database when not configured; feeds load in the background
// so /healthz answers at once and /readyz reports not ready until the
// first index is built. stop ends the loader and waits for it.
func startTransit(ctx context.Context, cfg config.Config, st *store.Store, a *app.App, log *slog.Logger) (feeds *transit.Feeds, tr *transit.Service, sessionKey []byte, stop func(), err error) {
	sessionKey, err = a.SessionKey(ctx, cfg.SessionKey)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("session key: %w", err)
	}
	boardCache := int64(-1) // --board-cache-mb 0: off
	if cfg.BoardCacheMB > 0 {
		boardCache = cfg.BoardCacheMB << 20
	}
	feeds = feedsOn(st, clock.System{}, cfg.IDPrefix)
	tr = feeds.Serve(transit.Options{Refresh: cfg.GTFSRefresh, Realtime: cfg.Realtime, RealtimeAlerts: cfg.RealtimeAlerts,
		RealtimeInterval: cfg.RealtimeInterval, RealtimeMaxAge: cfg.RealtimeMaxAge, BoardCacheBytes: boardCache, Log: log})
	transitDone := make(chan struct{})
	tctx, stopTransit := context.WithCancel(ctx)
	go func() { defer close(transitDone); tr.Run(tctx) }()
	return feeds, tr, sessionKey, func() { stopTransit(); <-transitDone }, nil
}

// loops are serve's background loops. They end when serve's context ends
// or stop is called; stop waits until every one has returned, so that
// serve closes the store only after the last loop touched it.
type loops struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	log    *slog.Logger
}

func startLoops(ctx context.Context, log *slog.Logger) *loops {
	lctx, cancel := context.WithCancel(ctx)
	return &loops{ctx: lctx, cancel: cancel, log: log}
}

// run runs fn(ctx) in a goroutine of its own; fn returns when ctx ends.
func (l *loops) run(fn func(ctx context.Context)) {
	l.wg.Go(func() { fn(l.ctx) })
}

// every runs fn(ctx) every d until the loops stop.
func (l *loops) every(d time.Duration, fn func(ctx context.Context)) {
	l.run(func(ctx context.Context) { every(ctx, d, func() { fn(ctx) }) })
}

// stop ends the loops and waits for them.
func (l *loops) stop() {
	l.cancel()
	l.log.Debug("shutting down: waiting for background loops")
	l.wg.Wait()
}

// maintain starts the periodic maintenance every instance runs: catalog
// refresh, Idempotency-Key purge, pruning of done jobs and event
// maintenance (the daily retention run: retainDaily).
func maintain(bg *loops, cfg config.Config, a *app.App, prods *productsapp.Service, ev *events.Service, st *store.Store, log *slog.Logger) {
	bg.every(5*time.Second, func(ctx context.Context) {
		if err := prods.Refresh(ctx); err != nil && ctx.Err() == nil {
			log.Warn("catalog refresh failed", "error", err.Error())
		}
	})
	// Stored Idempotency-Key responses (they hold coupon ids and restore
	// secrets) are deleted after --idempotency-ttl by every instance.
	bg.every(max(min(cfg.IdempotencyTTL/2, time.Minute), 100*time.Millisecond), func(ctx context.Context) {
		cutoff := time.Now().Add(-cfg.IdempotencyTTL)
		err := st.Write(ctx, func(q store.Q) error {
			n, err := q.PurgeIdempotencyKeys(ctx, cutoff)
			if n > 0 {
				log.Debug("idempotency keys purged", "count", n)
			}
			return err
		})
		if err != nil && ctx.Err() == nil {
			log.Warn("idempotency key purge failed", "error", err.Error())
		}
	})
	// Jobs that finished successfully are deleted jobs.DoneRetention after
	// they finished, by every instance every ten minutes (docs/storage.md,
	// "The job queue"); dead jobs stay until an operator deals with them.
	bg.every(10*time.Minute, func(ctx context.Context) {
		n, err := st.Jobs().PruneJobs(ctx, time.Now().Add(-jobs.DoneRetention))
		if n > 0 {
			log.Debug("done jobs pruned", "count", n)
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("job pruning failed", "error", err.Error())
		}
	})
	// Events (docs/events.md): subscription.ended once a subscription's end
	// has passed, and the pruning of events older than the retention
	// period, every minute by every instance (each ended event is written
	// once: the subscription row is marked in the same transaction).
	bg.every(time.Minute, func(ctx context.Context) {
		ended, pruned, err := ev.Maintain(ctx)
		if ended > 0 || pruned > 0 {
			log.Debug("events maintained", "subscriptions_ended", ended, "events_pruned", pruned)
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("event maintenance failed", "error", err.Error())
		}
	})
	if testLoop != nil {
		bg.run(func(ctx context.Context) { testLoop(ctx, st) })
	}
}

// watchPDF returns the PDF renderer's queue of the server (--pdf-queue,
// --pdf-deadline), which the invoices and the books render through, and
// registers farebox_pdf_render_queue: the renders it admitted.
func watchPDF(metrics *httpapi.Metrics, cfg config.Config) *pdf.Queue {
	q := pdf.NewQueue(pdf.Limits{Queue: cfg.PDFQueue, Deadline: cfg.PDFDeadline})
	metrics.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "farebox_pdf_render_queue", Help: "PDF renders admitted to this process's renderer (the one rendering and those waiting).",
	}, func() float64 { return float64(q.Length()) }))
	return q
}

// watchJobs registers the job gauges of metrics (one query per scrape, not
// one per state gauge, reused for a second) and returns the observer the
// job runners report each run to.
func watchJobs(metrics *httpapi.Metrics, st *store.Store, log *slog.Logger) func(string, error, time.Duration) {
	var jobsMu sync.Mutex
	var jobsAt time.Time
	var jobStates map[string]int
	observeJob := metrics.WatchJobs(func() map[string]int {
		jobsMu.Lock()
		defer jobsMu.Unlock()
		if time.Since(jobsAt) < time.Second {
			return jobStates
		}
		m, err := st.Read().JobStates(context.Background())
		if err != nil {
			log.Warn("job metrics", "error", err.Error())
		}
		jobStates, jobsAt = m, time.Now()
		return m
	}, invoices.JobFiles, passes.JobGoogleObject, passes.JobApplePassUpdate)
	metrics.WatchJobAge(func() time.Duration {
		now := time.Now()
		due, ok, err := st.Read().OldestReadyJob(context.Background(), now)
		if err != nil || !ok {
			return 0
		}
		return now.Sub(due)
	})
	return observeJob
}

// startWorkers starts the job workers and the webhook delivery workers
// (invoice documents, wallet updates, webhooks: in every instance unless
// --workers=false) and returns what stops them and waits for them.
func startWorkers(ctx context.Context, cfg config.Config, a *app.App, wh *webhooks.Service, log *slog.Logger, observeJob func(string, error, time.Duration)) (stop func()) {
	if !cfg.Workers {
		return func() {}
	}
	wctx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	a.Jobs.Start(wctx, JobWorkers)
	stop = func() { stopWorkers(); a.Jobs.Wait() }
	log.Info("job workers started", "workers", JobWorkers)
	if cfg.WebhookWorkers > 0 {
		// Deliveries have workers of their own; a delivery attempt is
		// short (webhook timeout) and mostly waits on the network.
		hooks := wh.Runner(jobs.Options{Log: log, Lease: cfg.JobLease, PollInterval: 250 * time.Millisecond, Observe: observeJob})
		hooks.Start(wctx, cfg.WebhookWorkers)
		stopJobs := stop
		stop = func() { stopWorkers(); hooks.Wait(); stopJobs() } // the webhook workers first
		log.Info("webhook workers started", "workers", cfg.WebhookWorkers)
	}
	return stop
}

// serverDeps are the HTTP server's settings from cfg: limits, proxies,
// the operator's credentials, inspection keys and wallet credentials (the
// caller adds the ledger, metrics and transit).
// inspectTolerance is --inspect-window-tolerance as httpapi.Deps takes it:
// the flag's 0s (none) is negative there, where 0 is the default.
func inspectTolerance(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

func serverDeps(ctx context.Context, cfg config.Config, st *store.Store, a *app.App, prods *productsapp.Service, log *slog.Logger) (httpapi.Deps, error) {
	deps := httpapi.Deps{App: a, Log: log, Products: prods,
		Console:      console.New(store.NewView[console.Queries](st), clock.System{}, prods.Catalog, a.Jobs.Notify),
		Billing:      billing.New(st.Read(), clock.System{}),
		Clearing:     clearingServe(st, cfg, a, prods),
		WebUsers:     webusersOn(st, clock.System{}, cfg.IDPrefix),
		Records:      recordsOn(st, cfg.IDPrefix),
		Accounts:     accountsapp.New(store.NewView[accountsapp.Queries](st), clock.System{}, ident.Prefix(cfg.IDPrefix), cfg.AuthCacheTTL),
		TestClocks:   testclock.New(store.NewView[testclock.Queries](st), clock.System{}, ident.Prefix(cfg.IDPrefix), a.Jobs.Notify),
		MaxBodyBytes: cfg.MaxBodyBytes, RequestTimeout: cfg.RequestTimeout,
		RateLimits: &httpapi.RateLimits{Rate: cfg.RateLimit, Burst: cfg.RateBurst}, MetricsElsewhere: cfg.MetricsAddr != "",
		Keyless: &httpapi.KeylessLimits{
			PerCapability:  httpapi.Limit{Rate: cfg.CapabilityRate, Burst: cfg.CapabilityBurst},
			PerClient:      httpapi.Limit{Rate: cfg.ClientRate, Burst: cfg.ClientBurst},
			TrustedProxies: cfg.TrustedProxies},
		TrustedProxies: cfg.TrustedProxies, PublicURL: cfg.PublicURL,
		InspectMaxDataAge: cfg.InspectMaxDataAge, InspectWindowTolerance: inspectTolerance(cfg.InspectWindowTolerance),
		GzipCacheBytes: -1}
	if cfg.GzipCacheMB > 0 { // --gzip-cache-mb 0: off
		deps.GzipCacheBytes = cfg.GzipCacheMB << 20
	}
	if cfg.AdminPasswordFile != "" {
		b, err := os.ReadFile(cfg.AdminPasswordFile)
		if err != nil {
			return deps, fmt.Errorf("--admin-password-file: %w", err)
		}
		if deps.Operator, err = webusers.ParseOperatorCredentials(string(b)); err != nil {
			return deps, fmt.Errorf("--admin-password-file %s: %w", cfg.AdminPasswordFile, err)
		}
	}
	// Inspection keys and wallet credentials (cmd/farebox/wallet.go).
	if err := loadWallets(ctx, cfg, st, log, &deps); err != nil {
		return deps, fmt.Errorf("wallets: %w", err)
	}
	deps.Devices = devices.New(store.NewView[devices.Queries](st), clock.System{}, ident.Prefix(cfg.IDPrefix),
		devices.Options{Ticket: a.Ticket, Offers: deps.Wallets.Offer, Events: app.EventWriter[devices.Queries](a)})
	return deps, nil
}

// listenAndServe serves srv on --addr until ctx ends, then lets in-flight
// requests finish (up to --shutdown-timeout).
func listenAndServe(ctx context.Context, cfg config.Config, srv http.Handler, links *kit.Links, log *slog.Logger, ready chan<- string) error {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: cfg.RequestTimeout + 10*time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	if cfg.PublicURL == "" {
		links.SetBase("http://" + ln.Addr().String())
	}
	log.Info("farebox listening", "addr", ln.Addr().String(), "config", cfg.String())
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests", "timeout", cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// JobWorkers is how many job workers an instance runs (--workers=true).
const JobWorkers = 2

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: lvl}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// every runs fn every d until ctx ends.
func every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

// serveMetrics serves GET /metrics on a listener of its own (--metrics-addr)
// until stop; it stays up during graceful shutdown, so the last scrapes see
// the drain.
func serveMetrics(addr string, m *httpapi.Metrics, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	log.Info("metrics listening", "addr", ln.Addr().String())
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics listener stopped", "error", err.Error())
		}
	}()
	return func() { srv.Close() }, nil
}

// servePprof exposes the Go profiler on its own listener (operators keep it on loopback).
func servePprof(ctx context.Context, addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	// POST /debug/free-os-memory: a garbage collection that also returns
	// the freed pages to the operating system, so that the resident set
	// read right after it shows what is live (bench/soak.sh reads it; the
	// runtime otherwise returns pages lazily and RSS wanders with the GC
	// cycle).
	mux.HandleFunc("POST /debug/free-os-memory", func(w http.ResponseWriter, r *http.Request) {
		debug.FreeOSMemory()
		w.WriteHeader(http.StatusNoContent)
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	log.Info("pprof listening", "addr", addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("pprof stopped", "error", err.Error())
	}
}

// clearingServe is the revenue clearing of serve: ticket months in the
// service's time zone, issued by the configured seller, the national
// products read from the loaded catalog.
func clearingServe(st *store.Store, cfg config.Config, a *app.App, prods *productsapp.Service) *clearingapp.Service {
	return clearingapp.New(store.NewView[clearingapp.Queries](st), clock.System{}, ident.Prefix(cfg.IDPrefix), a.Loc, cfg.Seller.Name,
		func() []string { return clearing.National(prods.Catalog().File().Products) })
}
