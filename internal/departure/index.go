package departure

import (
	"slices"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/realtime"
)

// Realtime is the overlay an Index consults on every query. *realtime.Hub
// implements it; it returns nil when a feed has no fresh predictions. When
// it also implements AlertSource, boards and trips show service alerts.
type Realtime interface {
	TripUpdates(feedID string) *realtime.Snapshot
}

// FeedInput is one feed to index under its feed id ([A-Za-z0-9-], at most 64 bytes).
type FeedInput struct {
	ID   string
	Feed *gtfs.Feed
}

// Options configure an Index.
type Options struct {
	Prefix       string   // id prefix; default "farebox"
	Realtime     Realtime // may be nil
	MaxDaysAhead int      // how many days after the query date a board may look; default 7
	// BoardCacheBytes caps the board cache (see DeparturesJSON): 0 means
	// DefaultBoardCacheBytes, a negative value turns the cache off.
	BoardCacheBytes int64
	// TileCacheBytes caps the vector tile cache: 0 means
	// DefaultTileCacheBytes, a negative value turns it off.
	TileCacheBytes int64
}

// Index is an immutable departure index over several feeds.
type Index struct {
	prefix    string
	rt        Realtime
	alertSrc  AlertSource // rt when it has alerts, else nil
	daysAhead int32
	feeds     []*feedIndex
	byID      map[string]*feedIndex
	stations  []stationEntry // searchable stations of all feeds
	cache     *boardCache    // nil when off; safe for concurrent use
	tiles     *tileCache     // vector tiles of this index (maps.go); safe for concurrent use
	mapOnce   sync.Once
	maps      *mapData // built on the first tile
}

type feedIndex struct {
	id       string
	f        *gtfs.Feed
	loc      *time.Location
	stopIdx  map[string]int32
	tripIdx  map[string]int32
	maxTime  int32 // largest time of any run, frequency instances included
	backDays int32 // service days before the query date that can still depart on it

	// Timetable departure events grouped by stop, sorted by departure seconds.
	evStart []int32 // len stops+1
	evDep   []int32
	evTrip  []int32
	evST    []int32
	// Frequency template events grouped by stop.
	fqStart []int32
	fqTrip  []int32
	fqST    []int32
	freq    map[int32][]gtfs.Frequency // windows per frequency-based trip

	children map[int32][]int32 // station → departure stops (itself and its platforms)
	svcBits  [][]uint64        // per service: active days from f.MinDay
	// dayBits[d] has one bit per service running on day MinDay+d: the
	// board's per-event check is then one load from a small, hot bitset.
	dayBits  [][]uint64
	lineName []string   // per route
	tripType []TripType // per route
	// stationIDs holds every stop's public id, built once so that board
	// entries (end_station_id) do not allocate it per query.
	stationIDs []string
	alerts     alertCache // the alert index of the last alerts snapshot seen
	added      addedCache // the extra runs of the last TripUpdates snapshot seen
}

// New builds an index. Feeds are namespaced by their ids, which must be unique.
func New(feeds []FeedInput, opt Options) (*Index, error) {
	const op = "departure.New"
	ix := &Index{prefix: opt.Prefix, rt: opt.Realtime, daysAhead: int32(opt.MaxDaysAhead), byID: map[string]*feedIndex{},
		cache: newBoardCache(opt.BoardCacheBytes), tiles: newTileCache(opt.TileCacheBytes)}
	ix.alertSrc, _ = opt.Realtime.(AlertSource)
	if ix.prefix == "" {
		ix.prefix = "farebox"
	}
	if ix.daysAhead <= 0 {
		ix.daysAhead = 7
	}
	for _, in := range feeds {
		if !ValidFeedID(in.ID) {
			return nil, apperr.E(op, apperr.Invalid, CodeInvalidFeedID, "feed ids use only letters, digits and '-' (got "+in.ID+")")
		}
		if ix.byID[in.ID] != nil {
			return nil, apperr.E(op, apperr.Conflict, CodeDuplicateFeedID, "feed id "+in.ID+" is used twice")
		}
		fi, err := buildFeed(in.ID, in.Feed)
		if err != nil {
			return nil, err
		}
		fi.stationIDs = make([]string, in.Feed.Stops.Len())
		for i := range fi.stationIDs {
			fi.stationIDs[i] = ix.prefix + "-station-" + fi.id + "_" + escapeID(in.Feed.Stops.ID[i])
		}
		ix.feeds = append(ix.feeds, fi)
		ix.byID[in.ID] = fi
	}
	ix.buildStations()
	for _, fi := range ix.feeds {
		ix.alertsOf(fi) // the alerts already polled, resolved before the first board
	}
	return ix, nil
}

