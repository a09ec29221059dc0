package departure

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/realtime"
)

// swapRT serves one snapshot for every feed and can replace it (nil: no
// fresh predictions).
type swapRT struct {
	p atomic.Pointer[realtime.Snapshot]
}

func (s *swapRT) TripUpdates(string) *realtime.Snapshot { return s.p.Load() }

// cacheStats counts how the cached path answered and keeps the bytes of
// every BoardID seen, so each check also shows that an ID names one board.
type cacheStats struct {
	cached, direct int
	ids            map[BoardID]string
}

// checkCached compares ix.AppendDeparturesJSON (and DeparturesJSON) with
// AppendDeparturesJSON(nil, Departures(...)): same bytes or the same error.
// It reports what it compared for failure messages.
func checkCached(t *testing.T, ix *Index, id string, at time.Time, max int, st *cacheStats, what string) []byte {
	t.Helper()
	deps, wantErr := ix.Departures(id, at, max)
	got, err := ix.AppendDeparturesJSON([]byte("prefix"), id, at, max)
	if wantErr != nil || err != nil {
		if !sameError(err, wantErr) || string(got) != "prefix" {
			t.Fatalf("%s: %s at %s max %d: error %v (appended %q), want %v", what, id, at.Format(time.RFC3339Nano), max, err, got, wantErr)
		}
		return nil
	}
	want := AppendDeparturesJSON([]byte("prefix"), deps)
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %s at %s (%d) max %d:\n got %s\nwant %s", what, id, at.Format(time.RFC3339Nano), at.UnixMilli(), max, got, want)
	}
	b, err := ix.DeparturesJSON(id, at, max)
	if err != nil {
		t.Fatal(err)
	}
	bid, hasID := b.ID()
	if b.e != nil {
		st.cached++
		if b.SizeHint() != len(want)-len("prefix") {
			t.Fatalf("%s: %s: size %d, board %d bytes", what, id, b.SizeHint(), len(want)-len("prefix"))
		}
		if !hasID {
			t.Fatalf("%s: %s: a cached board has no ID", what, id)
		}
		if st.ids == nil {
			st.ids = map[BoardID]string{}
		}
		if prev, ok := st.ids[bid]; ok && prev != string(want[len("prefix"):]) {
			t.Fatalf("%s: %s at %s max %d: BoardID %+v names two boards:\n%s\n%s", what, id, at.Format(time.RFC3339Nano), max, bid, prev, want[len("prefix"):])
		}
		st.ids[bid] = string(want[len("prefix"):])
	} else {
		st.direct++
		if hasID {
			t.Fatalf("%s: %s: a board computed directly has an ID", what, id)
		}
	}
	if again := b.AppendJSON(nil); !bytes.Equal(again, want[len("prefix"):]) {
		t.Fatalf("%s: %s: second DeparturesJSON differs:\n got %s\nwant %s", what, id, again, want[len("prefix"):])
	}
	return want[len("prefix"):]
}

func sameError(a, b error) bool {
	var ea, eb *apperr.Error
	if !errors.As(a, &ea) || !errors.As(b, &eb) {
		return false
	}
	return reflect.DeepEqual(ea, eb)
}

