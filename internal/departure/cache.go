package departure

import (
	"cmp"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/realtime"
)

// Board cache. Clients ask for the board of "now", so the same station is
// asked for again and again with a time that moves by milliseconds. An
// Index keeps, per station id and minute (Unix seconds floored to 60), the
// boards Departures scans from the start of that minute, every entry
// already encoded as JSON. A query at any second of the minute cuts its
// board out of the cached one: no scan, no trip ids, no encoding.
//
// Why the cut is the board Departures computes. Let S(t) be the departures
// fi.board may return for a query at t: scheduled at or after t on the
// service days it scans, which depend only on the local date of t. All
// seconds of a minute have the same local date (buildEntry checks; only
// zone offsets with seconds, before about 1972, break it), so S(t) is S(b)
// without what leaves before t, b being the minute's start. fi.board(t, n)
// returns the first n of S(t) in board order (it takes n timetable events
// per stop and service day and every further one tied with the n-th, so a
// tie at the cut is broken by the board order, never by timetable rows).
// Hence (exactBoard) a board shorter than n is all of S(t), and a full one
// holds exactly the departures of S(t) before its last second: anything it
// left out leaves at or after that second.
//
// So an entry holds an exact, sorted prefix of S(b) and the time up to
// which it is exact, and a query at t reads it from t on (serve), with
// Departures' limits: max entries; with realtime, first the departures the
// snapshot predicts very late (scheduled from t-LateLookBack to
// t-LateWindow, predicted at or after t: the entry holds those of the
// whole minute, veryLate, from the snapshot's index, which is complete),
// then the first 100 departures
// from t-LateWindow (one day ahead) that are scheduled before t and
// predicted at or after it, for which an entry also holds that second board
// and every entry's prediction, then the departures of S(t) whose stop is
// not skipped. Departures reads S(t) until the board is full or S(t) is
// exhausted, however many stops are skipped, so its board is the first max
// of that sequence whatever its rounds; serve walks the exact prefix the
// same way and reports the entry insufficient when the prefix ends first
// (until is not untilAll): the departure at until could be next. Then
// DeparturesJSON builds an entry for twice as many departures, up to
// maxCachedLen, and past that computes the board directly.
//
// Queries are whole seconds: t is querySecond of the instant asked for,
// the first whole second at or after it, in both paths.
//
// An entry belongs to the realtime snapshot it was built with; a query
// whose feed has another snapshot now (or none) rebuilds it. The same
// holds for the alerts snapshot. An entry shows the alerts active at its
// minute's start; it is built only when no active period starts or ends
// from one second before the minute to one after it (stableWithin), so
// they are the alerts active at every second of the minute; else the
// board is computed. Entries are per alert language (the key). The Index is
// replaced on every feed change, and its cache with it.

// DefaultBoardCacheBytes is the board cache size when Options leave it 0.
const DefaultBoardCacheBytes = 32 << 20

const (
	cacheShards  = 16
	keepMinutes  = 2                    // minutes before the wall-clock minute that stay cached
	maxCachedLen = 4096                 // longest board an entry computes
	noDeparture  = math.MinInt64        // boardItem.dep without a usable prediction
	untilAll     = int64(math.MaxInt64) // boardList.until of a complete board
	entryBytes   = 512                  // accounted per entry beyond its slices: struct, key, map nodes
	lateSeconds  = int64(LateWindow / time.Second)
)

// boardItem is one departure of a cached board.
type boardItem struct {
	at  int64 // scheduled Unix seconds
	dep int64 // predicted departure, noDeparture without one or when realtime skips the stop
	// buf[start:end] is the entry's JSON object and a comma; empty when the
	// entry can never be written (a skipped stop, a late entry that is not
	// predicted to leave within the minute or after it).
	start, end uint32
	skipped    bool
}

// boardList is an exact prefix of a board: every departure scheduled
// before until, in board order.
type boardList struct {
	items []boardItem
	until int64 // untilAll: the board is complete
}

type boardEntry struct {
	id     uint64 // unique in the process (entryIDs): names the entry's bytes in BoardID
	fi     *feedIndex
	snap   *realtime.Snapshot // the snapshot the predictions come from (nil: none)
	alerts *alertIndex        // the alerts shown (nil: none); constant over the minute
	minute int64
	need   int       // the entry holds need departures after its minute (realtime: max+10 and more while skipped stops leave boards short)
	ahead  boardList // the board from the minute's start
	late   boardList // realtime: the board from LateWindow before it, cut at the minute's end
	// realtime: the departures scheduled from LateLookBack before the
	// minute's start to LateWindow before its end that the snapshot
	// predicts to leave at or after its start (addedIndex.late)
	veryLate []boardItem
	buf      []byte
	size     int64 // accounted bytes
}

