package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The mix is an open-loop load: operations start at a fixed rate whatever
// the server's latency (a slow server is not given a rest, unlike the
// closed-loop modes), and each latency is measured from the instant the
// operation was scheduled, so queueing inside loadgen counts as well
// (no coordinated omission). Operations are drawn by weight; those that need
// an earlier result (activation needs a coupon, a ticket fetch a ticket, an
// invoice a billable item) fall back to ordering while their pool is empty.

// mixOp is one kind of operation of the mix.
type mixOp struct {
	name   string
	weight int
}

// mixOps is the default mix: a partner searching, ordering and invoicing, and
// phones activating coupons and refreshing tickets.
var mixOps = []mixOp{
	{"search", 25},
	{"order", 15},
	{"activate", 12},
	{"ticket", 22},
	{"coupon", 12},
	{"invoice", 4},
	{"departures", 10},
}

// opStats collects one operation's outcomes.
type opStats struct {
	mu     sync.Mutex
	lat    []time.Duration
	errors map[string]int
}

func (s *opStats) add(d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.errors == nil {
			s.errors = map[string]int{}
		}
		msg := err.Error()
		if len(msg) > 120 {
			msg = msg[:120]
		}
		s.errors[msg]++
		return
	}
	s.lat = append(s.lat, d)
}

// mixState holds the pools the dependent operations draw from.
type mixState struct {
	urls      []string
	key       string
	single    string
	next      atomic.Uint64
	coupons   chan string // ordered, not yet activated
	items     chan string // billable items not yet invoiced
	mu        sync.Mutex
	tickets   []string
	couponIDs []string
	stops     []string // departures: station ids (empty: no departures endpoint)
	sessions  sync.Map // station id → session-token of the last board (a phone refreshing it)
}

// departures fetches a board the way a transit app does: api_key in the
// query and the session-token of its previous board of that station.
func (m *mixState) departures(station string) error {
	req, _ := http.NewRequest("GET", m.url()+"/v1/departures.json?station_id="+url.QueryEscape(station)+"&api_key="+url.QueryEscape(m.key), nil)
	req.Header.Set("Accept", "application/json")
	if tok, ok := m.sessions.Load(station); ok {
		req.Header.Set("session-token", tok.(string))
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return fmt.Errorf("GET /v1/departures.json: %d %s", res.StatusCode, firstLine(b))
	}
	if tok := res.Header.Get("session-token"); tok != "" {
		m.sessions.Store(station, tok)
	}
	return nil
}

func (m *mixState) url() string { return m.urls[m.next.Add(1)%uint64(len(m.urls))] }

func do(method, url, key string, body any, want int) ([]byte, error) {
	status, out, err := send(method, url, key, body)
	if err != nil {
		return nil, err
	}
	if status != want {
		return nil, fmt.Errorf("%s %s: %d %s", method, pathOf(url), status, firstLine(out))
	}
	return out, nil
}

// pathOf drops the scheme, host and ids so errors group by endpoint.
func pathOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	if i := strings.IndexByte(u, '/'); i >= 0 {
		u = u[i:]
	}
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	parts := strings.Split(u, "/")
	for i, p := range parts {
		if strings.Count(p, "-") >= 4 {
			parts[i] = "{id}"
		}
	}
	return strings.Join(parts, "/")
}

