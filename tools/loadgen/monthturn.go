package main

import (
	"archive/zip"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/farebox/farebox/internal/credentials"
	"github.com/farebox/farebox/internal/wallet/apple/apnstest"
)

// -mode monthturn (issue 33 §4, docs/scaling.md "The month turn"): N
// monthly subscriptions on one test clock, each with its pass registered
// by its own device, renewed as at a month turn:
//
//  1. set-up, untimed: a clock on the 15th of next month, N subscriptions
//     ordered on it (100 per order), each activated, its .pkpass downloaded
//     and registered by a device (Apple's web service, a push token each);
//  2. renewals, timed: the partner reorders each subscription, then its
//     device reactivates with the ticket's coupon_reactivation_key (the
//     latency reported) and fetches the new ticket;
//  3. the turn, timed: the clock advances to the new cycle's start, the
//     instances' job workers push every registered device through the
//     local APNs (apnstest: HTTP/2, TLS, ES256 provider tokens checked) and
//     each pushed device fetches its pass from the web service, which must
//     show the new cycle.
//
// Then it checks that nothing was lost or duplicated: every subscription
// has exactly its two cycles ordered (distinct billable items) and both
// activated, one new ticket per subscription (all distinct), exactly one
// push per registered device, none refused. It prints the throughput, the
// reactivation's p50/p95/p99 and, with -cpu-pid / -cpu-pg-db, farebox's
// and PostgreSQL's CPU per renewal over steps 2 and 3.

// turnLoad is one month-turn run.
type turnLoad struct {
	urls     []string
	key      string // the partner's test key (clocks take test keys only)
	n, conc  int
	apns     *apnstest.Server
	passType string
	probe    *cpuProbe
	out      io.Writer

	clock   string
	product string
	subs    []subscriber
	next    atomic.Uint64
}

// subscriber is one subscription and the device that holds its pass.
type subscriber struct {
	coupon, sub string
	first, key  string // the first cycle's ticket (the pass's serial) and its coupon_reactivation_key
	pushToken   string
	auth        string // "ApplePass <authenticationToken>"
	renewed     string // the reactivated ticket
	renewedFrom string // its valid_from
}

func (l *turnLoad) url() string { return l.urls[l.next.Add(1)%uint64(len(l.urls))] }

// each runs fn for i in [0, n) on l.conc workers and returns the first
// error (the others stop taking work) and the work each worker did.
func (l *turnLoad) each(fn func(i int) error) ([]int64, error) {
	var next atomic.Int64
	var first error
	var once sync.Once
	var failed atomic.Bool
	done := make([]int64, l.conc)
	var wg sync.WaitGroup
	for w := 0; w < l.conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= l.n {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = fmt.Errorf("subscription %d: %w", i, err) })
					failed.Store(true)
					return
				}
				done[w]++
			}
		}(w)
	}
	wg.Wait()
	return done, first
}

func (l *turnLoad) call(method, path, key string, body any, want int, out any) error {
	b, err := do(method, l.url()+path, key, body, want)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: %v", method, pathOf(path), err)
	}
	return nil
}

// monthTurnLoad runs the three steps and the checks.
func monthTurnLoad(l *turnLoad) error {
	began := time.Now()
	if err := l.setUp(); err != nil {
		return fmt.Errorf("set-up: %w", err)
	}
	fmt.Fprintf(l.out, "set-up: %d subscriptions ordered, activated and registered in %s\n", l.n, time.Since(began).Round(time.Millisecond))
	l.probe.split(l.urls)
	l.probe.begin()
	began = time.Now()
	react, perWorker, err := l.renew()
	if err != nil {
		return fmt.Errorf("renewals: %w", err)
	}
	renewals := time.Since(began)
	if err := l.turn(); err != nil {
		return fmt.Errorf("the turn: %w", err)
	}
	total := time.Since(began)
	cpu := l.probe.end(result{n: int64(l.n), perWorker: perWorker})
	sort.Slice(react, func(i, j int) bool { return react[i] < react[j] })
	fmt.Fprintf(l.out, "monthturn %d subscriptions on %d instance(s), %d clients\n", l.n, len(l.urls), l.conc)
	fmt.Fprintf(l.out, "renewals (reorder, reactivate, ticket): %s, %.1f /s\n", renewals.Round(time.Millisecond), float64(l.n)/renewals.Seconds())
	fmt.Fprintf(l.out, "the turn (advance → every pass pushed and fetched): %s\n", (total - renewals).Round(time.Millisecond))
	fmt.Fprintf(l.out, "end to end: %s, %.1f renewals/s\n", total.Round(time.Millisecond), float64(l.n)/total.Seconds())
	fmt.Fprintf(l.out, "reactivation: p50 %s   p95 %s   p99 %s   max %s\n", pct(react, 0.50), pct(react, 0.95), pct(react, 0.99), pct(react, 1))
	if cpu != "" {
		fmt.Fprintf(l.out, "cpu per renewal:%s\n", cpu)
	}
	return l.check()
}

