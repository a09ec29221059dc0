package httpapi_test

import (
	"strings"
	"testing"

	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/testtool"
)

// TestServiceAlerts: a configured alerts source (testtool.CaltrainAlerts
// in a file, polled like TripUpdates) puts the alerts that apply on board
// entries (trip.alerts), trips and trip stops, texts by Accept-Language;
// the responses match the OpenAPI document and the Kotlin shapes, and a
// board without alerts has no alerts key.
func TestServiceAlerts(t *testing.T) {
	t.Parallel()
	opts := transitAlertsOptions(t, rtNow, map[string]*gtfsrt.FeedMessage{"caltrain": testtool.CaltrainAlerts()}, caltrainFeeds...)
	type alertJSON struct {
		ID, Header, Description, URL, Cause, Effect string
		ActivePeriods                               []struct{ Start, End *int64 } `json:"active_periods"`
	}
	apitest.ForEachEngine(t, opts, func(t *testing.T, e *apitest.Env) {
		at := int64(testtool.CaltrainAgencyAlertStart+90) * 1000 // 17:02 PST
		for _, lang := range []string{"", "es-ES, en;q=0.5"} {
			r := e.Must(200, apitest.Req{Method: "GET", Path: departuresPath(station("caltrain_22nd_street"), at, 10), Key: e.LiveKey,
				Header: map[string]string{"Accept": "application/json", "Accept-Language": lang}})
			e.MustMatch("departures", r.Body, apitest.RArr(kotlinDeparture))
			var deps []struct {
				Departure map[string]any `json:"departure"`
				Trip      struct {
					ID     string      `json:"id"`
					Alerts []alertJSON `json:"alerts"`
				} `json:"trip"`
			}
			r.JSON(t, &deps)
			if len(deps) != 10 {
				t.Fatalf("%d departures", len(deps))
			}
			header := "Header "
			if lang != "" {
				header = "Encabezado "
			}
			for _, d := range deps {
				if len(d.Departure) != 3 {
					t.Fatalf("departure object %v: keys beyond the three the Kotlin client accepts", d.Departure)
				}
				ids := []string{}
				for _, a := range d.Trip.Alerts {
					ids = append(ids, a.ID)
					if a.Header != header+a.ID || a.URL != "https://www.caltrain.com/alerts/"+a.ID || a.Cause == "" || a.Effect == "" || a.ActivePeriods == nil {
						t.Fatalf("%s: alert %+v", d.Trip.ID, a)
					}
				}
				// Every entry: the station alert and the agency alert (active
				// since 17:00:30); trip 412 of Tuesday also its own.
				joined := strings.Join(ids, ",")
				if !strings.Contains(joined, "station-22nd") || !strings.Contains(joined, "agency-from-17:00:30") ||
					strings.Contains(joined, "agency-past") || strings.Contains(joined, "bart") || strings.Contains(joined, "wednesday") ||
					strings.Contains(joined, "rail-at-sf") || (d.Trip.ID == "farebox-trip-caltrain_412_20231107") != strings.Contains(joined, "trip-412") {
					t.Fatalf("%s: alerts %v", d.Trip.ID, ids)
				}
			}
		}
		// The trip: the run's alerts, the station's on its stop.
		r := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/trips/farebox-trip-caltrain_412_20231107.json", Key: e.LiveKey,
			Header: map[string]string{"Accept-Language": "es"}})
		var trip struct {
			Alerts []alertJSON `json:"alerts"`
			Stops  []struct {
				Station map[string]any `json:"station"`
				Alerts  []alertJSON    `json:"alerts"`
			} `json:"stops"`
		}
		r.JSON(t, &trip)
		var ids []string
		for _, a := range trip.Alerts {
			ids = append(ids, a.ID)
		}
		// The app clock is rtNow (17:06 PST): the agency alert is active.
		if strings.Join(ids, ",") != "route-L4,trip-412,agency-from-17:00:30" || trip.Alerts[0].Header != "Encabezado route-L4" {
			t.Fatalf("trip alerts %v (%+v)", ids, trip.Alerts)
		}
		stationAlerts := 0
		for _, s := range trip.Stops {
			if len(s.Station) != 3 {
				t.Fatalf("station %v: extra keys", s.Station)
			}
			if s.Station["id"] == "farebox-station-caltrain_22nd_street" {
				if len(s.Alerts) != 1 || s.Alerts[0].ID != "station-22nd" {
					t.Fatalf("22nd Street stop alerts %+v", s.Alerts)
				}
				stationAlerts++
			} else if s.Station["id"] == "farebox-station-caltrain_san_francisco" {
				// rail-at-sf (route type 2 at the station) selects the run
				// there, as on its board entry.
				if len(s.Alerts) != 1 || s.Alerts[0].ID != "rail-at-sf" {
					t.Fatalf("San Francisco stop alerts %+v", s.Alerts)
				}
			} else if len(s.Alerts) != 0 {
				t.Fatalf("%v: alerts %+v", s.Station["id"], s.Alerts)
			}
		}
		if stationAlerts != 1 {
			t.Fatal("trip 412 has no 22nd Street stop")
		}
		// A feed without alerts: no alerts key at all.
		r = e.Must(200, apitest.Req{Method: "GET", Path: departuresPath(station("sample_airport"), 1553983200000, 5), Key: e.LiveKey})
		if strings.Contains(string(r.Body), "alerts") {
			t.Fatalf("alerts key without alerts: %s", r.Body)
		}
	})
}
