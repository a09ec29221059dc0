package httpapi_test

import (
	"sync"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/usage"
	"github.com/google/go-cmp/cmp"
)

// With the deferred ledger (the default in database mode) a response does
// not wait for its row, but a usage report first commits what the ledger
// holds (billing.Service.ReadAfterFlush, as serve wires it): requests
// answered before the report are all in it, each once, although the
// window here (an hour) has not ended. Concurrent requests of the same
// account from several clients are counted exactly.
func TestUsageReportSeesDeferredRows(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngineOptions(t, func(t *testing.T, engine store.Engine) {
		s := storetest.Open(t, engine)
		e := apitest.NewOnStore(t, s, apitest.Options{Configure: func(d *httpapi.Deps) {
			l, err := s.NewDeferredLedger(store.LedgerCommitted, usage.DeferredOptions{Window: 1 << 62})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(l.Close)
			d.Ledger = l
			d.Billing.ReadAfterFlush(l.Flush)
		}})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 25 {
					e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: e.LiveKey})
				}
			})
		}
		wg.Wait()
		r := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: e.TestKey})
		if rows := e.UsageRows(r.Header.Get("X-Request-Id")); len(rows) != 0 {
			t.Fatalf("the row of a request is in the database before its window ended: %+v (is the ledger deferred?)", rows)
		}
		m := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/usage.json?from=2026-06-15&to=2026-06-15", Key: e.LiveKey}).Map(t)
		want := []any{map[string]any{"date": "2026-06-15", "endpoint": "GET /v1/account.json", "counted": float64(101), "uncounted": float64(0), "refused": float64(0)}}
		if d := cmp.Diff(want, m["days"]); d != "" {
			t.Errorf("usage after 100 live and 1 test request (-want +got):\n%s", d)
		}
		if rows := e.UsageRows(r.Header.Get("X-Request-Id")); len(rows) != 1 {
			t.Errorf("after the report the request has %d ledger rows, want 1", len(rows))
		}
	})
}
