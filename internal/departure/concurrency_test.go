package departure

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/realtime"
)

// Queries run while realtime snapshots are replaced and the index itself is
// swapped through an atomic.Pointer, as the server does on a feed change.
// Run with -race to check the sharing.
func TestConcurrentQueriesAndSwaps(t *testing.T) {
	data, err := os.ReadFile(dataDir + "caltrain-2023-trip-updates.pb")
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.NewFixed(time.Unix(1699405534, 0))
	hub := realtime.NewHub(clk, 0)
	var cur atomic.Pointer[Index]
	cur.Store(index(t, hub, "ct", "caltrain-2023.zip"))
	at := time.Date(2023, 11, 7, 17, 0, 0, 0, la(t))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				deps, err := cur.Load().Departures("farebox-station-ct_22nd_street", at, 6)
				if err != nil || len(deps) != 6 || deps[0].Trip.ID != "farebox-trip-ct_412_20231107" {
					t.Errorf("%v %v", err, tripsOf(deps))
					return
				}
			}
		}()
	}
	for i := 0; i < 20; i++ {
		s, err := realtime.Parse(data, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		hub.Set("ct", s)
		if i%5 == 0 {
			next, err := New([]FeedInput{{ID: "ct", Feed: feed(t, "caltrain-2023.zip")}}, Options{Realtime: hub})
			if err != nil {
				t.Fatal(err)
			}
			cur.Store(next)
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
}