func buildFeed(id string, f *gtfs.Feed) (*feedIndex, error) {
	loc, err := time.LoadLocation(f.Timezone)
	if err != nil {
		return nil, apperr.E("departure.New", apperr.Unprocessable, CodeGTFSBadTimezone, "feed "+id+" has an unknown time zone")
	}
	fi := &feedIndex{id: id, f: f, loc: loc, maxTime: f.MaxTime, freq: map[int32][]gtfs.Frequency{}}
	fi.stopIdx = make(map[string]int32, f.Stops.Len())
	for i, s := range f.Stops.ID {
		fi.stopIdx[s] = int32(i)
	}
	fi.tripIdx = make(map[string]int32, f.Trips.Len())
	for i, s := range f.Trips.ID {
		fi.tripIdx[s] = int32(i)
	}
	for _, fr := range f.Frequencies {
		fi.freq[fr.Trip] = append(fi.freq[fr.Trip], fr)
		first, last := f.Trips.First[fr.Trip], f.Trips.First[fr.Trip+1]-1
		if first <= last {
			fi.maxTime = max(fi.maxTime, fr.End-1+f.StopTimes.Arrival[last]-f.StopTimes.Departure[first])
		}
	}
	fi.backDays = fi.maxTime/86400 + 1
	fi.lineName = make([]string, len(f.Routes))
	fi.tripType = make([]TripType, len(f.Routes))
	for i, r := range f.Routes {
		fi.lineName[i] = r.ShortName
		if fi.lineName[i] == "" {
			fi.lineName[i] = r.LongName
		}
		fi.tripType[i] = typeOf(r.Type)
	}
	fi.buildEvents()
	fi.buildServices()
	fi.buildChildren()
	return fi, nil
}

// buildEvents collects every boarding stop time (not the trip's last stop,
// not pickup_type 1) per stop, sorted by departure seconds then stop time.
func (fi *feedIndex) buildEvents() {
	f := fi.f
	ns := f.Stops.Len()
	st := &f.StopTimes
	evCount := make([]int32, ns+1)
	fqCount := make([]int32, ns+1)
	for t := 0; t < f.Trips.Len(); t++ {
		_, isFreq := fi.freq[int32(t)]
		for i := f.Trips.First[t]; i < f.Trips.First[t+1]-1; i++ {
			if st.Flags[i]&gtfs.NoPickup != 0 {
				continue
			}
			if isFreq {
				fqCount[st.Stop[i]+1]++
			} else {
				evCount[st.Stop[i]+1]++
			}
		}
	}
	for i := 1; i <= ns; i++ {
		evCount[i] += evCount[i-1]
		fqCount[i] += fqCount[i-1]
	}
	keys := make([]uint64, evCount[ns])
	fi.fqTrip = make([]int32, fqCount[ns])
	fi.fqST = make([]int32, fqCount[ns])
	evFill := make([]int32, ns)
	fqFill := make([]int32, ns)
	for t := 0; t < f.Trips.Len(); t++ {
		_, isFreq := fi.freq[int32(t)]
		for i := f.Trips.First[t]; i < f.Trips.First[t+1]-1; i++ {
			if st.Flags[i]&gtfs.NoPickup != 0 {
				continue
			}
			s := st.Stop[i]
			if isFreq {
				k := fqCount[s] + fqFill[s]
				fi.fqTrip[k], fi.fqST[k] = int32(t), i
				fqFill[s]++
			} else {
				keys[evCount[s]+evFill[s]] = uint64(st.Departure[i])<<32 | uint64(uint32(i))
				evFill[s]++
			}
		}
	}
	for s := 0; s < ns; s++ {
		slices.Sort(keys[evCount[s]:evCount[s+1]])
	}
	stTrip := make([]int32, st.Len())
	for t := 0; t < f.Trips.Len(); t++ {
		for i := f.Trips.First[t]; i < f.Trips.First[t+1]; i++ {
			stTrip[i] = int32(t)
		}
	}
	fi.evDep = make([]int32, len(keys))
	fi.evST = make([]int32, len(keys))
	fi.evTrip = make([]int32, len(keys))
	for i, k := range keys {
		fi.evDep[i] = int32(k >> 32)
		fi.evST[i] = int32(uint32(k))
		fi.evTrip[i] = stTrip[fi.evST[i]]
	}
	fi.evStart, fi.fqStart = evCount, fqCount
}

