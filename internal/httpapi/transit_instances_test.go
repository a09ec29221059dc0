package httpapi_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/transit"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// transitOnStore starts a server on s with a Transit that has loaded
// whatever is stored (or nothing yet, when load is false).
func transitOnStore(t *testing.T, e0 *apitest.Env, load bool) (*apitest.Env, *transit.Service) {
	var tr *transit.Service
	e := apitest.NewOnStore(t, e0.Store, apitest.Options{Now: rtNow, Configure: func(d *httpapi.Deps) {
		tr = d.Feeds.Serve(transit.Options{})
		t.Cleanup(tr.Close)
		if load {
			if err := tr.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		key, err := d.App.SessionKey(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		d.Transit, d.SessionKey, d.Ready = tr, key, tr.Ready
	}})
	return e, tr
}

// TestTransitInstancesShareFeeds: two instances on one database serve the
// same feeds after their refresh, a re-import replaces a feed as a whole,
// a removal takes it away, a session token of one instance is honoured by
// the other, and an instance that has not loaded yet is not ready.
func TestTransitInstancesShareFeeds(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		ctx := context.Background()
		base := apitest.New(t, engine, apitest.Options{Now: rtNow})
		e1, t1 := transitOnStore(t, base, true)
		e2, t2 := transitOnStore(t, base, true)
		sfPath := departuresPath(station("city_san_francisco"), tueFivePM, 2)
		airport := departuresPath(station("city_airport"), tueFivePM, 2)
		e1.Must(404, apitest.Req{Method: "GET", Path: sfPath, Key: e1.LiveKey})

		if _, err := e1.Feeds.Import(ctx, transit.Import{FeedID: "city", SourceName: "caltrain-2023.zip", Feed: parsedFeed(t, "caltrain-2023.zip")}); err != nil {
			t.Fatal(err)
		}
		// Until its refresh an instance keeps serving what it had.
		e2.Must(404, apitest.Req{Method: "GET", Path: sfPath, Key: e2.LiveKey})
		for _, tr := range []*transit.Service{t1, t2} {
			if err := tr.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
		}
		r1 := e1.Must(200, apitest.Req{Method: "GET", Path: sfPath, Key: e1.LiveKey})
		r2 := e2.Must(200, apitest.Req{Method: "GET", Path: sfPath, Key: e2.LiveKey})
		if string(r1.Body) != string(r2.Body) || len(r1.Body) < 100 {
			t.Errorf("instances disagree:\n%s\n%s", r1.Body, r2.Body)
		}
		// The session key lives in the database: instance 2 honours instance 1's token
		// (both env accounts differ, so use instance 1's key on instance 2).
		r := e2.Must(200, apitest.Req{Method: "GET", Path: sfPath, Key: e1.LiveKey, Header: map[string]string{"session-token": r1.Header.Get("session-token")}})
		if rows := e2.UsageRows(r.Header.Get("X-Request-Id")); len(rows) != 1 || rows[0].Counted {
			t.Errorf("token from instance 1 not honoured by instance 2: %+v", rows)
		}
		// Re-import under the same id replaces the whole feed.
		rec, err := e2.Feeds.Import(ctx, transit.Import{FeedID: "city", SourceName: "sample.zip", Feed: parsedFeed(t, "sample-gtfs-feed-0.13.0.zip")})
		if err != nil {
			t.Fatal(err)
		}
		if err := t1.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		e1.Must(404, apitest.Req{Method: "GET", Path: sfPath, Key: e1.LiveKey})
		e1.Must(200, apitest.Req{Method: "GET", Path: airport, Key: e1.LiveKey})
		if fs := t1.Feeds(); len(fs) != 1 || fs[0].Version != rec.Version || fs[0].SourceName != "sample.zip" || fs[0].StopTimes != 29 {
			t.Errorf("instance 1 feeds: %+v", fs)
		}
		// Removal.
		if err := e1.Feeds.Remove(ctx, "city"); err != nil {
			t.Fatal(err)
		}
		if err := e1.Feeds.Remove(ctx, "city"); err == nil {
			t.Error("removing twice should be NotFound")
		}
		if err := t1.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		e1.Must(404, apitest.Req{Method: "GET", Path: airport, Key: e1.LiveKey})
		if feeds, _ := e1.Feeds.List(ctx); len(feeds) != 0 {
			t.Errorf("feeds after remove: %+v", feeds)
		}
		if r := e1.Must(200, apitest.Req{Method: "GET", Path: "/v1/attributions.json", Key: e1.LiveKey}); string(r.Body) != "{\"html\":\"\",\"text\":\"\",\"url\":\"\"}\n" {
			t.Errorf("attributions without feeds: %s", r.Body)
		}
		// An instance that has not loaded yet: not ready, transit answers 503.
		e3, _ := transitOnStore(t, base, false)
		if r := e3.Must(503, apitest.Req{Method: "GET", Path: "/readyz"}); r.Map(t)["code"] != "not_ready" {
			t.Errorf("readyz before load: %s", r.Body)
		}
		if r := e3.Must(503, apitest.Req{Method: "GET", Path: airport, Key: e3.LiveKey}); r.Map(t)["code"] != "transit_loading" {
			t.Errorf("departures before load: %s", r.Body)
		}
		e1.Must(200, apitest.Req{Method: "GET", Path: "/readyz"})
	})
}