// cacheTimes picks query instants for a feed: any time in its service
// range, shortly after midnight, the nights around DST changes, the days
// at and after the end of service, and years later.
func cacheTimes(rng *rand.Rand, fi *feedIndex, n int) []time.Time {
	f := fi.f
	var dst []int32
	for d := f.MinDay; d <= f.MaxDay+1; d++ {
		if _, o1 := time.Unix(gtfs.ServiceBase(d, fi.loc).Unix(), 0).In(fi.loc).Zone(); true {
			if _, o2 := time.Unix(gtfs.ServiceBase(d+1, fi.loc).Unix(), 0).In(fi.loc).Zone(); o1 != o2 {
				dst = append(dst, d)
			}
		}
	}
	dayStart := func(d int32) time.Time {
		y, m, dd := gtfs.DayDate(d)
		return time.Date(y, m, dd, 0, 0, 0, 0, fi.loc)
	}
	out := make([]time.Time, 0, n)
	for len(out) < n {
		var at time.Time
		switch k := rng.IntN(10); {
		case k < 4:
			at = dayStart(f.MinDay + rng.Int32N(f.MaxDay-f.MinDay+1)).Add(time.Duration(rng.Int64N(86400e3)) * time.Millisecond)
		case k < 6: // after midnight: trips of the previous service day
			at = dayStart(f.MinDay + rng.Int32N(f.MaxDay-f.MinDay+1)).Add(time.Duration(rng.Int64N(4*3600e3)) * time.Millisecond)
		case k < 8 && len(dst) > 0: // the DST night, 22:00 to 04:00
			at = dayStart(dst[rng.IntN(len(dst))]).Add(time.Duration(22*3600e3+rng.Int64N(6*3600e3)) * time.Millisecond)
		case k == 8: // the last days of service and after
			at = dayStart(f.MaxDay - 2 + rng.Int32N(12)).Add(time.Duration(rng.Int64N(86400e3)) * time.Millisecond)
		default: // years later: empty boards
			at = dayStart(f.MaxDay + 400 + rng.Int32N(2000)).Add(time.Duration(rng.Int64N(86400e3)) * time.Millisecond)
		}
		out = append(out, at)
	}
	return out
}

// minuteQueries runs the queries of one cache key: cold, warm at the same
// time, at the minute's first and last millisecond and another time, and
// with other maxima.
func minuteQueries(t *testing.T, rng *rand.Rand, ix *Index, id string, at time.Time, st *cacheStats) {
	t.Helper()
	minute := floorDiv(at.Unix(), 60)
	if ix.cache.load(boardKey{station: id, minute: minute}) != nil {
		return // drawn twice; the cold query would not be cold
	}
	start := time.UnixMilli(minute * 60000)
	max := randMax(rng)
	checkCached(t, ix, id, at, max, st, "cold")
	checkCached(t, ix, id, at, max, st, "warm")
	checkCached(t, ix, id, start, max, st, "minute start")
	checkCached(t, ix, id, start.Add(59999*time.Millisecond), max, st, "minute end")
	checkCached(t, ix, id, start.Add(time.Duration(rng.Int64N(60000))*time.Millisecond), max, st, "same minute")
	checkCached(t, ix, id, start.Add(time.Duration(rng.Int64N(60000))*time.Millisecond), randMax(rng), st, "other max")
	checkCached(t, ix, id, start.Add(60*time.Second), max, st, "next minute")
}

type cacheFeed struct {
	id, file string
	queries  int
}

var cacheFeeds = []cacheFeed{
	{"lirr", "nyc/lirr.zip", 150},
	{"ct", "caltrain-2023.zip", 150},
	{"bart", "bart-2019.zip", 150},
	{"sample", "sample-gtfs-feed-0.13.0.zip", 80},
	{"cdmx", "cdmx-2019-frequencies.zip", 100},
	{"trimet", "trimet-2routes-2021.zip", 80},
	{"subway", "nyc/subway.zip", 120},
	{"mnr", "nyc/metro-north.zip", 80},
}

// TestCachedBoardsMatchDepartures: cached boards are byte-identical to the
// computed ones on random stations, times and maxima, cold, warm and for
// other instants of the same minute.
func TestCachedBoardsMatchDepartures(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 7))
	for _, c := range cacheFeeds {
		t.Run(c.id, func(t *testing.T) {
			ix := index(t, nil, c.id, c.file)
			fi := ix.byID[c.id]
			var st cacheStats
			for _, at := range cacheTimes(rng, fi, c.queries) {
				e := ix.stations[rng.IntN(len(ix.stations))]
				id := e.id
				if p := fi.children[e.stop]; len(p) > 0 && rng.IntN(4) == 0 {
					id = ix.stationID(fi, p[rng.IntN(len(p))]) // a platform's board
				}
				minuteQueries(t, rng, ix, id, at, &st)
			}
			// The busiest station, every few seconds over an hour, so that
			// long boards and ties at the cut are exercised.
			busy, _ := ix.BusiestStation()
			at := cacheTimes(rng, fi, 1)[0]
			for s := 0; s < 3600; s += 7 {
				checkCached(t, ix, busy, at.Add(time.Duration(s)*time.Second+time.Duration(rng.IntN(1000))*time.Millisecond), randMax(rng), &st, "busiest")
			}
			t.Logf("%d answers from the cache, %d computed", st.cached, st.direct)
			if st.cached < 4*st.direct {
				t.Errorf("only %d of %d boards came from the cache", st.cached, st.cached+st.direct)
			}
		})
	}
}