// buildServices turns calendars into one bit per day from MinDay to MaxDay.
func (fi *feedIndex) buildServices() {
	f := fi.f
	days := int(f.MaxDay - f.MinDay + 1)
	fi.svcBits = make([][]uint64, len(f.Services))
	if days <= 0 {
		return
	}
	for i := range f.Services {
		bits := make([]uint64, (days+63)/64)
		for d := 0; d < days; d++ {
			if f.Services[i].Active(f.MinDay + int32(d)) {
				bits[d>>6] |= 1 << (d & 63)
			}
		}
		fi.svcBits[i] = bits
	}
	words := (len(f.Services) + 63) / 64
	flat := make([]uint64, days*words)
	fi.dayBits = make([][]uint64, days)
	for d := range fi.dayBits {
		fi.dayBits[d] = flat[d*words : (d+1)*words : (d+1)*words]
	}
	for i, bits := range fi.svcBits {
		for d := 0; d < days; d++ {
			if bits[d>>6]>>(d&63)&1 != 0 {
				fi.dayBits[d][i>>6] |= 1 << (i & 63)
			}
		}
	}
}

// activeOn returns the services running on day as a bitset (nil outside
// the feed's days); see dayEvents.
func (fi *feedIndex) activeOn(day int32) []uint64 {
	off := day - fi.f.MinDay
	if off < 0 || int(off) >= len(fi.dayBits) {
		return nil
	}
	return fi.dayBits[off]
}

// active reports whether the trip's service runs on day.
func (fi *feedIndex) active(trip int32, day int32) bool {
	off := day - fi.f.MinDay
	if off < 0 || day > fi.f.MaxDay {
		return false
	}
	return fi.svcBits[fi.f.Trips.Service[trip]][off>>6]>>(off&63)&1 != 0
}

// stationOf returns the stop shown as station for a stop: its parent
// station when it has one, else itself.
func (fi *feedIndex) stationOf(stop int32) int32 {
	if p := fi.f.Stops.Parent[stop]; p >= 0 && fi.f.Stops.Type[p] == gtfs.StopStation {
		return p
	}
	return stop
}

// buildChildren maps every station to its departure stops.
func (fi *feedIndex) buildChildren() {
	s := &fi.f.Stops
	fi.children = map[int32][]int32{}
	for i := 0; i < s.Len(); i++ {
		if s.Type[i] != gtfs.StopPlatform {
			continue
		}
		if p := fi.stationOf(int32(i)); p != int32(i) {
			fi.children[p] = append(fi.children[p], int32(i))
		}
	}
}

// departStops lists the stops whose departures a board for stop shows: a
// station includes itself and its platforms; a platform only itself.
func (fi *feedIndex) departStops(stop int32) []int32 {
	if fi.f.Stops.Type[stop] == gtfs.StopStation {
		return append([]int32{stop}, fi.children[stop]...)
	}
	return []int32{stop}
}

// isStation reports whether a stop is listed as a station: a station, or a
// stop without a parent station.
func (fi *feedIndex) isStation(stop int32) bool {
	switch fi.f.Stops.Type[stop] {
	case gtfs.StopStation:
		return true
	case gtfs.StopPlatform:
		return fi.stationOf(stop) == stop
	}
	return false
}

// BusiestStation returns the listed station with the most departure events
// (timetable rows, all service days together) and that count; benchmarks
// and load tests use it.
func (ix *Index) BusiestStation() (string, int) {
	best, bestN := "", -1
	for _, e := range ix.stations {
		n := 0
		for _, s := range e.fi.departStops(e.stop) {
			n += int(e.fi.evStart[s+1]-e.fi.evStart[s]) + int(e.fi.fqStart[s+1]-e.fi.fqStart[s])
		}
		if n > bestN {
			best, bestN = e.id, n
		}
	}
	return best, bestN
}
