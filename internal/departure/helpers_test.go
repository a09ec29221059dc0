package departure

import (
	"slices"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/realtime"
	"github.com/farebox/farebox/internal/shareddata"
	"github.com/farebox/farebox/internal/testtool"
)

var dataDir = shareddata.Path("gtfs") + "/"

// feed parses a shared test feed once per test binary.
func feed(t testing.TB, name string) *gtfs.Feed { return testtool.GTFSFeed(t, name) }

func index(t testing.TB, rt Realtime, feeds ...string) *Index {
	t.Helper()
	var in []FeedInput
	for i := 0; i+1 < len(feeds); i += 2 {
		in = append(in, FeedInput{ID: feeds[i], Feed: feed(t, feeds[i+1])})
	}
	ix, err := New(in, Options{Realtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// fixedRT serves one snapshot for every feed.
type fixedRT struct{ s *realtime.Snapshot }

func (f fixedRT) TripUpdates(string) *realtime.Snapshot { return f.s }

// oracleDep is one departure computed by brute force from the raw feed.
type oracleDep struct {
	at   int64
	trip string
	day  int32
}

// oracle computes a board naively: every stop time at the given stops (not
// last stop, not pickup_type 1) on every service day around the query,
// placed with noon minus 12 h, filtered by calendar, sorted. It shares no
// code with the index except gtfs.Service.Active and gtfs.ServiceBase.
func oracle(f *gtfs.Feed, stops []int32, at time.Time, max int) []oracleDep {
	loc, _ := time.LoadLocation(f.Timezone)
	l := at.In(loc)
	today := gtfs.DayNumber(l.Year(), int(l.Month()), l.Day())
	want := map[int32]bool{}
	for _, s := range stops {
		want[s] = true
	}
	var out []oracleDep
	for d := today - 3; d <= today+7; d++ { // the index looks MaxDaysAhead (7) days forward
		base := gtfs.ServiceBase(d, loc).Unix()
		for tr := 0; tr < f.Trips.Len(); tr++ {
			if !f.Services[f.Trips.Service[tr]].Active(d) {
				continue
			}
			for i := f.Trips.First[tr]; i < f.Trips.First[tr+1]-1; i++ {
				if !want[f.StopTimes.Stop[i]] || f.StopTimes.Flags[i]&gtfs.NoPickup != 0 {
					continue
				}
				if ts := base + int64(f.StopTimes.Departure[i]); ts*1000 >= at.UnixMilli() {
					out = append(out, oracleDep{ts, f.Trips.ID[tr], d})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b oracleDep) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return 0
	})
	if len(out) > max {
		out = out[:max]
	}
	return out
}

func la(t testing.TB) *time.Location { return loadLoc(t, "America/Los_Angeles") }

func loadLoc(t testing.TB, name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func ms(t time.Time) int64 { return t.UnixMilli() }