func loadSnapshot(t *testing.T, file string) *realtime.Snapshot {
	t.Helper()
	return loadSnapshotAt(t, file, time.Now())
}

// loadSnapshotAt parses the realtime file of the test data as received at at.
func loadSnapshotAt(t testing.TB, file string, at time.Time) *realtime.Snapshot {
	t.Helper()
	data, err := os.ReadFile(dataDir + file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := realtime.Parse(data, at)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// alterSnapshot derives another snapshot: every event later by shift,
// every third trip cancelled, every fifth with its first updated stop
// skipped.
func alterSnapshot(s *realtime.Snapshot, shift int64) *realtime.Snapshot {
	out := *s
	out.Trips = map[string][]*realtime.TripUpdate{}
	i := 0
	for id, us := range s.Trips {
		for _, u := range us {
			c := *u
			c.Stops = append([]realtime.StopUpdate(nil), u.Stops...)
			for j := range c.Stops {
				for _, e := range []*realtime.Event{&c.Stops[j].Arrival, &c.Stops[j].Departure} {
					if e.HasTime {
						e.Time += shift
					}
					if e.HasDelay {
						e.Delay += int32(shift)
					}
				}
			}
			switch {
			case i%3 == 0:
				c.Relationship = realtime.TripCanceled
			case i%5 == 1 && len(c.Stops) > 0:
				c.Stops[0].Relationship = realtime.StopSkipped
			}
			i++
			out.Trips[id] = append(out.Trips[id], &c)
		}
	}
	return &out
}

// TestCachedBoardsWithRealtime: the same with predictions (BART and
// Caltrain TripUpdates, and versions delayed by up to 25 minutes, with
// cancellations and skipped stops), and when the snapshot is replaced or
// goes stale between two queries of one minute: the cached board follows.
func TestCachedBoardsWithRealtime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 11))
	for _, c := range []struct{ id, file, rt string }{{"bart", "bart-2019.zip", "bart-2019-trip-updates.pb"}, {"ct", "caltrain-2023.zip", "caltrain-2023-trip-updates.pb"}} {
		t.Run(c.id, func(t *testing.T) {
			base := loadSnapshot(t, c.rt)
			snaps := []*realtime.Snapshot{base, alterSnapshot(base, 240), alterSnapshot(base, 1500), alterSnapshot(base, -90), nil}
			rt := &swapRT{}
			rt.p.Store(base)
			ix := index(t, rt, c.id, c.file)
			var st cacheStats
			changed := 0
			stations := append([]stationEntry(nil), ix.stations...)
			busy, _ := ix.BusiestStation()
			for q := 0; q < 400; q++ {
				id := stations[rng.IntN(len(stations))].id
				if q%4 == 0 {
					id = busy
				}
				// Around the snapshot's time, where its predictions apply.
				at := base.Timestamp.Add(time.Duration(rng.Int64N(4*3600e3)-2*3600e3) * time.Millisecond)
				rt.p.Store(snaps[rng.IntN(len(snaps))])
				if ix.cache.load(boardKey{station: id, minute: floorDiv(at.Unix(), 60)}) != nil {
					continue
				}
				max := randMax(rng)
				checkCached(t, ix, id, at, max, &st, "cold")
				before := checkCached(t, ix, id, at, max, &st, "warm")
				start := time.UnixMilli(floorDiv(at.Unix(), 60) * 60000)
				checkCached(t, ix, id, start, max, &st, "minute start")
				checkCached(t, ix, id, start.Add(59999*time.Millisecond), randMax(rng), &st, "minute end")
				// Another snapshot (or none) between two queries of the minute.
				next := snaps[rng.IntN(len(snaps))]
				prev := rt.p.Swap(next)
				after := checkCached(t, ix, id, at, max, &st, "after swap")
				if next != prev && !bytes.Equal(before, after) {
					changed++
				}
				checkCached(t, ix, id, start.Add(time.Duration(rng.Int64N(60000))*time.Millisecond), max, &st, "after swap, same minute")
			}
			t.Logf("%d answers from the cache, %d computed, %d boards changed with the snapshot", st.cached, st.direct, changed)
			if st.cached < 3*st.direct {
				t.Errorf("only %d of %d boards came from the cache", st.cached, st.cached+st.direct)
			}
			if changed < 20 {
				t.Errorf("only %d boards changed with the snapshot: the swap is not exercised", changed)
			}
		})
	}
}

