// Command loadgen drives farebox's ordering and activation endpoints with a
// fixed number of concurrent clients for a fixed time and prints throughput
// and latency percentiles. With -mode baseline it measures, for comparison,
// the rate of bare database transactions that insert the same rows an order
// inserts (order, coupon, billable item), through the store package, so the
// two numbers show how close ordering runs to the database's own limit.
//
// Loopback only; every run is bounded by -d.
//
//	loadgen -mode order    -url http://127.0.0.1:18090 -key fbx_live_… -c 64 -d 10s [-cpu-pid PID,PID] [-cpu-pg-db DB -database-url …]
//	loadgen -mode activate -url … -key … -c 64 -d 10s   (orders coupons first, then activates them)
//	loadgen -mode baseline -data-dir DIR | -database-url postgres://… -c 64 -d 10s [-events=false]
//	loadgen -mode mix -url http://A,http://B -key … -rate 200 -d 30s [-stops ID,ID]
//	loadgen -mode soak -url … -key … -n 10000 -every 1000 -c 4 -pid PID -pprof http://127.0.0.1:PORT
//	loadgen -mode monthturn -url http://A,http://B -key fbx_test_… -n 10000 -c 64 -apns-listen 127.0.0.1:18443 -apns-p8 KEY.p8 -apns-cert CERT.pem -apns-cert-key KEY.pem [-cpu-pid …]
//	loadgen -mode pgcount -listen 127.0.0.1:15432 -upstream 127.0.0.1:5432   (until SIGINT; pgcount.go)
//
// -mode mix is open loop at a fixed rate over one or more instances (mix.go).
// -mode monthturn renews N subscriptions on a test clock end to end and
// checks nothing was lost or duplicated (monthturn.go, bench/monthturn.sh).
// -mode soak issues invoices with all their files and reads the server's
// memory between batches (soak.go, bench/soak.sh).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

func main() {
	mode := flag.String("mode", "order", "order, activate, baseline, mix, soak, monthturn or pgcount")
	listen := flag.String("listen", "127.0.0.1:15432", "pgcount: address the proxy listens on")
	upstream := flag.String("upstream", "127.0.0.1:5432", "pgcount: PostgreSQL's address")
	url := flag.String("url", "http://127.0.0.1:18090", "server base URL (order, activate, mix: comma-separated instances of one database, shared round robin)")
	rate := flag.Float64("rate", 200, "mix: operations started per second")
	stops := flag.String("stops", "", "mix: comma-separated station ids (<prefix>-station-<id>) for departure boards (empty: none)")
	key := flag.String("key", "", "live API key (monthturn: a test key, clocks take test keys only)")
	conc := flag.Int("c", 64, "concurrent clients")
	dur := flag.Duration("d", 10*time.Second, "duration")
	dbURL := flag.String("database-url", "", "baseline: PostgreSQL URL (order, activate: where -cpu-pg-db's backends are listed)")
	cpuPids := flag.String("cpu-pid", "", "order, activate: farebox process ids (comma-separated) whose CPU per operation is printed")
	cpuPgDB := flag.String("cpu-pg-db", "", "order, activate, baseline: database whose PostgreSQL backends' CPU per operation is printed (needs -database-url)")
	dataDir := flag.String("data-dir", "", "baseline: SQLite data dir")
	baseEvents := flag.Bool("events", true, "baseline: insert the order's order.created event too (false: the order, coupon and billable item only)")
	baseAlone := flag.Bool("alone", false, "baseline: write the rows as one autocommitted statement (store.InsertOrderAlone, as ordering does on PostgreSQL without webhook endpoints) instead of a transaction")
	soakN := flag.Int("n", 10000, "soak: invoices to issue; monthturn: subscriptions to renew")
	apnsFlags := apnsFlagSet()
	soakEvery := flag.Int("every", 1000, "soak: invoices between two memory readings")
	soakWarmup := flag.Int("warmup", 3000, "soak: invoices before the reading that later ones are compared with (SQLite's page caches fill first)")
	soakPid := flag.Int("pid", 0, "soak: the server's process id (its RSS is read from /proc)")
	soakPprof := flag.String("pprof", "", "soak: base URL of the server's --pprof-addr listener (live heap after a forced GC)")
	soakGrowth := flag.Float64("max-growth", 0.10, "soak: allowed growth of RSS and live heap over the warm-up reading")
	flag.Parse()
	var res result
	var err error
	switch *mode {
	case "order", "activate", "baseline":
		var probe *cpuProbe
		if *cpuPids != "" || *cpuPgDB != "" {
			if probe, err = newCPUProbe(*cpuPids, *dbURL, *cpuPgDB); err != nil {
				break
			}
		}
		if *mode == "baseline" {
			res, err = baseline(*dbURL, *dataDir, *conc, *dur, *baseEvents, *baseAlone, probe)
		} else {
			res, err = httpLoad(*mode, strings.Split(*url, ","), *key, *conc, *dur, probe)
		}
	case "soak":
		if err := soakLoad(*url, *key, *soakN, *soakEvery, *soakWarmup, *conc, *soakPid, *soakPprof, *soakGrowth); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		return
	case "monthturn":
		if err := runMonthTurn(strings.Split(*url, ","), *key, *soakN, *conc, apnsFlags, *cpuPids, *dbURL, *cpuPgDB); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		return
	case "pgcount":
		if err := pgCount(*listen, *upstream); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		return
	case "mix":
		var ids []string
		if *stops != "" {
			ids = strings.Split(*stops, ",")
		}
		if err := mixLoad(strings.Split(*url, ","), *key, *rate, *dur, ids); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		return
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
	res.print(*mode)
}

type result struct {
	cpu       string  // CPU per operation (cpu.go), if measured
	perWorker []int64 // operations done by each worker
	n, errors int64
	elapsed   time.Duration
	lat       []time.Duration
}

func (r result) print(mode string) {
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	pct := func(p float64) time.Duration {
		if len(r.lat) == 0 {
			return 0
		}
		return r.lat[int(float64(len(r.lat)-1)*p)]
	}
	fmt.Printf("%-9s %8d ok %6d errors %10.1f /s   p50 %8s   p99 %8s%s\n", mode, r.n, r.errors,
		float64(r.n)/r.elapsed.Seconds(), pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), r.cpu)
}