// entryIDs numbers board entries: an entry never changes once built, so its
// number and a cut name a board's bytes (BoardJSON.ID).
var entryIDs atomic.Uint64

type boardKey struct {
	station string
	minute  int64
	lang    string // the alerts' language ("": each text's first translation)
}

type boardCache struct {
	shards   [cacheShards]cacheShard
	shardCap int64
	seed     maphash.Seed
	now      func() time.Time // wall clock: which minutes are over
}

// cacheShard: lookups only Load from m; stores, sweeps and the byte count
// take mu.
type cacheShard struct {
	m     sync.Map // boardKey → *boardEntry
	mu    sync.Mutex
	bytes int64
	swept int64 // wall-clock minute of the last sweep
}

func newBoardCache(limit int64) *boardCache {
	if limit < 0 {
		return nil
	}
	if limit == 0 {
		limit = DefaultBoardCacheBytes
	}
	return &boardCache{shardCap: limit / cacheShards, seed: maphash.MakeSeed(), now: time.Now}
}

func (c *boardCache) shard(k boardKey) *cacheShard {
	h := maphash.String(c.seed, k.station) ^ uint64(k.minute)*0x9e3779b97f4a7c15
	return &c.shards[h%cacheShards]
}

func (c *boardCache) load(k boardKey) *boardEntry {
	if v, ok := c.shard(k).m.Load(k); ok {
		return v.(*boardEntry)
	}
	return nil
}