// Errors are those of Departures, whether or not the station is cached.
func TestCachedBoardErrors(t *testing.T) {
	ix := index(t, nil, "ct", "caltrain-2023.zip")
	at := time.Date(2023, 11, 7, 17, 0, 30, 0, la(t))
	var st cacheStats
	for round := 0; round < 2; round++ { // the second round has the station cached
		for _, id := range []string{"", "farebox-station-ct_nope", "farebox-station-xx_22nd_street", "farebox-station-ct22nd_street", "farebox-station-ct_70021~"} {
			checkCached(t, ix, id, at, 5, &st, "unknown station")
		}
		for _, n := range []int{0, 101, -1} {
			checkCached(t, ix, "farebox-station-ct_22nd_street", at, n, &st, "bad max")
			checkCached(t, ix, "farebox-station-ct_nope", at, n, &st, "bad max and station")
		}
		checkCached(t, ix, "farebox-station-ct_22nd_street", at, 5, &st, "valid")
	}
	if _, err := ix.AppendDeparturesJSON(nil, "farebox-station-ct_22nd_street", at, 101); !isKind(err, apperr.Invalid) {
		t.Fatalf("max 101 on a cached station: %v", err)
	}
	if _, err := ix.AppendDeparturesJSON(nil, "farebox-station-ct_nope", at, 5); !isKind(err, apperr.NotFound) {
		t.Fatalf("unknown station: %v", err)
	}
	if st.cached != 2 { // checkCached's second lookup of each valid query
		t.Fatalf("the valid queries should come from the cache: %+v", st)
	}
}

// cacheConsistent checks that every shard's byte count is the sum of its
// entries and returns the total.
func cacheConsistent(t *testing.T, c *boardCache) int64 {
	t.Helper()
	var total int64
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		var sum int64
		sh.m.Range(func(_, v any) bool {
			sum += v.(*boardEntry).size
			return true
		})
		if sum != sh.bytes {
			sh.mu.Unlock()
			t.Fatalf("shard %d: entries hold %d bytes, accounted %d", i, sum, sh.bytes)
		}
		if sh.bytes > c.shardCap {
			sh.mu.Unlock()
			t.Fatalf("shard %d: %d bytes over its share %d", i, sh.bytes, c.shardCap)
		}
		sh.mu.Unlock()
		total += sum
	}
	return total
}

