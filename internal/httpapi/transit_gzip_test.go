package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"strconv"
	"strings"
	"testing"

	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/testtool"
)

// TestDeparturesGzip: a client that accepts gzip gets a board compressed
// from the second time the same board is asked for (the stored copy, the
// same bytes every time), which inflates to exactly the board a client
// without gzip gets; Vary names Accept-Encoding on every board; q=0 and
// identity get the board as it is; boards computed for one query (a
// minute in which an alert starts) and a server with --gzip-cache-mb 0
// never compress; another account gets the same stored copy with its own
// session token, and a request without a key is refused. Both engines, the Caltrain board with one to three
// alerts on every entry and the sample feed's board without alerts.
func TestDeparturesGzip(t *testing.T) {
	t.Parallel()
	alerts := map[string]*gtfsrt.FeedMessage{"caltrain": testtool.CaltrainAlerts()}
	at := int64(testtool.CaltrainAgencyAlertStart+90) * 1000 // 17:02 PST: every entry has alerts
	getAs := func(e *apitest.Env, key, path, enc string) *apitest.Resp {
		t.Helper()
		// An explicit Accept-Encoding: Go's transport then leaves the body as it came.
		return e.Must(200, apitest.Req{Method: "GET", Path: path, Key: key, NoValidate: true,
			Header: map[string]string{"Accept-Encoding": enc}})
	}
	get := func(e *apitest.Env, path, enc string) *apitest.Resp {
		t.Helper()
		return getAs(e, e.LiveKey, path, enc)
	}
	inflate := func(t *testing.T, b []byte) []byte {
		t.Helper()
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("not gzip: %v", err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	apitest.ForEachEngine(t, transitAlertsOptions(t, rtNow, alerts, caltrainFeeds...), func(t *testing.T, e *apitest.Env) {
		for _, c := range []struct {
			name, station string
			at            int64
			max           int
		}{
			{"alerts, 10", station("caltrain_22nd_street"), at, 10},
			{"alerts, 100", station("caltrain_22nd_street"), at + 15_250, 100},
			{"no alerts", station("sample_airport"), 1553983200000, 5},
		} {
			t.Run(c.name, func(t *testing.T) {
				path := departuresPath(c.station, c.at, c.max)
				plain := get(e, path, "identity")
				e.MustMatch("departures", plain.Body, apitest.RArr(kotlinDeparture))
				if !strings.Contains(plain.Header.Get("Vary"), "Accept-Encoding") || plain.Header.Get("Content-Encoding") != "" {
					t.Fatalf("plain board: Vary %q, Content-Encoding %q", plain.Header.Get("Vary"), plain.Header.Get("Content-Encoding"))
				}
				first := get(e, path, "gzip")
				if first.Header.Get("Content-Encoding") != "" || !bytes.Equal(first.Body, plain.Body) {
					t.Fatalf("a board asked for the first time with gzip: Content-Encoding %q (want none, the board as it is)", first.Header.Get("Content-Encoding"))
				}
				var stored []byte
				for i, enc := range []string{"gzip", "gzip, deflate, br", "br;q=1.0, GZIP;q=0.5"} {
					r := get(e, path, enc)
					if r.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(r.Header.Get("Vary"), "Accept-Encoding") {
						t.Fatalf("%q: Content-Encoding %q, Vary %q", enc, r.Header.Get("Content-Encoding"), r.Header.Get("Vary"))
					}
					if r.Header.Get("Content-Length") != strconv.Itoa(len(r.Body)) || r.Header.Get("Session-Token") == "" {
						t.Fatalf("%q: Content-Length %q for %d bytes, session-token %q", enc, r.Header.Get("Content-Length"), len(r.Body), r.Header.Get("Session-Token"))
					}
					if got := inflate(t, r.Body); !bytes.Equal(got, plain.Body) {
						t.Fatalf("%q: inflated board differs:\n got %s\nwant %s", enc, got, plain.Body)
					}
					if i == 0 {
						stored = r.Body
						t.Logf("%d bytes, %d compressed", len(plain.Body), len(r.Body))
					} else if !bytes.Equal(r.Body, stored) {
						t.Fatalf("%q: not the stored copy", enc)
					}
				}
				// Another account gets the same stored copy (a board is the
				// timetable's, not the caller's) with its own session token.
				_, otherKey := e.NewAccount("other", account.Live)
				other := getAs(e, otherKey, path, "gzip")
				if !bytes.Equal(other.Body, stored) || other.Header.Get("Session-Token") == "" ||
					other.Header.Get("Session-Token") == first.Header.Get("Session-Token") {
					t.Fatalf("another account: same stored copy %v, session-token %q (the first account's %q)",
						bytes.Equal(other.Body, stored), other.Header.Get("Session-Token"), first.Header.Get("Session-Token"))
				}
				// Without a key: refused before any board is looked up.
				if r := e.Do(apitest.Req{Method: "GET", Path: path, Header: map[string]string{"Accept-Encoding": "gzip"}}); r.Status != 401 ||
					r.Header.Get("Content-Encoding") != "" {
					t.Fatalf("no key: %d, Content-Encoding %q", r.Status, r.Header.Get("Content-Encoding"))
				}
				for _, enc := range []string{"gzip;q=0", "identity", "deflate", "br"} {
					if r := get(e, path, enc); r.Header.Get("Content-Encoding") != "" || !bytes.Equal(r.Body, plain.Body) {
						t.Fatalf("%q: Content-Encoding %q", enc, r.Header.Get("Content-Encoding"))
					}
				}
				// Another board (the next minute) starts over: first as it is.
				next := departuresPath(c.station, c.at+60_000, c.max)
				if r := get(e, next, "gzip"); r.Header.Get("Content-Encoding") != "" {
					t.Fatalf("another board was compressed at its first request")
				}
			})
		}
		// The minute in which the agency alert starts (17:00:30) is computed
		// for each query, never cached: never compressed.
		boundary := departuresPath(station("caltrain_22nd_street"), int64(testtool.CaltrainAgencyAlertStart-20)*1000, 10)
		for i := 0; i < 3; i++ {
			if r := get(e, boundary, "gzip"); r.Header.Get("Content-Encoding") != "" {
				t.Fatalf("a computed board was compressed (request %d)", i+1)
			}
		}
	})
	t.Run("off", func(t *testing.T) {
		opts := transitAlertsOptions(t, rtNow, alerts, caltrainFeeds...)
		configure := opts.Configure
		opts.Configure = func(d *httpapi.Deps) { configure(d); d.GzipCacheBytes = -1 }
		apitest.ForEachEngine(t, opts, func(t *testing.T, e *apitest.Env) {
			path := departuresPath(station("caltrain_22nd_street"), at, 10)
			for i := 0; i < 3; i++ {
				if r := get(e, path, "gzip"); r.Header.Get("Content-Encoding") != "" {
					t.Fatal("--gzip-cache-mb 0 compressed a board")
				}
			}
		})
	})
}
