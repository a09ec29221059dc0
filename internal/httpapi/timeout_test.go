package httpapi_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestRequestTimeout: an order whose database work cannot finish within the
// request timeout (a lock held by someone else) is answered with what
// actually happened, never "cancelled" about rows that are then written
// (issue 28). On PostgreSQL, for the autocommitted order (no webhook
// endpoint) and the transaction (an enabled endpoint) alike:
//   - cancelled: the lock is still held when the timeout passes; the
//     server confirms the cancellation, the answer is 503 request_cancelled
//     with Retry-After, and nothing is written, also after the lock is
//     released;
//   - committed late: the server receives the cancel request only after
//     the lock was released (a proxy holds the cancel request). The
//     autocommitted order has committed by then: the answer is 201 with
//     that order, written once. The transaction starts no statement after
//     its request ended: it rolls back and the answer is 503.
//
// On SQLite the lock is held by another connection past the timeout and
// released: the answer is either 503 with nothing written or 201 with the
// order written, never one with the other (SQLite's busy handler ignores
// cancellation, docs/operations.md).
func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		opts := storetest.Options(t, engine)
		var proxy *pgProxy
		if engine == store.Postgres {
			proxy = newPGProxy(t, opts.URL)
			opts.URL = proxy.url
		}
		s, err := store.Open(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if _, err := s.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		e := apitest.NewOnStore(t, s, apitest.Options{Configure: func(d *httpapi.Deps) { d.RequestTimeout = 300 * time.Millisecond }})
		ids := productIDs(t, e)
		retryOrder(t, e, e.LiveKey, ids["single/adult"])
		// The test environment has an enabled endpoint: its orders are
		// written in a transaction with their deliveries.
		rc := newReceiver(t, nil)
		createEndpoint(t, e, e.TestKey, rc.URL+"/hooks", "*")
		retryOrder(t, e, e.TestKey, ids["single/adult"])
		paths := []struct{ name, key string }{{"autocommitted", e.LiveKey}, {"transaction", e.TestKey}}
		if engine == store.SQLite {
			lockSQLite(t, e, filepath.Join(opts.DataDir, "farebox.db"), e.LiveKey, ids["single/adult"])
			return
		}
		for _, p := range paths {
			t.Run(p.name+"/cancelled", func(t *testing.T) {
				tx := lockOrders(t, opts)
				before := counts(t, e)
				r := e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: p.key,
					Body: map[string]any{"product_ids": []string{ids["single/adult"]}}})
				if r.Status != 503 || r.Map(t)["code"] != "request_cancelled" || r.Header.Get("Retry-After") == "" {
					t.Errorf("order behind a lock: %d %s", r.Status, r.Body)
				}
				if err := tx.Rollback(); err != nil {
					t.Fatal(err)
				}
				// The next order commits after the first one would have. On a
				// loaded machine it may itself outlast the short timeout:
				// then it wrote nothing either, and the client retries.
				retryOrder(t, e, p.key, ids["single/adult"])
				after := counts(t, e)
				if after["orders"] != before["orders"]+1 || after["billable_items"] != before["billable_items"]+1 {
					t.Errorf("an order answered request_cancelled wrote rows: %v → %v", before, after)
				}
			})
			t.Run(p.name+"/committed late", func(t *testing.T) {
				tx := lockOrders(t, opts)
				before := counts(t, e)
				release := proxy.holdCancels()
				answer := make(chan *apitest.Resp, 1)
				go func() {
					answer <- e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: p.key,
						Body: map[string]any{"product_ids": []string{ids["single/adult"]}}})
				}()
				var r *apitest.Resp
				select {
				case <-proxy.held:
				case r = <-answer: // answered without asking the server to cancel
				}
				if err := tx.Rollback(); err != nil {
					t.Fatal(err)
				}
				// The order's statement goes on once the lock is free; wait
				// until nothing waits for the lock (and, autocommitted, for
				// its rows) before the cancel request reaches the server.
				// Bounded only against a hang.
				for i := 0; i < 3000 && (lockWaiters(t, opts) > 0 || p.name == "autocommitted" && count(t, e, "orders") == before["orders"]); i++ {
					time.Sleep(10 * time.Millisecond)
				}
				release()
				if r == nil {
					r = <-answer
				}
				after := counts(t, e)
				if p.name == "transaction" {
					// A transaction's statements are not started once its
					// request ended (nor its COMMIT): it rolls back.
					if r.Status != 503 || r.Map(t)["code"] != "request_cancelled" || !equalCounts(before, after) {
						t.Errorf("a transaction past its timeout: %d %s, rows %v → %v", r.Status, r.Body, before, after)
					}
					return
				}
				if r.Status != 201 {
					t.Fatalf("an order that committed after its timeout was answered %d %s (rows %v → %v)", r.Status, r.Body, before, after)
				}
				var o orderResp
				r.JSON(t, &o)
				if after["orders"] != before["orders"]+1 || after["coupons"] != before["coupons"]+1 || after["billable_items"] != before["billable_items"]+1 {
					t.Errorf("rows %v → %v", before, after)
				}
				got := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/orders/" + o.OrderID + ".json", Key: p.key}).Map(t)
				if got["order_id"] != o.OrderID || len(got["coupons"].([]any)) != 1 {
					t.Errorf("the order answered 201 is not stored as answered: %v", got)
				}
			})
		}
	})
}