// The cache never accounts more than its limit, its accounting matches its
// entries, finished minutes are dropped, and a limit below 0 turns it off.
func TestBoardCacheMemory(t *testing.T) {
	const limit = 256 << 10
	in := []FeedInput{{ID: "mnr", Feed: feed(t, "nyc/metro-north.zip")}, {ID: "bart", Feed: feed(t, "bart-2019.zip")}}
	ix, err := New(in, Options{BoardCacheBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Date(2026, 10, 5, 12, 0, 0, 0, time.UTC)
	ix.cache.now = func() time.Time { return wall }
	rng := rand.New(rand.NewPCG(5, 5))
	var st cacheStats
	peak := int64(0)
	for q := 0; q < 3000; q++ {
		e := ix.stations[rng.IntN(len(ix.stations))]
		at := wall.Add(time.Duration(rng.IntN(6*3600)) * time.Second)
		if e.fi.id == "bart" {
			at = time.Date(2019, 8, 7, 6, 0, 0, 0, la(t)).Add(time.Duration(rng.IntN(12*3600)) * time.Second)
		}
		if q%10 == 0 {
			checkCached(t, ix, e.id, at, 1+rng.IntN(MaxDepartures), &st, "fill")
		} else {
			if _, err := ix.AppendDeparturesJSON(nil, e.id, at, 1+rng.IntN(MaxDepartures)); err != nil {
				t.Fatal(err)
			}
		}
		n := cacheConsistent(t, ix.cache)
		if n > limit {
			t.Fatalf("%d bytes cached, limit %d", n, limit)
		}
		peak = max(peak, n)
	}
	if peak < limit/2 {
		t.Fatalf("the cache never filled (peak %d of %d): the limit is not exercised", peak, limit)
	}

	// Minutes before the wall clock's minus keepMinutes go on the next
	// store into their shard; later ones stay.
	ix, _ = New(in, Options{})
	ix.cache.now = func() time.Time { return wall }
	var keys []boardKey
	for _, e := range ix.stations {
		if e.fi.id != "mnr" || len(keys) >= 80 {
			continue
		}
		for m := -4; m <= 3; m++ {
			at := wall.Add(time.Duration(m) * time.Minute)
			if _, err := ix.AppendDeparturesJSON(nil, e.id, at, 10); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, boardKey{station: e.id, minute: floorDiv(at.Unix(), 60)})
		}
	}
	for _, k := range keys {
		if ix.cache.load(k) == nil {
			t.Fatalf("%v not cached", k)
		}
	}
	if len(keys) < 40 {
		t.Fatalf("only %d entries stored", len(keys))
	}
	wall = wall.Add(10 * time.Minute)
	var fresh []boardKey
	for i := 0; i < 400; i++ { // a store into every shard
		e := ix.stations[i%len(ix.stations)]
		at := wall.Add(time.Duration(i) * time.Minute)
		if _, err := ix.AppendDeparturesJSON(nil, e.id, at, 1); err != nil {
			t.Fatal(err)
		}
		fresh = append(fresh, boardKey{station: e.id, minute: floorDiv(at.Unix(), 60)})
	}
	for _, k := range keys {
		if ix.cache.load(k) != nil {
			t.Fatalf("%v still cached %d minutes later", k, floorDiv(wall.Unix(), 60)-k.minute)
		}
	}
	for _, k := range fresh {
		if e := ix.cache.load(k); e == nil && ix.byID["mnr"].dayOf(k.minute*60) == ix.byID["mnr"].dayOf(k.minute*60+59) {
			t.Fatalf("%v (not over) was dropped", k)
		}
	}
	cacheConsistent(t, ix.cache)

	off, _ := New(in, Options{BoardCacheBytes: -1})
	if off.cache != nil {
		t.Fatal("a negative limit must turn the cache off")
	}
	checkCached(t, off, "farebox-station-mnr_1", wall, 10, &st, "off")
}

// Many goroutines on a few keys while the snapshot changes, the small
// cache clears shards and the wall clock moves: every answer is one of
// the boards Departures gives under one of the snapshots. Run with -race.
func TestCachedBoardsConcurrent(t *testing.T) {
	base := loadSnapshot(t, "caltrain-2023-trip-updates.pb")
	snaps := []*realtime.Snapshot{base, alterSnapshot(base, 300), nil}
	rt := &swapRT{}
	ix, err := New([]FeedInput{{ID: "ct", Feed: feed(t, "caltrain-2023.zip")}}, Options{Realtime: rt, BoardCacheBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var wallNs atomic.Int64
	wallNs.Store(base.Timestamp.UnixNano())
	ix.cache.now = func() time.Time { return time.Unix(0, wallNs.Load()) }
	stations := []string{"farebox-station-ct_22nd_street", "farebox-station-ct_san_francisco", "farebox-station-ct_70021", "farebox-station-ct_sj_diridon", "farebox-station-ct_palo_alto"}
	type query struct {
		id  string
		at  time.Time
		max int
	}
	var queries []query
	for i := 0; i < 60; i++ {
		at := base.Timestamp.Add(time.Duration(i%6-2)*time.Minute + time.Duration(i*997)*time.Millisecond)
		queries = append(queries, query{stations[i%len(stations)], at, 1 + (i*37)%MaxDepartures})
	}
	// The boards each query may give: one per snapshot.
	want := make([][][]byte, len(queries))
	for _, s := range snaps {
		rt.p.Store(s)
		for i, q := range queries {
			deps, err := ix.Departures(q.id, q.at, q.max)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = append(want[i], AppendDeparturesJSON(nil, deps))
		}
	}
	var wg sync.WaitGroup
	var answers atomic.Int64
	stop := make(chan struct{})
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var buf []byte
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				i := (w*7 + n*13) % len(queries)
				q := queries[i]
				var err error
				buf, err = ix.AppendDeparturesJSON(buf[:0], q.id, q.at, q.max)
				if err != nil {
					t.Error(err)
					return
				}
				answers.Add(1)
				ok := false
				for _, wb := range want[i] {
					ok = ok || bytes.Equal(buf, wb)
				}
				if !ok {
					t.Errorf("%s at %s max %d: board of no snapshot:\n%s", q.id, q.at, q.max, buf)
					return
				}
			}
		}(w)
	}
	for i := 0; i < 200; i++ {
		rt.p.Store(snaps[i%len(snaps)])
		if i%50 == 49 {
			wallNs.Add(int64(3 * time.Minute))
		}
		time.Sleep(200 * time.Microsecond)
	}
	close(stop)
	wg.Wait()
	if answers.Load() < 1000 {
		t.Fatalf("only %d answers checked", answers.Load())
	}
	cacheConsistent(t, ix.cache)
}