// run calls op from conc goroutines until d has passed.
func run(conc int, d time.Duration, op func(worker int) error) result {
	var n, errs atomic.Int64
	lats := make([][]time.Duration, conc)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t0 := time.Now()
				err := op(w)
				if err == errDone {
					return
				}
				if err != nil {
					errs.Add(1)
					continue
				}
				lats[w] = append(lats[w], time.Since(t0))
				n.Add(1)
			}
		}(w)
	}
	wg.Wait()
	r := result{n: n.Load(), errors: errs.Load(), elapsed: time.Since(start)}
	for _, l := range lats {
		r.lat = append(r.lat, l...)
		r.perWorker = append(r.perWorker, int64(len(l)))
	}
	return r
}

// errDone stops a worker (the activation pool ran out).
var errDone = errors.New("done")

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 30 * time.Second}

// send makes one request, with body (unless nil) as JSON and key (unless
// empty) as the bearer token, and returns the status and the whole response.
// post and do (mix.go) wrap it, each with its own error text.
func send(method, url, key string, body any) (int, []byte, error) {
	auth := ""
	if key != "" {
		auth = "Bearer " + key
	}
	return sendAuth(method, url, auth, body)
}

// sendAuth is send with the whole Authorization header (unless empty):
// Apple's web service authenticates with "ApplePass <token>".
func sendAuth(method, url, auth string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, out, nil
}

func post(url, key string, body any, want int) ([]byte, error) {
	status, out, err := send(http.MethodPost, url, key, body)
	if err != nil {
		return nil, err
	}
	if status != want {
		return nil, fmt.Errorf("%s: %d %s", url, status, out)
	}
	return out, nil
}

