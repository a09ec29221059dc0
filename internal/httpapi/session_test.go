package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/usage"
)

// sessionClient is a transit client that always adopts the latest
// session-token, as decisions.md asks of clients.
type sessionClient struct {
	t     *testing.T
	e     *apitest.Env
	key   string
	token string
}

// get sends path with the stored token and checks the ledger row of the
// request: counted or not, and why.
func (c *sessionClient) get(step, path string, wantCounted bool) *apitest.Resp {
	c.t.Helper()
	h := map[string]string{}
	if c.token != "" {
		h["Session-Token"] = c.token // the JS client's spelling; Kotlin sends session-token
	}
	r := c.e.Must(200, apitest.Req{Method: "GET", Path: path, Key: c.key, Header: h})
	tok := r.Header.Get("session-token")
	if tok == "" {
		c.t.Fatalf("%s: 200 without session-token", step)
	}
	c.token = tok
	rows := c.e.UsageRows(r.Header.Get("X-Request-Id"))
	reason := usage.ReasonCounted
	if !wantCounted {
		reason = usage.ReasonSession
	}
	if len(rows) != 1 || rows[0].Counted != wantCounted || rows[0].Reason != reason || rows[0].Status != 200 ||
		rows[0].AccountID != c.e.AccountID || !rows[0].At.Equal(c.e.Clock.Now()) {
		c.t.Errorf("%s (%s): ledger %+v, want counted=%v reason %s at %s", step, path, rows, wantCounted, reason, c.e.Clock.Now())
	}
	return r
}

// TestSessionWalk walks a client through twelve minutes on the fake clock:
// blocks per station and per trip, several stations in parallel, expiry
// after exactly five minutes, a client that lost its token, and the usage
// report at the end.
func TestSessionWalk(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, transitOptions(t, rtNow, caltrainFeeds...), func(t *testing.T, e *apitest.Env) {
		c := &sessionClient{t: t, e: e, key: e.LiveKey}
		a := departuresPath(station("caltrain_22nd_street"), tueFivePM, 3)
		b := departuresPath(station("caltrain_san_francisco"), tueFivePM, 3)
		sj := departuresPath(station("caltrain_sj_diridon"), tueFivePM, 3)
		trip := "/v1/trips/farebox-trip-caltrain_412_20231107.json"
		start := e.Clock.Now()
		at := func(d time.Duration) { e.Clock.Set(start.Add(d)) }
		steps := []struct {
			at      time.Duration
			name    string
			path    string
			counted bool
		}{
			{0, "A first", a, true},
			{time.Minute, "A again", a, false},
			{2 * time.Minute, "B first", b, true},
			{2*time.Minute + 30*time.Second, "SJ first", sj, true},
			{3 * time.Minute, "A within its block", a, false},
			{3*time.Minute + 10*time.Second, "station search is per request", "/v1/stations/search_by_name.json?query=diridon", true},
			{3*time.Minute + 20*time.Second, "B within its block after a search", b, false},
			{4 * time.Minute, "trip first", trip, true},
			{4*time.Minute + 59*time.Second, "A at 4:59", a, false},
			{5 * time.Minute, "A at 5:00 opens a new block", a, true},
			{5*time.Minute + 30*time.Second, "A in the new block", a, false},
			{6 * time.Minute, "B at 6:00 (block from 2:00)", b, false},
			{7 * time.Minute, "B at 7:00 opens a new block", b, true},
			{7*time.Minute + 20*time.Second, "SJ at 7:20 (block from 2:30)", sj, false},
			{7*time.Minute + 30*time.Second, "SJ at 7:30 opens a new block", sj, true},
			{8 * time.Minute, "trip within its block", trip, false},
			{9 * time.Minute, "trip at 9:00 opens a new block", trip, true},
			{9*time.Minute + 30*time.Second, "attributions per request", "/v1/attributions.json", true},
			{10 * time.Minute, "A at 10:00 (block from 5:00)", a, true},
			{11 * time.Minute, "B within its block", b, false},
			{12 * time.Minute, "A at 12:00 (block from 10:00)", a, false},
		}
		for _, s := range steps {
			at(s.at)
			c.get(s.name, s.path, s.counted)
		}
		// A client that lost its token is counted again and gets a fresh one.
		at(12*time.Minute + 10*time.Second)
		c.token = ""
		c.get("A without a token", a, true)
		c.get("A with the fresh token", a, false)

		// The usage report adds it all up by endpoint.
		counted, uncounted := map[string]int64{}, map[string]int64{}
		for _, s := range steps {
			ep := "GET /v1/departures.json"
			switch {
			case strings.HasPrefix(s.path, "/v1/trips/"):
				ep = "GET /v1/trips/{trip_id}.json"
			case strings.HasPrefix(s.path, "/v1/stations/"):
				ep = "GET /v1/stations/search_by_name.json"
			case strings.HasPrefix(s.path, "/v1/attributions"):
				ep = "GET /v1/attributions.json"
			}
			if s.counted {
				counted[ep]++
			} else {
				uncounted[ep]++
			}
		}
		counted["GET /v1/departures.json"]++
		uncounted["GET /v1/departures.json"]++
		var rep struct {
			Days []struct {
				Date, Endpoint     string
				Counted, Uncounted int64
			}
		}
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/usage.json", Key: e.LiveKey}).JSON(t, &rep)
		seen := 0
		for _, d := range rep.Days {
			if _, ok := counted[d.Endpoint]; !ok && uncounted[d.Endpoint] == 0 {
				continue
			}
			seen++
			if d.Date != "2023-11-08" || d.Counted != counted[d.Endpoint] || d.Uncounted != uncounted[d.Endpoint] {
				t.Errorf("usage %s: %+v, want counted %d uncounted %d", d.Endpoint, d, counted[d.Endpoint], uncounted[d.Endpoint])
			}
		}
		if seen != 4 {
			t.Errorf("usage report has %d transit endpoints, want 4: %+v", seen, rep.Days)
		}
	})
}

