package transit

import (
	"strconv"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/departure"
)

// The transit queries of the API (docs/departures.md). Each reads the
// instance's current departure index; the values returned are the
// response shapes of the transit endpoints (package departure encodes
// them in the official clients' form). A nil *Service (transit not
// configured on this instance) answers transit_unavailable.

// MaxDepartures is the largest board a request may ask for.
const MaxDepartures = departure.MaxDepartures

// index is the current departure index, or why there is none.
func (t *Service) index() (*departure.Index, error) {
	if t == nil {
		return nil, apperr.E("transit", apperr.Unavailable, CodeTransitUnavailable, "transit data is not configured on this instance")
	}
	return t.Index()
}

// Board is a departure board ready to be encoded: the hottest response,
// written without reflection (from the index's board cache when it holds
// the board).
type Board struct{ b departure.BoardJSON }

// AppendJSON appends the board's JSON to dst.
func (b *Board) AppendJSON(dst []byte) []byte { return b.b.AppendJSON(dst) }

// SizeHint is about the length of the board's JSON.
func (b *Board) SizeHint() int { return b.b.SizeHint() }

// BoardID names a board's bytes: boards with the same ID have the same
// JSON (departure.BoardID).
type BoardID = departure.BoardID

// ID is the board's BoardID; false for a board computed for this query
// alone (not from the board cache).
func (b *Board) ID() (BoardID, bool) { return b.b.ID() }

// Departures is the board of station stationID from at, at most max
// departures, with the service alerts that apply, their texts in the
// language picked from acceptLanguage (an Accept-Language value).
func (t *Service) Departures(stationID string, at time.Time, max int, acceptLanguage string) (Board, error) {
	ix, err := t.index()
	if err != nil {
		return Board{}, err
	}
	b, err := ix.DeparturesJSONLang(stationID, at, max, acceptLanguage)
	return Board{b}, err
}

// Trip is one run with its stops and the service alerts active now.
func (t *Service) Trip(id, acceptLanguage string) (Trip, error) {
	ix, err := t.index()
	if err != nil {
		return Trip{}, err
	}
	trip, err := ix.TripLang(id, t.feeds.Clock.Now(), acceptLanguage)
	return tripOf(trip), err
}

// FindTrip is the run leaving station from at dep and arriving at station
// to at arr (lineName narrows it when several match).
func (t *Service) FindTrip(from string, dep time.Time, to string, arr time.Time, lineName, acceptLanguage string) (Trip, error) {
	ix, err := t.index()
	if err != nil {
		return Trip{}, err
	}
	trip, err := ix.FindTripLang(from, dep, to, arr, lineName, t.feeds.Clock.Now(), acceptLanguage)
	return tripOf(trip), err
}

// StationsByName ranks the stations matching query (accent- and
// case-insensitive), biased towards (lat, lon) when near is set. The list
// is never nil.
func (t *Service) StationsByName(query string, near bool, lat, lon float64) ([]Station, error) {
	ix, err := t.index()
	if err != nil {
		return nil, err
	}
	var pos *departure.Position
	if near {
		pos = &departure.Position{Latitude: lat, Longitude: lon}
	}
	return stationsOf(ix.SearchByName(query, pos, departure.DefaultSearchLimit)), nil
}

// StationsByPosition lists the stations nearest to (lat, lon); never nil.
func (t *Service) StationsByPosition(lat, lon float64) ([]Station, error) {
	ix, err := t.index()
	if err != nil {
		return nil, err
	}
	return stationsOf(ix.SearchByPosition(lat, lon, departure.DefaultSearchLimit)), nil
}

// StationByID is one station by our id (byStopID false) or by a feed's own
// stop_id.
func (t *Service) StationByID(id string, byStopID bool) (Station, error) {
	ix, err := t.index()
	if err != nil {
		return Station{}, err
	}
	find := ix.StationByID
	if byStopID {
		find = ix.StationByStopID
	}
	st, err := find(id)
	return stationOf(st), err
}

// Attributions names the agencies and data publishers of every feed.
func (t *Service) Attributions() (Attribution, error) {
	ix, err := t.index()
	if err != nil {
		return Attribution{}, err
	}
	return Attribution(ix.Attributions()), nil
}

// MapTile is tile z/x/y of the station map (transit false) or the transit
// map: a Mapbox Vector Tile, plain and gzip-compressed, from the current
// index's tile cache when it holds it (a feed reload replaces the index and
// with it every cached tile).
func (t *Service) MapTile(transit bool, z, x, y int64) (Tile, error) {
	ix, err := t.index()
	if err != nil {
		return Tile{}, err
	}
	kind := departure.StationMap
	if transit {
		kind = departure.TransitMap
	}
	tile, err := ix.Tile(kind, z, x, y)
	return Tile(tile), err
}

// FeedStations is a loaded feed's stations for the fare export: the stored
// feed's version and import time, and Each, which calls yield with every
// station's stop_id and position until yield returns false.
type FeedStations struct {
	Version   int64
	UpdatedAt time.Time
	Each      func(yield func(stopID string, lat, lon float64) bool)
}

// FeedStations returns the stations of the loaded feed feedID; an unknown
// feed is apperr.NotFound (CodeFeedNotFound) naming feed_id.
func (t *Service) FeedStations(feedID string) (FeedStations, error) {
	if _, err := t.index(); err != nil {
		return FeedStations{}, err
	}
	st := t.cur.Load()
	lf, ok := st.feeds[feedID]
	if !ok {
		return FeedStations{}, apperr.E("transit.FeedStations", apperr.NotFound, CodeFeedNotFound, "no GTFS feed "+strconv.Quote(feedID)+" is loaded").
			WithDetails(apperr.FieldError{Field: "feed_id", Message: "no such feed"})
	}
	ix := st.ix
	return FeedStations{Version: lf.rec.Version, UpdatedAt: lf.rec.UpdatedAt,
		Each: func(yield func(string, float64, float64) bool) { ix.FeedStations(feedID, yield) }}, nil
}