func singleProduct(url, key string) (string, error) {
	req, _ := http.NewRequest(http.MethodGet, url+"/v2/products/search_by_city_name.json?city_name=Berlin", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var ps []struct{ ID, TicketType, CustomerType string }
	var raw []map[string]any
	if err := json.NewDecoder(res.Body).Decode(&raw); err != nil {
		return "", err
	}
	for _, p := range raw {
		ps = append(ps, struct{ ID, TicketType, CustomerType string }{p["id"].(string), p["ticket_type"].(string), p["customer_type"].(string)})
	}
	for _, p := range ps {
		if p.TicketType == "single" && p.CustomerType == "adult" {
			return p.ID, nil
		}
	}
	return "", fmt.Errorf("no single adult product in Berlin")
}

// httpLoad runs -mode order or activate against one or more instances of
// one database: worker w sends its requests to urls[w % len(urls)].
func httpLoad(mode string, urls []string, key string, conc int, d time.Duration, probe *cpuProbe) (result, error) {
	pid, err := singleProduct(urls[0], key)
	if err != nil {
		return result{}, err
	}
	probe.split(urls)
	order := func(w int) (string, error) {
		b, err := post(urls[w%len(urls)]+"/v9/ticketing/orders.json", key, map[string]any{"product_ids": []string{pid}}, 201)
		if err != nil {
			return "", err
		}
		var o struct {
			CouponID string `json:"coupon_id"`
		}
		return o.CouponID, json.Unmarshal(b, &o)
	}
	if mode == "order" {
		probe.begin()
		r := run(conc, d, func(w int) error { _, err := order(w); return err })
		r.cpu = probe.end(r)
		return r, nil
	}
	// Activation: order a pool of coupons first (not timed), then activate them.
	coupons := make(chan string, 200000)
	fill := run(conc, d, func(w int) error {
		c, err := order(w)
		if err == nil {
			coupons <- c
		}
		return err
	})
	if fill.errors > 0 && fill.n == 0 {
		return result{}, fmt.Errorf("could not order coupons")
	}
	close(coupons)
	medium := map[string]any{"identification_medium": map[string]any{"photo_id_lite": map[string]any{"first_name": "Max", "last_name": "Mustermann", "birth_date": "1990-01-01"}}}
	probe.begin()
	r := run(conc, d, func(w int) error {
		c, ok := <-coupons
		if !ok {
			return errDone
		}
		_, err := post(urls[w%len(urls)]+"/v9/ticketing/coupons/"+c+"/activate.json", "", medium, 201)
		return err
	})
	r.cpu = probe.end(r)
	return r, nil
}

// baseline inserts, per transaction, the rows POST orders.json writes for
// one single ticket: the order, its coupon and billable item (through the
// store call of an order in a transaction, InsertOrderRows) and, with
// events, its order.created event (of the size the order's is, about 770
// bytes with the catalog parts referred to by hash). It is the database's
// own rate for an order's rows; what ordering adds on top is HTTP, the API
// key, the usage ledger, the webhook endpoints' lookup (fanOut) and the
// JSON. With alone it writes them as ordering does on PostgreSQL without
// webhook endpoints: one autocommitted statement (InsertOrderAlone), no
// BEGIN and COMMIT.
func baseline(dbURL, dataDir string, conc int, d time.Duration, events, alone bool, probe *cpuProbe) (result, error) {
	ctx := context.Background()
	s, err := store.Open(ctx, store.Options{URL: dbURL, DataDir: dataDir, MaxConns: conc})
	if err != nil {
		return result{}, err
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		return result{}, err
	}
	ids := ident.Prefix("farebox")
	acc := account.Account{ID: ids.New("account"), Name: "baseline", CreatedAt: time.Now()}
	if err := s.Write(ctx, func(q store.Q) error { return q.CreateAccount(ctx, acc) }); err != nil {
		return result{}, err
	}
	f, _, err := s.Read().LoadCatalog(ctx)
	if err != nil || len(f.Products) == 0 {
		return result{}, fmt.Errorf("baseline needs a catalog (start the server once on this database): %v", err)
	}
	pid := f.Products[0].ID
	probe.begin()
	r := run(conc, d, func(int) error {
		now := time.Now()
		o := ticketing.Order{ID: ids.New("order"), AccountID: acc.ID, Environment: account.Live, RestoreSecret: ids.New("restore-secret"), CreatedAt: now}
		item := ticketing.BillableItem{ID: ids.New("billable"), AccountID: acc.ID, Environment: account.Live, ProductID: pid,
			Description: "x", AmountCents: 380, Currency: "EUR", VATRateBP: 700, OrderedAt: now}
		c := ticketing.Coupon{ID: ids.New("coupon"), OrderID: o.ID, AccountID: acc.ID, Environment: account.Live, ProductID: pid,
			BillableItemID: &item.ID, CreatedAt: now}
		item.CouponID = &c.ID
		o.Coupons = []ticketing.Coupon{c}
		var evs []event.Event
		if events {
			obj := fmt.Sprintf(orderCreatedShape, o.ID, c.ID, c.ID, item.ID, now.Format(time.RFC3339), now.Format(time.RFC3339), now.Format(time.RFC3339))
			evs = []event.Event{{ID: ids.New("event"), AccountID: acc.ID, Environment: account.Live, Type: event.OrderCreated,
				ObjectID: o.ID, APIVersion: event.APIVersion, CreatedAt: now, Object: json.RawMessage(obj)}}
		}
		items := []ticketing.BillableItem{item}
		if alone {
			if written, err := s.InsertOrderAlone(ctx, idempotency.Claim{}, o, nil, items, evs); err != nil || written {
				return err
			}
		}
		return s.Write(ctx, func(q store.Q) error {
			_, err := q.InsertOrderRows(ctx, o, nil, items, evs)
			return err
		})
	})
	r.cpu = probe.end(r)
	return r, nil
}

// orderCreatedShape is an order.created object of one single ticket as
// PlaceOrder stores it (product and area replaced by their parts' hashes).
const orderCreatedShape = `{"order_id":%q,"optional_order_reference":null,"environment":"live","coupon_id":%q,` +
	`"coupons":[{"id":%q,"original_coupon_id":null,"restored_coupon_id":null,"product":{"<part>":"3cd179f10d2308c823291444cf80a413"},` +
	`"area":{"<part>":"4b36859688cabbb4dec50d0b841b5844"},"subscription":null,"activated":false,"environment":"live",` +
	`"billable_item_id":%q,"tariff_settings":null,"tariff_settings_valid":null,"earliest_activation_start_datetime":%q,` +
	`"latest_activation_start_datetime":%q,"activatable_until":%q}]}`
