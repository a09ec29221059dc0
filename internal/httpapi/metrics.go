package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/app"
	billingapp "github.com/farebox/farebox/internal/app/billing"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the Prometheus collectors of one server. Each server has its
// own registry so tests can run several servers in one process.
type Metrics struct {
	Registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// LedgerBatch observes group-commit batch sizes of the usage ledger.
	LedgerBatch prometheus.Histogram
	// LedgerCommit observes the commit latency of ledger batches.
	LedgerCommit prometheus.Histogram
	// ledgerRows counts the rows the database-mode ledger committed;
	// ledgerFailures its failed window writes (retried or, at shutdown,
	// lost).
	ledgerRows     prometheus.Counter
	ledgerFailures *prometheus.CounterVec
	// events counts business events (orders, coupons, activations, ...).
	events *prometheus.CounterVec
	// usage counts ledger rows by whether they are billed; usageSeries
	// holds its series of the closed set of label values, resolved once
	// (a label lookup per request cost more than the increment).
	usage       *prometheus.CounterVec
	usageSeries map[usageLabels]prometheus.Counter
	// routes caches each route's series of requests and latency (a
	// *routeSeries per route pattern): two label lookups per request
	// cost more than the increments.
	routes sync.Map
}

// routeSeries are one route's series: its latency and, by status, its
// request counters (status int → prometheus.Counter).
type routeSeries struct {
	latency  prometheus.Observer
	requests sync.Map
}

type usageLabels struct {
	counted bool
	reason  string
}

// NewMetrics registers the HTTP and runtime metrics and the collectors of
// the caller's own (the database pool's: cmd/farebox).
func NewMetrics(extra ...prometheus.Collector) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "farebox_http_requests_total", Help: "HTTP requests by route pattern and status.",
		}, []string{"route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "farebox_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route"}),
		LedgerBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "farebox_usage_ledger_batch_size", Help: "Rows per usage-ledger group commit (a window of the deferred ledger).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 15),
		}),
		ledgerRows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "farebox_usage_ledger_rows_written_total", Help: "Rows the usage ledger committed to the database, window by window.",
		}),
		ledgerFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "farebox_usage_ledger_write_failures_total", Help: "Failed window writes of the deferred usage ledger: retried, or lost when still failing at shutdown.",
		}, []string{"outcome"}),
		LedgerCommit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "farebox_usage_ledger_commit_seconds", Help: "Commit latency of usage-ledger batches.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "farebox_events_total", Help: "Business events: order_placed, coupon_ordered, coupon_activated, subscription_reactivated, subscription_reordered, subscription_cancelled, coupon_restored, ...",
		}, []string{"event", "environment"}),
		usage: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "farebox_usage_requests_total", Help: "Requests written to the usage ledger, by billed (counted) or not and the reason.",
		}, []string{"counted", "reason"}),
	}
	// Every series with a closed set of label values exists from the start
	// (at 0), so dashboards and alerts see it before the first event and a
	// documented label value that the service never emits is noticed
	// (cmd/farebox TestDocumentedMetricsExist).
	for _, ev := range EventNames {
		for _, env := range app.Environments {
			m.events.WithLabelValues(ev, string(env))
		}
	}
	m.usageSeries = map[usageLabels]prometheus.Counter{
		{true, billingapp.ReasonCounted}: m.usage.WithLabelValues("true", billingapp.ReasonCounted)}
	for _, reason := range billingapp.UncountedReasons {
		m.usageSeries[usageLabels{false, reason}] = m.usage.WithLabelValues("false", reason)
	}
	m.ledgerFailures.WithLabelValues("retried")
	m.ledgerFailures.WithLabelValues("lost")
	reg.MustRegister(m.requests, m.latency, m.LedgerBatch, m.LedgerCommit, m.ledgerRows, m.ledgerFailures, m.events, m.usage,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(extra...)
	return m
}

