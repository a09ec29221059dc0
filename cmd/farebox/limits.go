package main

import (
	"fmt"
	"log/slog"

	"github.com/farebox/farebox/internal/config"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/ratelimit"
	"github.com/farebox/farebox/internal/ratelimit/redislimit"
	"github.com/prometheus/client_golang/prometheus"
)

// sharedLimits is where the rate limits and the sign-in throttle keep
// their state with --redis-url: Redis, shared by every instance, behind a
// Fallback to this process's own buckets while Redis does not answer
// (docs/scaling.md "Limits across instances"). Without --redis-url it is
// nil (every instance on its own). It does not connect: a Redis that is
// down at start-up is a degraded limit, not a failed start.
func sharedLimits(cfg config.Config, secret []byte, metrics *httpapi.Metrics, log *slog.Logger) (ratelimit.Store, func(), error) {
	up := prometheus.NewGauge(prometheus.GaugeOpts{Name: "farebox_ratelimit_shared_up",
		Help: "1 while the rate limits are shared through Redis (--redis-url); 0 while Redis does not answer and each instance limits on its own, or without --redis-url."})
	local := prometheus.NewCounter(prometheus.CounterOpts{Name: "farebox_ratelimit_local_decisions_total",
		Help: "Rate-limit and sign-in throttle decisions taken by this instance alone because Redis (--redis-url) did not answer."})
	metrics.Register(up, local)
	if cfg.RedisURL == "" {
		return nil, func() {}, nil
	}
	c, err := redislimit.Dial(cfg.RedisURL)
	if err != nil {
		return nil, nil, fmt.Errorf("--redis-url: %w", err)
	}
	ap, err := redislimit.Pipelined(c)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("--redis-url: %w", err)
	}
	up.Set(1)
	addr := c.Options().Addr
	log.Info("rate limits shared through Redis", "redis", addr, "prefix", cfg.RedisPrefix)
	return &ratelimit.Fallback{
		Shared: redislimit.New(ap, cfg.RedisPrefix, secret),
		Local:  &ratelimit.Local{Max: 1 << 17},
		OnChange: func(degraded bool, err error) {
			if degraded {
				up.Set(0)
				log.Warn("Redis does not answer: rate limits and the sign-in throttle are per instance until it does", "redis", addr, "err", err)
				return
			}
			up.Set(1)
			log.Info("Redis answers again: rate limits are shared across instances", "redis", addr)
		},
		OnLocal: local.Inc,
	}, func() { c.Close() }, nil
}