// store adds e unless an entry at least as useful is there already. A shard
// over its share of the limit first drops the minutes that are over, then
// everything.
func (c *boardCache) store(k boardKey, e *boardEntry) {
	if e.size > c.shardCap {
		return
	}
	sh := c.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if v, ok := sh.m.Load(k); ok {
		old := v.(*boardEntry)
		if old.snap == e.snap && old.alerts == e.alerts && old.need >= e.need {
			return
		}
		sh.m.Delete(k)
		sh.bytes -= old.size
	}
	wall := floorDiv(c.now().Unix(), 60)
	if wall > sh.swept || sh.bytes+e.size > c.shardCap {
		sh.swept = max(sh.swept, wall)
		sh.m.Range(func(key, v any) bool {
			if old := v.(*boardEntry); old.minute < wall-keepMinutes {
				sh.m.Delete(key)
				sh.bytes -= old.size
			}
			return true
		})
	}
	if sh.bytes+e.size > c.shardCap {
		sh.m.Clear()
		sh.bytes = 0
	}
	sh.m.Store(boardKey{strings.Clone(k.station), k.minute, k.lang}, e)
	sh.bytes += e.size
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// BoardJSON is a departure board ready to be appended as JSON: what
// AppendDeparturesJSON(dst, Departures(...)) would append. It stays valid
// however the cache changes.
type BoardJSON struct {
	e                  *boardEntry
	deps               []Departure // computed directly (e == nil)
	now                int64
	vFrom, vTo         int // e.veryLate to scan
	vLate              int // of those, how many are written (predicted to leave at or after now)
	lateFrom, lateTo   int // e.late.items to scan for late entries
	late               int // of those, how many are written (predicted to leave at or after now)
	aheadFrom, aheadTo int // e.ahead.items written as one run
	size               int
}

// BoardID names the bytes of a board served from the board cache: two
// boards with the same ID append the same bytes, whenever they were
// asked for. An entry never changes once built (a new snapshot, alert or
// feed builds a new one, with a new number); a cut is its two item ranges
// and the number of late items written, which fixes which ones: the late
// items written are those of the range predicted to leave at or after the
// query's second, a set that only shrinks as the second grows, so two
// seconds writing as many write the same ones. The same holds for the
// very late items (scheduled more than LateWindow before the query).
type BoardID struct {
	entry                                      uint64
	vFrom, vTo, vLate                          int32
	lateFrom, lateTo, late, aheadFrom, aheadTo int32
}

// ID is the board's BoardID, false for a board computed directly (not
// from the cache).
func (b *BoardJSON) ID() (BoardID, bool) {
	if b.e == nil {
		return BoardID{}, false
	}
	return BoardID{b.e.id, int32(b.vFrom), int32(b.vTo), int32(b.vLate), int32(b.lateFrom), int32(b.lateTo), int32(b.late), int32(b.aheadFrom), int32(b.aheadTo)}, true
}

// SizeHint is the number of bytes AppendJSON appends: exact for a cached
// board, an estimate for one computed directly.
func (b *BoardJSON) SizeHint() int {
	if b.e == nil {
		n := 2 + 384*len(b.deps)
		for i := range b.deps {
			n += len(b.deps[i].Trip.alertsJSON)
		}
		return n
	}
	return b.size
}

// AppendJSON appends the board as a JSON array.
func (b *BoardJSON) AppendJSON(dst []byte) []byte {
	if b.e == nil {
		return AppendDeparturesJSON(dst, b.deps)
	}
	dst = append(dst, '[')
	n := len(dst)
	buf := b.e.buf
	for _, it := range b.e.veryLate[b.vFrom:b.vTo] {
		if it.dep >= b.now {
			dst = append(dst, buf[it.start:it.end]...)
		}
	}
	for _, it := range b.e.late.items[b.lateFrom:b.lateTo] {
		if it.dep >= b.now {
			dst = append(dst, buf[it.start:it.end]...)
		}
	}
	if b.aheadTo > b.aheadFrom {
		items := b.e.ahead.items
		dst = append(dst, buf[items[b.aheadFrom].start:items[b.aheadTo-1].end]...)
	}
	if len(dst) == n {
		return append(dst, ']')
	}
	dst[len(dst)-1] = ']' // the last entry's comma
	return dst
}

// DeparturesJSON returns the board Departures(stationID, at, max) would
// return, with the same errors, ready to be written as JSON. Boards come
// from the Index's board cache when they provably equal the computed ones
// (see cache.go); otherwise they are computed.
func (ix *Index) DeparturesJSON(stationID string, at time.Time, max int) (BoardJSON, error) {
	return ix.DeparturesJSONLang(stationID, at, max, "")
}

// DeparturesJSONLang is DeparturesJSON for DeparturesLang: alert texts in
// the language picked from acceptLanguage. Entries are per language (the
// key holds the language picked).
func (ix *Index) DeparturesJSONLang(stationID string, at time.Time, max int, acceptLanguage string) (BoardJSON, error) {
	c := ix.cache
	if c == nil || max < 1 || max > MaxDepartures {
		return ix.directJSON(stationID, at, max, acceptLanguage)
	}
	now := querySecond(at)
	key := boardKey{station: stationID, minute: floorDiv(now, 60)}
	var ai *alertIndex
	known := false // ai is the station's feed's
	if acceptLanguage != "" && ix.alertSrc != nil {
		if fi, _, _ := ix.cutID(stationID, "-station-"); fi != nil {
			ai, known = ix.alertsOf(fi), true
			key.lang = ai.language(acceptLanguage)
		}
	}
	e := c.load(key)
	var snap *realtime.Snapshot
	need := 0 // the entry to build serves boards this long
	if e != nil {
		snap = ix.snapshot(e.fi)
		if !known {
			ai, known = ix.alertsOf(e.fi), true
		}
		need = e.need
		if e.snap == snap && e.alerts == ai {
			b, st := e.serve(now, max)
			if st == served {
				return b, nil
			}
		}
	}
	fi, stop, err := ix.boardStation(stationID, max)
	if err != nil {
		return BoardJSON{}, err
	}
	if e == nil {
		snap = ix.snapshot(fi)
		if !known {
			ai = ix.alertsOf(fi)
		}
		if prev := c.load(boardKey{station: stationID, minute: key.minute - 1, lang: key.lang}); prev != nil {
			need = prev.need // boards this long were asked for a minute ago
		}
	}
	want := max
	if snap != nil {
		want = max + 10
	}
	if need < want {
		need = want
	}
	if !ai.stableWithin(key.minute*60-1, key.minute*60+60) {
		// An alert starts or ends within the minute: the entries would differ
		// between its seconds.
		return ix.directJSON(stationID, at, max, acceptLanguage)
	}
	var ac *alertCtx
	if ai != nil {
		ac = &alertCtx{ai: ai, at: key.minute * 60, lang: key.lang}
	}
	for {
		e = ix.buildEntry(fi, fi.departStops(stop), key.minute, snap, ac, need)
		if e == nil {
			break
		}
		c.store(key, e)
		if b, st := e.serve(now, max); st == served {
			return b, nil
		}
		// Skipped stops left the board short: twice as many departures
		// (the same bound as Departures), up to the longest entry.
		if need >= maxCachedLen {
			break
		}
		need = min(2*need, maxCachedLen)
	}
	return ix.directJSON(stationID, at, max, acceptLanguage)
}

// AppendDeparturesJSON appends the board Departures(stationID, at, max)
// would return as JSON, exactly the bytes of the package-level
// AppendDeparturesJSON, with the same errors (dst is returned unchanged).
func (ix *Index) AppendDeparturesJSON(dst []byte, stationID string, at time.Time, max int) ([]byte, error) {
	b, err := ix.DeparturesJSON(stationID, at, max)
	if err != nil {
		return dst, err
	}
	return b.AppendJSON(slices.Grow(dst, b.SizeHint())), nil
}

func (ix *Index) directJSON(stationID string, at time.Time, max int, acceptLanguage string) (BoardJSON, error) {
	deps, err := ix.DeparturesLang(stationID, at, max, acceptLanguage)
	if err != nil {
		return BoardJSON{}, err
	}
	return BoardJSON{deps: deps}, nil
}

type serveResult int

const (
	served       serveResult = iota
	insufficient             // the entry is too short for this query: build a longer one
)

// serve cuts the board for a query at now (within the entry's minute) out
// of the entry, applying Departures' rules to the exact prefixes.
func (e *boardEntry) serve(now int64, max int) (BoardJSON, serveResult) {
	out := BoardJSON{e: e, now: now}
	items := e.ahead.items
	i0 := firstAtOrAfter(items, now)
	avail := len(items) - i0
	complete := e.ahead.until == untilAll
	if e.snap == nil {
		// Departures = board(now, max).
		if avail < max && !complete {
			return out, insufficient
		}
		n := min(avail, max)
		out.aheadFrom, out.aheadTo = i0, i0+n
		if n > 0 {
			out.size = int(items[i0+n-1].end-items[i0].start) + 1
		} else {
			out.size = 2
		}
		return out, served
	}

	// The very late part: scheduled in [now-LateLookBack, now-LateWindow),
	// predicted at or after now, as many as fit.
	count, size := 0, 0
	vl := e.veryLate
	v := firstAtOrAfter(vl, now-lookBackSeconds)
	out.vFrom = v
	for v1 := firstAtOrAfter(vl, now-lateSeconds); v < v1 && count < max; v++ {
		if it := &vl[v]; it.dep >= now {
			count++
			size += int(it.end - it.start)
		}
	}
	out.vTo, out.vLate = v, count

	// The late part: board(now-LateWindow, 100, 1) before now. Its first
	// nlt entries are before now; those are known when the list covers
	// now, or when at least 101 of them are known (the 101st decides ties).
	late := e.late.items
	j0 := firstAtOrAfter(late, now-lateSeconds)
	var j1 int
	if e.late.until >= now {
		j1 = j0 + firstAtOrAfter(late[j0:], now)
	} else {
		if len(late)-j0 <= MaxDepartures {
			return out, insufficient
		}
		j1 = len(late)
	}
	nB := min(j1-j0, MaxDepartures)
	k := j0
	for ; k < j0+nB && count < max; k++ {
		if it := &late[k]; it.dep >= now {
			count++
			size += int(it.end - it.start)
		}
	}
	out.lateFrom, out.lateTo, out.late = j0, k, count-out.vLate
	// The board(now) part: the first entries not skipped, as many as fit.
	// When the exact prefix ends before the board is full, more
	// departures may follow (Departures reads on): build a longer entry.
	a := i0
	for ; count < max; a++ {
		if a == len(items) {
			if !complete {
				return out, insufficient
			}
			break
		}
		if !items[a].skipped {
			count++
		}
	}
	if a > i0 {
		size += int(items[a-1].end - items[i0].start)
	}
	out.aheadFrom, out.aheadTo = i0, a
	if size == 0 {
		out.size = 2
	} else {
		out.size = size + 1
	}
	return out, served
}

// firstAtOrAfter is the index of the first item scheduled at or after t.
func firstAtOrAfter(items []boardItem, t int64) int {
	i, _ := slices.BinarySearchFunc(items, t, func(it boardItem, t int64) int { return cmp.Compare(it.at, t) })
	return i
}

// exactBoard runs fi.board(from, n) and keeps its exact part: all of it
// when it is shorter than n, else the departures before its last second.
func (fi *feedIndex) exactBoard(stops []int32, from int64, n int, daysAhead int32, ad *addedIndex) ([]candidate, int64) {
	c := fi.board(stops, from, unixIn(from, fi), n, daysAhead, ad)
	if len(c) < n {
		return c, untilAll
	}
	until := c[n-1].at
	i := len(c)
	for i > 0 && c[i-1].at == until {
		i--
	}
	return c[:i], until
}

func (fi *feedIndex) dayOf(ts int64) int32 {
	l := unixIn(ts, fi)
	return gtfs.DayNumber(l.Year(), int(l.Month()), l.Day())
}

// buildEntry computes the entry of a minute for boards of up to need
// entries (realtime: max+10), or nil when the minute spans two local dates.
func (ix *Index) buildEntry(fi *feedIndex, stops []int32, minute int64, snap *realtime.Snapshot, ac *alertCtx, need int) *boardEntry {
	b := minute * 60
	last := b + 59 // the last whole second a query of this minute can ask for
	if fi.dayOf(b) != fi.dayOf(last) || snap != nil && fi.dayOf(b-lateSeconds) != fi.dayOf(last-lateSeconds) {
		return nil
	}
	e := &boardEntry{id: entryIDs.Add(1), fi: fi, snap: snap, minute: minute, need: need}
	ad := ix.addedOf(fi, snap)
	if ac != nil {
		e.alerts = ac.ai
	}

	// Long enough that a query at the last second still finds need
	// departures after it.
	var ahead []candidate
	for n := need + 8; ; n = min(2*n+need, maxCachedLen) {
		ahead, e.ahead.until = fi.exactBoard(stops, b, n, ix.daysAhead, ad)
		if e.ahead.until == untilAll || len(ahead)-firstCandidateAt(ahead, last) >= need || n >= maxCachedLen {
			break
		}
	}
	var late, veryLate []candidate
	if snap != nil {
		for _, ev := range ad.lateEvents(stops, b-lookBackSeconds, b+60-lateSeconds, b) {
			veryLate = append(veryLate, ev.c)
		}
		// Long enough to cover the minute, or 101 departures from
		// LateWindow before its last second.
		for n := MaxDepartures + 9; ; n = min(2*n, maxCachedLen) {
			late, e.late.until = fi.exactBoard(stops, b-lateSeconds, n, 1, ad)
			if e.late.until >= last || len(late)-firstCandidateAt(late, last-lateSeconds) > MaxDepartures || n >= maxCachedLen {
				break
			}
		}
		// Departures scheduled from the minute's end on are never late
		// for a query within it.
		late = late[:firstCandidateAt(late, b+60)]
		e.late.until = min(e.late.until, b+60)
	}

	buf := make([]byte, 0, 400*len(ahead)+64)
	e.ahead.items, buf = ix.encodeItems(fi, snap, ad, ac, stops, ahead, buf, math.MinInt64)
	e.late.items, buf = ix.encodeItems(fi, snap, ad, ac, stops, late, buf, b)
	e.veryLate, buf = ix.encodeItems(fi, snap, ad, ac, stops, veryLate, buf, b)
	if len(buf) > math.MaxUint32 {
		return nil
	}
	e.buf = append([]byte(nil), buf...)
	e.size = int64(cap(e.buf)) + int64(cap(e.ahead.items)+cap(e.late.items)+cap(e.veryLate))*int64(unsafe.Sizeof(boardItem{})) + entryBytes
	return e
}

// encodeItems resolves candidates against snap and encodes those that can
// be written: every one not skipped when writeFrom is MinInt64 (the
// board(now) part), else only those predicted to leave at or after
// writeFrom (late entries).
func (ix *Index) encodeItems(fi *feedIndex, snap *realtime.Snapshot, ad *addedIndex, ac *alertCtx, stops []int32, cands []candidate, buf []byte, writeFrom int64) ([]boardItem, []byte) {
	items := make([]boardItem, len(cands))
	for i, c := range cands {
		k, p, pos, skip := ix.resolve(fi, snap, ad, stops, c)
		it := boardItem{at: c.at, dep: noDeparture}
		if p != nil {
			if skip {
				it.skipped = true
			} else if ps := p.stops[pos]; ps.hasDep {
				it.dep = ps.dep
			}
		}
		it.start = uint32(len(buf))
		if !it.skipped && (writeFrom == math.MinInt64 || it.dep >= writeFrom) {
			d := ix.departureOf(k, c, p, pos, ac)
			buf = append(appendDepartureJSON(buf, &d), ',')
		}
		it.end = uint32(len(buf))
		items[i] = it
	}
	return items, buf
}

// firstCandidateAt is the index of the first candidate scheduled at or after t.
func firstCandidateAt(c []candidate, t int64) int {
	i, _ := slices.BinarySearchFunc(c, t, func(c candidate, t int64) int { return cmp.Compare(c.at, t) })
	return i
}