// setUp makes the clock, the subscriptions and the registered passes.
func (l *turnLoad) setUp() error {
	now := time.Now().UTC()
	at := time.Date(now.Year(), now.Month()+1, 15, 12, 0, 0, 0, time.UTC)
	var clk struct{ ID string }
	if err := l.call("POST", "/v1/test_clocks.json", l.key, map[string]any{"frozen_time": at.Format(time.RFC3339), "name": "monthturn"}, 201, &clk); err != nil {
		return err
	}
	l.clock = clk.ID
	if err := l.monthlyProduct(); err != nil {
		return err
	}
	if err := l.order(); err != nil {
		return err
	}
	_, err := l.each(l.activateAndRegister)
	return err
}

func (l *turnLoad) monthlyProduct() error {
	var ps []struct {
		ID           string `json:"id"`
		TicketType   string `json:"ticket_type"`
		CustomerType string `json:"customer_type"`
	}
	if err := l.call("GET", "/v2/products/search_by_city_name.json?city_name=Berlin", l.key, nil, 200, &ps); err != nil {
		return err
	}
	for _, p := range ps {
		if p.TicketType == "month" && p.CustomerType == "adult" {
			l.product = p.ID
			return nil
		}
	}
	return errors.New("no monthly adult product in Berlin")
}

// order orders the n subscriptions on the clock, 100 per order.
func (l *turnLoad) order() error {
	const perOrder = 100
	l.subs = make([]subscriber, l.n)
	orders := (l.n + perOrder - 1) / perOrder
	var mu sync.Mutex
	filled := 0
	work := &turnLoad{urls: l.urls, n: orders, conc: l.conc}
	_, err := work.each(func(o int) error {
		k := min(perOrder, l.n-o*perOrder)
		ids := make([]string, k)
		for i := range ids {
			ids[i] = l.product
		}
		var res struct {
			Coupons []struct {
				ID           string `json:"id"`
				Subscription *struct {
					ID string `json:"id"`
				} `json:"subscription"`
			} `json:"coupons"`
		}
		if err := l.call("POST", "/v9/ticketing/orders.json", l.key, map[string]any{"product_ids": ids, "test_clock": l.clock}, 201, &res); err != nil {
			return err
		}
		if len(res.Coupons) != k {
			return fmt.Errorf("order of %d products: %d coupons", k, len(res.Coupons))
		}
		mu.Lock()
		defer mu.Unlock()
		for _, c := range res.Coupons {
			if c.Subscription == nil {
				return fmt.Errorf("coupon %s has no subscription", c.ID)
			}
			l.subs[filled] = subscriber{coupon: c.ID, sub: c.Subscription.ID}
			filled++
		}
		return nil
	})
	return err
}

type ticketAnswer struct {
	ID                    string `json:"id"`
	CouponID              string `json:"coupon_id"`
	CouponReactivationKey string `json:"coupon_reactivation_key"`
	ValidFrom             string `json:"valid_from"`
}

// activateAndRegister activates subscription i's coupon (its first cycle),
// downloads the ticket's pass and registers device i for it.
func (l *turnLoad) activateAndRegister(i int) error {
	s := &l.subs[i]
	var act struct {
		TicketID string `json:"ticket_id"`
	}
	body := map[string]any{"identification_medium": photo["identification_medium"], "tariff_settings": map[string]any{"german_postal_code": "10115"}}
	if err := l.call("POST", "/v9/ticketing/coupons/"+s.coupon+"/activate.json", "", body, 201, &act); err != nil {
		return err
	}
	var t ticketAnswer
	if err := l.call("PATCH", "/v9/ticketing/tickets/"+act.TicketID+".json", "", nil, 200, &t); err != nil {
		return err
	}
	if t.CouponReactivationKey == "" {
		return fmt.Errorf("ticket %s has no coupon_reactivation_key", t.ID)
	}
	s.first, s.key = t.ID, t.CouponReactivationKey
	pkpass, err := do("GET", l.url()+"/v9/ticketing/passes/apple_wallet/"+t.ID+".pkpass", "", nil, 200)
	if err != nil {
		return err
	}
	var pj struct{ SerialNumber, AuthenticationToken, PassTypeIdentifier string }
	if err := passJSON(pkpass, &pj); err != nil {
		return err
	}
	if pj.SerialNumber != t.ID || pj.AuthenticationToken == "" || pj.PassTypeIdentifier != l.passType {
		return fmt.Errorf("pass.json of %s: serial %q, type %q (want %q), token set %v: is the instance started with --public-url and --apns-key?",
			t.ID, pj.SerialNumber, pj.PassTypeIdentifier, l.passType, pj.AuthenticationToken != "")
	}
	s.auth, s.pushToken = "ApplePass "+pj.AuthenticationToken, fmt.Sprintf("%064x", i+1)
	status, out, err := sendAuth("POST", l.url()+"/wallet/apple/v1/devices/"+device(i)+"/registrations/"+l.passType+"/"+t.ID, s.auth,
		map[string]any{"pushToken": s.pushToken})
	if err == nil && status != 201 {
		err = fmt.Errorf("device registration: %d %s", status, firstLine(out))
	}
	return err
}