// TestSessionForgedAndForeignTokens: tokens that are forged, garbage, from
// another account or from the same account's test key are ignored (the
// request is counted), never an error; a token of the same account and
// environment works with another of its keys.
func TestSessionForgedAndForeignTokens(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, transitOptions(t, rtNow, caltrainFeeds...), func(t *testing.T, e *apitest.Env) {
		a := departuresPath(station("caltrain_22nd_street"), tueFivePM, 2)
		owner := &sessionClient{t: t, e: e, key: e.LiveKey}
		owner.get("owner opens a block", a, true)
		valid := owner.token

		_, otherKey := e.NewAccount("Other GmbH", "live")
		forged := []byte(valid)
		i := len(forged) / 2
		forged[i] = map[bool]byte{true: 'B', false: 'A'}[forged[i] == 'A']
		for name, tok := range map[string]string{
			"forged (one character changed)": string(forged),
			"truncated":                      valid[:len(valid)-4],
			"garbage":                        "not a token at all!",
			"oversized":                      strings.Repeat("A", 5000),
		} {
			c := &sessionClient{t: t, e: e, key: e.LiveKey, token: tok}
			c.get(name, a, true)
		}
		// Another account presenting the owner's valid token: counted for the other account.
		r := e.Must(200, apitest.Req{Method: "GET", Path: a, Key: otherKey, Header: map[string]string{"session-token": valid}})
		rows := e.UsageRows(r.Header.Get("X-Request-Id"))
		if len(rows) != 1 || !rows[0].Counted || rows[0].AccountID == e.AccountID {
			t.Errorf("foreign token: %+v", rows)
		}
		// The same account's test key: a different environment, so foreign too.
		r = e.Must(200, apitest.Req{Method: "GET", Path: a, Key: e.TestKey, Header: map[string]string{"session-token": valid}})
		if rows := e.UsageRows(r.Header.Get("X-Request-Id")); len(rows) != 1 || !rows[0].Counted || rows[0].Environment != "test" {
			t.Errorf("live token on the test key: %+v", rows)
		}
		// The owner's token still works after all that (blocks are per token, not server state).
		owner.get("owner within the block", a, false)
		// The token also works as api_key-authenticated request (same account and environment).
		r = e.Must(200, apitest.Req{Method: "GET", Path: a + "&api_key=" + e.LiveKey, Header: map[string]string{"SESSION-TOKEN": owner.token}})
		if rows := e.UsageRows(r.Header.Get("X-Request-Id")); len(rows) != 1 || rows[0].Counted || rows[0].Reason != usage.ReasonSession {
			t.Errorf("api_key request with a valid token: %+v", rows)
		}
		// Error responses do not consume a block and carry no token.
		r = e.Must(404, apitest.Req{Method: "GET", Path: departuresPath(station("caltrain_nowhere"), tueFivePM, 2), Key: e.LiveKey,
			Header: map[string]string{"session-token": owner.token}})
		if rows := e.UsageRows(r.Header.Get("X-Request-Id")); len(rows) != 1 || !rows[0].Counted || r.Header.Get("session-token") != "" {
			t.Errorf("404 with a token: %+v, token %q", rows, r.Header.Get("session-token"))
		}
	})
}

// TestSessionParallelStations: 20 stations (MaxBlocks) opened in turn all
// keep their blocks; a 21st pushes out the oldest.
func TestSessionParallelStations(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, transitOptions(t, rtNow, caltrainFeeds...), func(t *testing.T, e *apitest.Env) {
		var list []map[string]any
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/stations/search_by_position.json?latitude=37.5&longitude=-122.2", Key: e.LiveKey}).JSON(t, &list)
		if len(list) < 20 {
			t.Fatalf("need 20 stations, got %d", len(list))
		}
		c := &sessionClient{t: t, e: e, key: e.LiveKey}
		start := e.Clock.Now()
		var paths []string
		for i := 0; i < 20; i++ {
			paths = append(paths, departuresPath(list[i]["id"].(string), tueFivePM, 1))
		}
		for i, p := range paths {
			e.Clock.Set(start.Add(time.Duration(i) * time.Second))
			c.get("open "+p, p, true)
		}
		for _, p := range paths {
			e.Clock.Set(start.Add(time.Minute))
			c.get("reuse "+p, p, false)
		}
		// A 21st station drops the oldest block (station 0), the others stay.
		e.Clock.Set(start.Add(2 * time.Minute))
		c.get("21st station", departuresPath(station("sample_airport"), tueFivePM, 1), true)
		c.get("oldest block gone", paths[0], true)
		c.get("second block kept", paths[2], false)
	})
}