func firstLine(b []byte) string {
	s := string(b)
	if i := strings.Index(s, `"code":"`); i >= 0 {
		s = s[i+8:]
		if j := strings.IndexByte(s, '"'); j >= 0 {
			return s[:j]
		}
	}
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

var photo = map[string]any{"identification_medium": map[string]any{"photo_id_lite": map[string]any{
	"first_name": "Max", "last_name": "Mustermann", "birth_date": "1990-01-01"}}}

// run performs one operation of kind op and returns the kind it really ran.
func (m *mixState) run(op string) (string, error) {
	switch op {
	case "search":
		_, err := do("GET", m.url()+"/v2/products/search_by_city_name.json?city_name=Berlin", m.key, nil, 200)
		return op, err
	case "activate":
		select {
		case c := <-m.coupons:
			b, err := do("POST", m.url()+"/v9/ticketing/coupons/"+c+"/activate.json", "", photo, 201)
			if err != nil {
				return op, err
			}
			var t struct {
				TicketID string `json:"ticket_id"`
			}
			if err := json.Unmarshal(b, &t); err != nil {
				return op, err
			}
			m.mu.Lock()
			m.tickets = append(m.tickets, t.TicketID)
			m.mu.Unlock()
			return op, nil
		default:
		}
	case "ticket", "coupon":
		m.mu.Lock()
		pool := m.tickets
		if op == "coupon" {
			pool = m.couponIDs
		}
		id := ""
		if len(pool) > 0 {
			id = pool[rand.IntN(len(pool))]
		}
		m.mu.Unlock()
		if id != "" {
			var err error
			if op == "ticket" {
				_, err = do("PATCH", m.url()+"/v9/ticketing/tickets/"+id+".json", "", nil, 200)
			} else {
				_, err = do("GET", m.url()+"/v9/ticketing/coupons/"+id+".json", "", nil, 200)
			}
			return op, err
		}
	case "invoice":
		select {
		case it := <-m.items:
			_, err := do("POST", m.url()+"/v5/ticketing/billable_item/"+it+"/invoice.json", m.key, nil, 201)
			return op, err
		default:
		}
	case "departures":
		if len(m.stops) > 0 {
			return op, m.departures(m.stops[rand.IntN(len(m.stops))])
		}
		_, err := do("GET", m.url()+"/v2/products/search_by_city_name.json?city_name=Berlin", m.key, nil, 200)
		return "search", err
	}
	return "order", m.order()
}

func (m *mixState) order() error {
	b, err := do("POST", m.url()+"/v9/ticketing/orders.json", m.key, map[string]any{"product_ids": []string{m.single}}, 201)
	if err != nil {
		return err
	}
	var o struct {
		Coupons []struct {
			ID             string  `json:"id"`
			BillableItemID *string `json:"billable_item_id"`
		} `json:"coupons"`
	}
	if err := json.Unmarshal(b, &o); err != nil || len(o.Coupons) == 0 {
		return fmt.Errorf("order response: %v", err)
	}
	c := o.Coupons[0]
	m.mu.Lock()
	m.couponIDs = append(m.couponIDs, c.ID)
	m.mu.Unlock()
	select {
	case m.coupons <- c.ID:
	default:
	}
	if c.BillableItemID != nil {
		select {
		case m.items <- *c.BillableItemID:
		default:
		}
	}
	return nil
}

// mixLoad runs the mix at rate operations per second for d against the
// instances in urls (round robin) and prints per-operation results.
func mixLoad(urls []string, key string, rate float64, d time.Duration, stopIDs []string) error {
	m := &mixState{urls: urls, key: key, coupons: make(chan string, 100000), items: make(chan string, 100000), stops: stopIDs}
	var err error
	if m.single, err = singleProduct(urls[0], key); err != nil {
		return err
	}
	// Warm the pools a little so the first second is not all orders.
	for i := 0; i < 20; i++ {
		if err := m.order(); err != nil {
			return err
		}
	}
	total := 0
	for _, o := range mixOps {
		total += o.weight
	}
	pick := func() string {
		n := rand.IntN(total)
		for _, o := range mixOps {
			if n < o.weight {
				return o.name
			}
			n -= o.weight
		}
		return "search"
	}
	stats := map[string]*opStats{}
	for _, o := range append(mixOps, mixOp{name: "order"}) {
		stats[o.name] = &opStats{}
	}
	const maxInFlight = 4096
	var inflight, dropped atomic.Int64
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * interval)
		if due.Sub(start) >= d {
			break
		}
		if w := time.Until(due); w > 0 {
			time.Sleep(w)
		}
		if inflight.Load() >= maxInFlight {
			dropped.Add(1)
			continue
		}
		inflight.Add(1)
		wg.Add(1)
		go func(op string, due time.Time) {
			defer wg.Done()
			defer inflight.Add(-1)
			ran, err := m.run(op)
			stats[ran].add(time.Since(due), err)
		}(pick(), due)
	}
	wg.Wait()
	elapsed := time.Since(start)
	printMix(stats, elapsed, rate, dropped.Load(), len(urls))
	return nil
}

func printMix(stats map[string]*opStats, elapsed time.Duration, rate float64, dropped int64, instances int) {
	names := make([]string, 0, len(stats))
	for n := range stats {
		names = append(names, n)
	}
	sort.Strings(names)
	var all []time.Duration
	var errs int
	fmt.Printf("mix: target %.0f/s for %s on %d instance(s)\n", rate, elapsed.Round(time.Second), instances)
	fmt.Printf("%-11s %8s %7s %9s %9s %9s %9s %9s\n", "operation", "ok", "errors", "ok/s", "p50", "p90", "p99", "max")
	for _, n := range names {
		s := stats[n]
		sort.Slice(s.lat, func(i, j int) bool { return s.lat[i] < s.lat[j] })
		e := 0
		for _, c := range s.errors {
			e += c
		}
		errs += e
		all = append(all, s.lat...)
		if len(s.lat)+e == 0 {
			continue
		}
		fmt.Printf("%-11s %8d %7d %9.1f %9s %9s %9s %9s\n", n, len(s.lat), e, float64(len(s.lat))/elapsed.Seconds(),
			pct(s.lat, .5), pct(s.lat, .9), pct(s.lat, .99), pct(s.lat, 1))
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	fmt.Printf("%-11s %8d %7d %9.1f %9s %9s %9s %9s\n", "all", len(all), errs, float64(len(all))/elapsed.Seconds(),
		pct(all, .5), pct(all, .9), pct(all, .99), pct(all, 1))
	if dropped > 0 {
		fmt.Printf("dropped (over %d in flight): %d\n", 4096, dropped)
	}
	for _, n := range names {
		for msg, c := range stats[n].errors {
			fmt.Printf("error %-10s x%d: %s\n", n, c, msg)
		}
	}
}

func pct(l []time.Duration, p float64) string {
	if len(l) == 0 {
		return "-"
	}
	return l[int(float64(len(l)-1)*p)].Round(10 * time.Microsecond).String()
}