var (
	busyOnce sync.Once
	busyData *gtfs.Feed
)

// busyFeed is a synthetic feed with more departures than any real one in
// the test data: from 04:00 to 26:00 every 20 s three trips leave, two of
// them from platform P1 and one from P2 of station HUB, and all three five
// minutes later from the standalone stop S (ties at one stop). Line names
// and trip ids are ordered unlike the stop times, so that the board order
// differs from the order of the timetable rows.
func busyFeed(t *testing.T) *gtfs.Feed {
	t.Helper()
	busyOnce.Do(func() {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		add := func(name, body string) {
			w, err := zw.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = w.Write([]byte(body))
		}
		add("agency.txt", "agency_id,agency_name,agency_url,agency_timezone\nA,Busy Lines,https://example.org,Europe/Berlin\n")
		add("stops.txt", "stop_id,stop_name,stop_lat,stop_lon,location_type,parent_station\n"+
			"HUB,Hub,52.5,13.4,1,\nP1,Hub,52.5,13.4,0,HUB\nP2,Hub,52.5,13.4,0,HUB\nS,Side street,52.51,13.41,0,\nZ,Terminus,52.6,13.5,0,\n")
		routes := "route_id,agency_id,route_short_name,route_long_name,route_type\n"
		for r := 0; r < 5; r++ {
			routes += fmt.Sprintf("R%d,A,%c%d,,3\n", r, 'E'-r, r)
		}
		add("routes.txt", routes)
		add("calendar.txt", "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nALL,1,1,1,1,1,1,1,20240101,20241231\n")
		var trips, times strings.Builder
		trips.WriteString("route_id,service_id,trip_id,trip_headsign\n")
		times.WriteString("trip_id,arrival_time,departure_time,stop_id,stop_sequence\n")
		clock := func(s int) string { return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60) }
		const n = 3 * 22 * 180
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("T%05d", (i*7919)%n)
			dep := 4*3600 + i/3*20
			plat := "P1"
			if i%3 == 2 {
				plat = "P2"
			}
			fmt.Fprintf(&trips, "R%d,ALL,%s,Terminus %d\n", (i*3)%5, id, i%4)
			fmt.Fprintf(&times, "%s,%s,%s,%s,1\n%s,%s,%s,S,2\n%s,%s,%s,Z,3\n", id, clock(dep), clock(dep), plat,
				id, clock(dep+300), clock(dep+300), id, clock(dep+900), clock(dep+900))
		}
		add("trips.txt", trips.String())
		add("stop_times.txt", times.String())
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := gtfs.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		busyData = f
	})
	if busyData == nil {
		t.Fatal("the synthetic feed failed to build")
	}
	return busyData
}

