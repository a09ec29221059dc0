package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/config"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/usage"
)

// serve runs the HTTP service until ctx ends, then shuts down gracefully:
// the listener closes, in-flight requests finish (up to the shutdown
// timeout), the usage ledger commits what it holds, and the database closes.
// ready, if not nil, receives the bound address (tests listen on :0).
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- string) error {
	cfg, err := config.Load(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	loc, _ := time.LoadLocation(cfg.Timezone)

	st, err := store.Open(ctx, store.Options{URL: cfg.DatabaseURL, DataDir: cfg.DataDir, MaxConns: cfg.DBMaxConns})
	if err != nil {
		return err
	}
	defer st.Close()
	n, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	log.Info("database ready", "engine", st.Engine(), "migrations_applied", n)

	a := app.New(app.Options{Store: st, Clock: clock.System{}, IDPrefix: cfg.IDPrefix, Location: loc, AuthCacheTTL: cfg.AuthCacheTTL})
	if err := a.LoadCatalog(ctx); err != nil {
		return fmt.Errorf("load catalog: %w", err)
	}
	areas, products := a.Catalog().Len()
	log.Info("catalog loaded", "areas", areas, "products", products)
	go every(ctx, 5*time.Second, func() {
		if err := a.RefreshCatalog(ctx); err != nil && ctx.Err() == nil {
			log.Warn("catalog refresh failed", "error", err.Error())
		}
	})
	// Transit: the session key is shared through the database when not
	// configured; feeds load in the background so /healthz answers at once
	// and /readyz reports not ready until the first index is built.
	sessionKey, err := a.SessionKey(ctx, cfg.SessionKey)
	if err != nil {
		return fmt.Errorf("session key: %w", err)
	}
	transit := a.NewTransit(app.TransitOptions{Refresh: cfg.GTFSRefresh, Realtime: cfg.Realtime,
		RealtimeInterval: cfg.RealtimeInterval, RealtimeMaxAge: cfg.RealtimeMaxAge, Log: log})
	transitDone := make(chan struct{})
	tctx, stopTransit := context.WithCancel(ctx)
	go func() { defer close(transitDone); transit.Run(tctx) }()
	defer func() { stopTransit(); <-transitDone }()

	metrics := httpapi.NewMetrics(st.DB())
	var ledger *usage.Ledger
	if cfg.UsageLedger {
		ledger = st.NewLedger(512, metrics.ObserveLedger)
		defer ledger.Close()
	} else {
		log.Warn("usage ledger disabled: requests are not recorded for billing")
	}
	srv := httpapi.New(httpapi.Deps{App: a, Log: log, Ledger: ledger, Metrics: metrics,
		MaxBodyBytes: cfg.MaxBodyBytes, RequestTimeout: cfg.RequestTimeout,
		Transit: transit, SessionKey: sessionKey, Ready: transit.Ready})

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: cfg.RequestTimeout + 10*time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
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