// EventNames are the values of farebox_events_total's event label.
var EventNames = []string{"order_placed", "coupon_ordered", "coupon_activated", "subscription_reactivated",
	"subscription_reordered", "subscription_cancelled", "coupon_restored", "invoice_issued", "invoice_cancelled",
	"payment_notice_issued"}

// ObserveLedger is the usage ledger's commit hook.
func (m *Metrics) ObserveLedger(batch int, d time.Duration) {
	m.LedgerBatch.Observe(float64(batch))
	m.LedgerCommit.Observe(d.Seconds())
	m.ledgerRows.Add(float64(batch))
}

// ObserveLedgerFailure is the deferred usage ledger's hook for a failed
// window write (lost: given up at shutdown).
func (m *Metrics) ObserveLedgerFailure(_ error, _ int, lost bool) {
	outcome := "retried"
	if lost {
		outcome = "lost"
	}
	m.ledgerFailures.WithLabelValues(outcome).Inc()
}

// countUsage counts a ledger row in farebox_usage_requests_total.
func (m *Metrics) countUsage(counted bool, reason string) {
	if c, ok := m.usageSeries[usageLabels{counted, reason}]; ok {
		c.Inc()
		return
	}
	m.usage.WithLabelValues(strconv.FormatBool(counted), reason).Inc()
}

func (m *Metrics) observe(route string, status int, d time.Duration) {
	v, ok := m.routes.Load(route)
	if !ok {
		v, _ = m.routes.LoadOrStore(route, &routeSeries{latency: m.latency.WithLabelValues(route)})
	}
	rs := v.(*routeSeries)
	c, ok := rs.requests.Load(status)
	if !ok {
		c, _ = rs.requests.LoadOrStore(status, m.requests.WithLabelValues(route, strconv.Itoa(status)))
	}
	c.(prometheus.Counter).Inc()
	rs.latency.Observe(d.Seconds())
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// Event counts n business events of kind event in an environment.
func (m *Metrics) Event(event, environment string, n int) {
	m.events.WithLabelValues(event, environment).Add(float64(n))
}

// Register adds collectors (job queue depth, departures, ...) to the registry.
func (m *Metrics) Register(cs ...prometheus.Collector) { m.Registry.MustRegister(cs...) }

// Job metrics (invoice documents): run durations by kind and outcome, and
// the queue's size per state.
var jobDuration = prometheus.HistogramOpts{
	Name: "farebox_job_duration_seconds", Help: "Background job run time by kind and outcome (ok, error).",
	Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
}

// WatchJobs registers the job metrics: observe is the jobs.Options.Observe
// hook to install, states is called on each scrape for farebox_jobs{state}.
// The duration series of kinds exist from the start.
func (m *Metrics) WatchJobs(states func() map[string]int, kinds ...string) (observe func(kind string, err error, d time.Duration)) {
	h := prometheus.NewHistogramVec(jobDuration, []string{"kind", "outcome"})
	m.Registry.MustRegister(h)
	for _, k := range kinds {
		h.WithLabelValues(k, "ok")
		h.WithLabelValues(k, "error")
	}
	for _, st := range []string{"ready", "running", "done", "dead"} {
		m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "farebox_jobs", Help: "Jobs in the durable queue by state.", ConstLabels: prometheus.Labels{"state": st},
		}, func() float64 { return float64(states()[st]) }))
	}
	return func(kind string, err error, d time.Duration) {
		outcome := "ok"
		if err != nil {
			outcome = "error"
		}
		h.WithLabelValues(kind, outcome).Observe(d.Seconds())
	}
}

// WatchJobAge registers farebox_jobs_oldest_ready_age_seconds: age is
// called on each scrape and returns how long the oldest due job has waited
// (0 when none is due). A growing value means the workers fall behind or
// none runs.
func (m *Metrics) WatchJobAge(age func() time.Duration) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "farebox_jobs_oldest_ready_age_seconds", Help: "How long the oldest due job in the queue has waited.",
	}, func() float64 { return age().Seconds() }))
}