// busySnapshot predicts every trip of day leaving HUB within three hours
// of at: delays from -2 to +28 minutes, a tenth skipping the stop, one in
// twenty cancelled.
func busySnapshot(f *gtfs.Feed, rng *rand.Rand, day int32, at time.Time) *realtime.Snapshot {
	s := &realtime.Snapshot{Timestamp: at, Received: at, Trips: map[string][]*realtime.TripUpdate{}}
	loc, _ := time.LoadLocation(f.Timezone)
	base := gtfs.ServiceBase(day, loc).Unix()
	for tr := 0; tr < f.Trips.Len(); tr++ {
		first := f.Trips.First[tr]
		if d := base + int64(f.StopTimes.Departure[first]) - at.Unix(); d < -3*3600 || d > 3*3600 {
			continue
		}
		u := &realtime.TripUpdate{TripID: f.Trips.ID[tr], StartDate: day, StartTime: -1}
		switch k := rng.IntN(20); {
		case k == 0:
			u.Relationship = realtime.TripCanceled
		case k < 3:
			u.Stops = []realtime.StopUpdate{{Sequence: 1, HasSequence: true, Relationship: realtime.StopSkipped},
				{Sequence: 2, HasSequence: true, Departure: realtime.Event{Delay: int32(rng.IntN(1800)), HasDelay: true}}}
		case k < 15:
			u.Stops = []realtime.StopUpdate{{Sequence: 1, HasSequence: true, Departure: realtime.Event{Delay: int32(rng.IntN(1800) - 120), HasDelay: true}}}
		}
		s.Trips[u.TripID] = append(s.Trips[u.TripID], u)
		s.Updates++
	}
	return s
}