// TestImportRejectsBadInput: a bad feed id or realtime source stores nothing.
func TestImportRejectsBadInput(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Now: rtNow}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		f := parsedFeed(t, "sample-gtfs-feed-0.13.0.zip")
		for _, in := range []transit.Import{
			{FeedID: "", Feed: f},
			{FeedID: "a/b", Feed: f},
			{FeedID: "ok", Feed: nil},
			{FeedID: "ok", Feed: f, RealtimeSource: "ftp://x/y.pb"},
			{FeedID: "ok", Feed: f, RealtimeSource: "https://x/y.pb", RealtimeInterval: 1},
		} {
			if _, err := e.Feeds.Import(ctx, in); err == nil {
				t.Errorf("import %+v accepted", in.FeedID)
			}
		}
		if feeds, err := e.Feeds.List(ctx); err != nil || len(feeds) != 0 {
			t.Errorf("bad imports stored %d feeds (%v)", len(feeds), err)
		}
		rec, err := e.Feeds.Import(ctx, transit.Import{FeedID: "ok", Feed: f, RealtimeSource: "https://rt.example.org/tu.pb"})
		if err != nil || rec.RealtimeInterval != transit.DefaultRealtimeInterval || rec.Chunks != 1 {
			t.Errorf("import: %+v %v", rec, err)
		}
	})
}

// TestTransitCorruptSnapshot: a snapshot that fails its checksum is not
// loaded; the instance keeps serving the feed's previous version and every
// other feed, reports the problem once, and does not re-read it on every
// refresh.
func TestTransitCorruptSnapshot(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, transitOptions(t, rtNow, feedSpec{"a", "caltrain-2023.zip", ""}, feedSpec{"b", "sample-gtfs-feed-0.13.0.zip", ""}),
		func(t *testing.T, e *apitest.Env) {
			ctx := context.Background()
			tr := e.Server.Transit
			rec, err := e.Feeds.Import(ctx, transit.Import{FeedID: "b", Feed: parsedFeed(t, "sample-gtfs-feed-0.13.0.zip")})
			if err != nil {
				t.Fatal(err)
			}
			// Simulate storage corruption of the new version's only chunk.
			if _, err := e.Store.DB().ExecContext(ctx, `UPDATE gtfs_feed_chunks SET data = $1 WHERE feed_id = 'b'`, []byte("garbage")); err != nil {
				t.Fatal(err)
			}
			err = tr.Refresh(ctx)
			if err == nil || !strings.Contains(err.Error(), "feed b version "+strconv.FormatInt(rec.Version, 10)) {
				t.Fatalf("refresh error: %v", err)
			}
			ix, _ := tr.Index()
			e.Must(200, apitest.Req{Method: "GET", Path: departuresPath(station("a_22nd_street"), tueFivePM, 1), Key: e.LiveKey})
			e.Must(200, apitest.Req{Method: "GET", Path: departuresPath(station("b_airport"), tueFivePM, 1), Key: e.LiveKey})
			var served int64
			for _, f := range tr.Feeds() {
				if f.ID == "b" {
					served = f.Version
				}
			}
			if served == 0 || served == rec.Version {
				t.Errorf("feed b serves version %d, want the previous one (bad version %d)", served, rec.Version)
			}
			if err := tr.Refresh(ctx); err != nil {
				t.Errorf("second refresh: %v", err)
			}
			if ix2, _ := tr.Index(); ix2 != ix {
				t.Error("the index was rebuilt although nothing changed")
			}
		})
}