func device(i int) string { return fmt.Sprintf("monthturn-device-%d", i) }

// passJSON decodes pass.json of a .pkpass into v.
func passJSON(pkpass []byte, v any) error {
	zr, err := zip.NewReader(bytes.NewReader(pkpass), int64(len(pkpass)))
	if err != nil {
		return fmt.Errorf("pkpass: %v", err)
	}
	for _, f := range zr.File {
		if f.Name != "pass.json" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		defer rc.Close()
		return json.NewDecoder(rc).Decode(v)
	}
	return errors.New("pkpass without pass.json")
}

// renew reorders every subscription and reactivates and fetches its next
// ticket; it returns the reactivations' latencies and the renewals each
// worker did.
func (l *turnLoad) renew() ([]time.Duration, []int64, error) {
	lat := make([]time.Duration, l.n)
	perWorker, err := l.each(func(i int) error {
		s := &l.subs[i]
		if err := l.call("POST", "/v9/ticketing/subscriptions/"+s.sub+"/reorder.json", l.key, nil, 201, nil); err != nil {
			return err
		}
		var act struct {
			TicketID string `json:"ticket_id"`
		}
		t0 := time.Now()
		if err := l.call("POST", "/v9/ticketing/coupons/"+s.coupon+"/activate.json", "", map[string]any{"reactivation_key": s.key}, 201, &act); err != nil {
			return err
		}
		lat[i] = time.Since(t0)
		var t ticketAnswer
		if err := l.call("PATCH", "/v9/ticketing/tickets/"+act.TicketID+".json", "", nil, 200, &t); err != nil {
			return err
		}
		if t.CouponID != s.coupon || t.ID == s.first {
			return fmt.Errorf("reactivation answered ticket %s of coupon %s", t.ID, t.CouponID)
		}
		s.renewed, s.renewedFrom = t.ID, t.ValidFrom
		return nil
	})
	return lat, perWorker, err
}

// apnsFlags configure the local APNs of -mode monthturn. The farebox
// instances are started before loadgen, so they are given the same key
// (--apns-key, --apns-key-id, --apns-team-id), the address
// (--apns-endpoint https://ADDR) and the certificate to trust
// (SSL_CERT_FILE) beforehand (bench/monthturn.sh makes them with openssl).
type apnsFlags struct {
	listen, p8, cert, certKey, keyID, teamID, passType *string
}

func apnsFlagSet() apnsFlags {
	return apnsFlags{
		listen:   flag.String("apns-listen", "127.0.0.1:18443", "monthturn: where the local APNs listens"),
		p8:       flag.String("apns-p8", "", "monthturn: the .p8 key the instances sign APNs tokens with"),
		cert:     flag.String("apns-cert", "", "monthturn: the local APNs's TLS certificate (PEM; the instances trust it through SSL_CERT_FILE)"),
		certKey:  flag.String("apns-cert-key", "", "monthturn: its private key (PEM)"),
		keyID:    flag.String("apns-key-id", "ABC123DEFG", "monthturn: the instances' --apns-key-id"),
		teamID:   flag.String("apns-team-id", "FAREBOXDEV", "monthturn: the instances' --apns-team-id"),
		passType: flag.String("pass-type-id", credentials.DevPassTypeID, "monthturn: the instances' pass type id (the APNs topic)"),
	}
}

// runMonthTurn starts the local APNs and runs -mode monthturn.
func runMonthTurn(urls []string, key string, n, conc int, f apnsFlags, cpuPids, dbURL, cpuPgDB string) error {
	if n < 1 || conc < 1 {
		return fmt.Errorf("-n and -c must be at least 1")
	}
	p8, err := os.ReadFile(*f.p8)
	if err != nil {
		return fmt.Errorf("-apns-p8: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(*f.cert, *f.certKey)
	if err != nil {
		return fmt.Errorf("-apns-cert, -apns-cert-key: %w", err)
	}
	srv, err := apnstest.Start(apnstest.Options{Topic: *f.passType, P8: p8, KeyID: *f.keyID, TeamID: *f.teamID, Addr: *f.listen, Cert: &cert})
	if err != nil {
		return fmt.Errorf("local APNs: %w", err)
	}
	defer srv.Close()
	var probe *cpuProbe
	if cpuPids != "" || cpuPgDB != "" {
		if probe, err = newCPUProbe(cpuPids, dbURL, cpuPgDB); err != nil {
			return err
		}
	}
	return monthTurnLoad(&turnLoad{urls: urls, key: key, n: n, conc: min(conc, n), apns: srv, passType: *f.passType, probe: probe, out: os.Stdout})
}