// TestCachedBoardsBusyStation: the synthetic busy feed (hundreds of
// departures within LateWindow, ties at one stop, heavy and changing
// predictions, a DST night) against Departures.
func TestCachedBoardsBusyStation(t *testing.T) {
	f := busyFeed(t)
	rng := rand.New(rand.NewPCG(8, 1))
	rt := &swapRT{}
	ix, err := New([]FeedInput{{ID: "busy", Feed: f}}, Options{Realtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	loc := loadLoc(t, "Europe/Berlin")
	ids := []string{"farebox-station-busy_HUB", "farebox-station-busy_P1", "farebox-station-busy_P2", "farebox-station-busy_S"}
	var st cacheStats
	changed := 0
	for _, day := range []time.Time{time.Date(2024, 6, 12, 0, 0, 0, 0, loc), time.Date(2024, 10, 26, 0, 0, 0, 0, loc), time.Date(2024, 10, 27, 0, 0, 0, 0, loc)} {
		for round := 0; round < 40; round++ {
			at := day.Add(time.Duration(rng.Int64N(30*3600e3)) * time.Millisecond)
			l := at.In(loc)
			sday := gtfs.DayNumber(l.Year(), int(l.Month()), l.Day())
			if l.Hour() < 3 {
				sday-- // the night belongs to the previous service day
			}
			snaps := []*realtime.Snapshot{busySnapshot(f, rng, sday, at), busySnapshot(f, rng, sday, at), nil}
			rt.p.Store(snaps[rng.IntN(len(snaps))])
			id := ids[rng.IntN(len(ids))]
			start := time.UnixMilli(floorDiv(at.Unix(), 60) * 60000)
			max := randMax(rng)
			checkCached(t, ix, id, at, max, &st, "cold")
			before := checkCached(t, ix, id, at, max, &st, "warm")
			for q := 0; q < 8; q++ {
				checkCached(t, ix, id, start.Add(time.Duration(rng.Int64N(60000))*time.Millisecond), randMax(rng), &st, "same minute")
			}
			checkCached(t, ix, id, start, max, &st, "minute start")
			checkCached(t, ix, id, start.Add(59999*time.Millisecond), max, &st, "minute end")
			next := snaps[rng.IntN(len(snaps))]
			if prev := rt.p.Swap(next); prev != next {
				if after := checkCached(t, ix, id, at, max, &st, "after swap"); !bytes.Equal(before, after) {
					changed++
				}
			}
		}
	}
	t.Logf("%d answers from the cache, %d computed, %d boards changed with the snapshot", st.cached, st.direct, changed)
	if st.cached < 3*st.direct || changed < 20 {
		t.Errorf("cache %d, computed %d, changed %d: the cache or the swap is not exercised", st.cached, st.direct, changed)
	}
}

// randMax draws board sizes, small ones (where ties at the cut are
// likely) as often as any.
func randMax(rng *rand.Rand) int {
	if rng.IntN(2) == 0 {
		return 1 + rng.IntN(12)
	}
	return 1 + rng.IntN(MaxDepartures)
}

// TestBoardIDsNameOneBoard: a BoardID names exactly one board's bytes
// (checkCached fails otherwise), over every second of several minutes and
// many board sizes at the synthetic busy station with heavy predictions
// (late departures drop out second by second), and boards asked for again
// in the minute share their IDs, which is what lets the HTTP layer keep
// one compressed copy per board (internal/httpapi/gzipcache.go).
func TestBoardIDsNameOneBoard(t *testing.T) {
	f := busyFeed(t)
	rng := rand.New(rand.NewPCG(21, 5))
	rt := &swapRT{}
	ix, err := New([]FeedInput{{ID: "busy", Feed: f}}, Options{Realtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	loc := loadLoc(t, "Europe/Berlin")
	var st cacheStats
	asked := map[BoardID]int{}
	lateCuts := 0
	for _, at := range []time.Time{time.Date(2024, 6, 12, 8, 0, 0, 0, loc), time.Date(2024, 6, 12, 17, 31, 0, 0, loc), time.Date(2024, 10, 27, 2, 15, 0, 0, loc)} {
		l := at.In(loc)
		sday := gtfs.DayNumber(l.Year(), int(l.Month()), l.Day())
		if l.Hour() < 3 {
			sday--
		}
		rt.p.Store(busySnapshot(f, rng, sday, at))
		for _, id := range []string{"farebox-station-busy_HUB", "farebox-station-busy_P1"} {
			for sec := 0; sec < 60; sec++ {
				for _, max := range []int{1, 3, 10, 37, MaxDepartures} {
					q := at.Add(time.Duration(sec)*time.Second + time.Duration(rng.IntN(1000))*time.Millisecond)
					checkCached(t, ix, id, q, max, &st, "second by second")
					b, err := ix.DeparturesJSON(id, q, max)
					if err != nil {
						t.Fatal(err)
					}
					if bid, ok := b.ID(); ok {
						asked[bid]++
						if bid.late > 0 {
							lateCuts++
						}
					}
				}
			}
		}
	}
	shared := 0
	for _, n := range asked {
		if n > 1 {
			shared++
		}
	}
	t.Logf("%d boards from the cache, %d computed; %d distinct IDs, %d asked for more than once, %d cuts with late departures", st.cached, st.direct, len(st.ids), shared, lateCuts)
	if st.cached < 10*st.direct || shared == 0 || lateCuts == 0 || len(st.ids) < 50 {
		t.Errorf("the IDs are not exercised: %d cached, %d computed, %d IDs, %d shared, %d late cuts", st.cached, st.direct, len(st.ids), shared, lateCuts)
	}
}