// lockOrders takes PostgreSQL's orders table in EXCLUSIVE mode (reads go
// on, writes wait) in a transaction of another client.
func lockOrders(t *testing.T, opts store.Options) *sql.Tx {
	t.Helper()
	db, err := sql.Open("pgx", opts.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`LOCK TABLE ` + opts.Schema + `.orders IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	return tx
}

// lockWaiters counts the backends waiting for a lock on the test schema's
// orders table.
func lockWaiters(t *testing.T, opts store.Options) int {
	t.Helper()
	db, err := sql.Open("pgx", opts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = $1::regclass`, opts.Schema+".orders").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// lockSQLite holds SQLite's write lock from another connection past the
// request timeout while an order waits, then releases it: the answer and
// the rows agree.
func lockSQLite(t *testing.T, e *apitest.Env, path, key, product string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	before := counts(t, e)
	answer := make(chan *apitest.Resp, 1)
	go func() {
		answer <- e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: key,
			Body: map[string]any{"product_ids": []string{product}}})
	}()
	time.Sleep(600 * time.Millisecond) // past the request timeout
	if _, err := conn.ExecContext(context.Background(), `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	r := <-answer
	after := counts(t, e)
	defer retryOrder(t, e, key, product)
	switch r.Status {
	case 503:
		if r.Map(t)["code"] != "request_cancelled" || !equalCounts(before, after) {
			t.Errorf("503 %s with rows %v → %v", r.Body, before, after)
		}
	case 201:
		if after["orders"] != before["orders"]+1 || after["billable_items"] != before["billable_items"]+1 {
			t.Errorf("201 with rows %v → %v", before, after)
		}
	default:
		t.Errorf("order behind a lock: %d %s", r.Status, r.Body)
	}
}

// retryOrder places an order as a client does under the short timeout of
// these tests: a 503 request_cancelled wrote nothing, so it is retried.
func retryOrder(t *testing.T, e *apitest.Env, key, product string) {
	t.Helper()
	for i := 0; ; i++ {
		r := e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: key,
			Body: map[string]any{"product_ids": []string{product}}})
		if r.Status == 201 {
			return
		}
		if r.Status != 503 || r.Map(t)["code"] != "request_cancelled" || i == 9 {
			t.Fatalf("order: %d %s", r.Status, r.Body)
		}
	}
}

// pgProxy forwards connections to PostgreSQL. While holding
// (holdCancels), it holds each cancel request (the protocol's
// CancelRequest packet) until released: the server then gets it late.
type pgProxy struct {
	url  string
	held chan struct{} // a cancel request is being held

	mu      sync.Mutex
	release chan struct{} // nil: cancel requests pass
}

func newPGProxy(t *testing.T, target string) *pgProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{held: make(chan struct{}, 1)}
	upstream := u.Host
	u.Host = ln.Addr().String()
	p.url = u.String()
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	var conns sync.Map
	t.Cleanup(func() {
		conns.Range(func(k, _ any) bool { k.(net.Conn).Close(); return true })
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(c, true)
			go p.serve(c, upstream, &conns)
		}
	}()
	return p
}

// holdCancels holds cancel requests until the returned func is called.
func (p *pgProxy) holdCancels() (release func()) {
	ch := make(chan struct{})
	p.mu.Lock()
	p.release = ch
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.release = nil
		p.mu.Unlock()
		close(ch)
	}
}

func (p *pgProxy) serve(c net.Conn, upstream string, conns *sync.Map) {
	defer c.Close()
	head := make([]byte, 8)
	if _, err := io.ReadFull(c, head); err != nil {
		return
	}
	if binary.BigEndian.Uint32(head[4:]) == 80877102 { // CancelRequest
		p.mu.Lock()
		release := p.release
		p.mu.Unlock()
		if release != nil {
			select {
			case p.held <- struct{}{}:
			default:
			}
			<-release
		}
	}
	s, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	conns.Store(s, true)
	defer s.Close()
	if _, err := s.Write(head); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(s, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, s); done <- struct{}{} }()
	<-done
}
