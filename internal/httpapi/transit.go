package httpapi

import (
	"math"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/departure"
	"github.com/farebox/farebox/internal/metering"
	"github.com/farebox/farebox/internal/usage"
)

// Transit endpoints (client-contract.md 2.4 and 8; docs/departures.md).
// Departure boards are metered per station and trips per trip id with
// session tokens; the other transit endpoints count every request. Every
// 2xx transit response carries the current session-token.

// transitIndex is the instance's current departure index.
func (s *Server) transitIndex() (*departure.Index, error) {
	if s.Transit == nil {
		return nil, apperr.E("transit", apperr.Unavailable, CodeTransitUnavailable, "transit data is not configured on this instance")
	}
	return s.Transit.Index()
}

// session applies the session-block rule to a successful request for
// resource: an unexpired block in the presented token makes it uncounted.
// The current token is always sent back (the Kotlin client forgets its
// token when a 2xx response lacks the header). Tokens are bound to the
// account and its environment, so a test key's token is foreign to live.
func (s *Server) session(w http.ResponseWriter, r *http.Request, resource string) {
	counted, tok := s.sessions.Check(sessionAccount(r), requestToken(r), resource, s.app.Clock.Now())
	if !counted {
		markUncounted(r, usage.ReasonSession)
	}
	w.Header()[metering.Header] = []string{tok}
}

// passSession sends the caller's token back on transit responses metered
// per request, so a client that forgets its token when the header is
// missing (the Kotlin client, client-contract.md 8.1) keeps its blocks.
func (s *Server) passSession(w http.ResponseWriter, r *http.Request) {
	w.Header()[metering.Header] = []string{s.sessions.Renew(sessionAccount(r), requestToken(r), s.app.Clock.Now())}
}

// tokenHeaderKey is the canonical form of metering.Header: Header.Get
// would canonicalise (allocate) it on every request.
var tokenHeaderKey = textproto.CanonicalMIMEHeaderKey(metering.Header)

// requestToken is the session token the client sent (any case), or "".
func requestToken(r *http.Request) string {
	if v := r.Header[tokenHeaderKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func sessionAccount(r *http.Request) string {
	p := principalOf(r)
	return p.AccountID + "/" + string(p.Environment)
}

// transitQuery parses the query string leniently (client-contract.md 8.5):
// empty pairs (a trailing "&") are skipped, and a value that is not valid
// percent-encoding is taken literally instead of being dropped, because the
// JavaScript client inserts values unencoded. The first value of a name wins.
func transitQuery(raw string) query {
	out := make(query, 0, 4)
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, v = unescapeLenient(k), unescapeLenient(v)
		if _, dup := out.lookup(k); !dup {
			out = append(out, queryParam{k, v})
		}
	}
	return out
}

// query is a parsed query string: a handful of parameters, looked up by
// scanning (cheaper than a map at this size, on the hottest endpoint).
type query []queryParam

type queryParam struct{ name, value string }

// lookup returns the first value of name.
func (q query) lookup(name string) (string, bool) {
	for _, p := range q {
		if p.name == name {
			return p.value, true
		}
	}
	return "", false
}

// value returns the first value of name, or "".
func (q query) value(name string) string {
	v, _ := q.lookup(name)
	return v
}

func unescapeLenient(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return strings.ReplaceAll(s, "+", " ")
}

// epochMillis parses an optional epoch-milliseconds parameter.
func epochMillis(q query, name string, def time.Time, required bool) (time.Time, error) {
	v, ok := q.lookup(name)
	if !ok || v == "" {
		if required {
			return time.Time{}, apperr.Param("query", name, name+" is required (epoch milliseconds)")
		}
		return def, nil
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	// ±100 years around 1970 keeps time arithmetic far from overflow.
	if err != nil || ms < -3_155_760_000_000 || ms > 6_311_520_000_000 {
		return time.Time{}, apperr.Param("query", name, name+" must be an integer: epoch milliseconds")
	}
	return time.UnixMilli(ms).UTC(), nil
}

// coordinate parses latitude or longitude within ±limit.
func coordinate(q query, name string, limit float64) (float64, bool, error) {
	v, ok := q.lookup(name)
	if !ok || strings.TrimSpace(v) == "" {
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || f < -limit || f > limit {
		return 0, false, apperr.Param("query", name, name+" must be a number from "+strconv.Itoa(-int(limit))+" to "+strconv.Itoa(int(limit)))
	}
	return f, true, nil
}

func required(q query, name string) (string, error) {
	v := strings.TrimSpace(q.value(name))
	if v == "" {
		return "", apperr.Param("query", name, name+" is required")
	}
	return v, nil
}

// getDepartures answers GET /v1/departures.json (and the /v3, /v4 aliases).
func (s *Server) getDepartures(w http.ResponseWriter, r *http.Request) error {
	q := transitQuery(r.URL.RawQuery)
	id, err := required(q, "station_id")
	if err != nil {
		return err
	}
	at, err := epochMillis(q, "time", s.app.Clock.Now(), false)
	if err != nil {
		return err
	}
	max := 10
	if v, ok := q.lookup("max_departures"); ok && v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > departure.MaxDepartures {
			return apperr.Param("query", "max_departures", "max_departures must be an integer from 1 to 100")
		}
		max = n
	}
	ix, err := s.transitIndex()
	if err != nil {
		return err
	}
	board, err := ix.DeparturesJSON(id, at, max)
	if err != nil {
		return err
	}
	s.session(w, r, metering.StationResource(id))
	writeDepartures(w, &board)
	return nil
}

// getTrip answers GET /v1/trips/{trip_id}.json: one run with its stops.
func (s *Server) getTrip(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("trip_id")
	ix, err := s.transitIndex()
	if err != nil {
		return err
	}
	trip, err := ix.Trip(id)
	if err != nil {
		return err
	}
	s.session(w, r, metering.TripResource(id))
	writeJSON(w, http.StatusOK, trip)
	return nil
}

// searchTripByCharacteristics finds the run leaving one station at a
// scheduled time and arriving at another at a scheduled time.
func (s *Server) searchTripByCharacteristics(w http.ResponseWriter, r *http.Request) error {
	q := transitQuery(r.URL.RawQuery)
	from, err := required(q, "origins_from_station_id")
	if err != nil {
		return err
	}
	dep, err := epochMillis(q, "origins_from_departure_time", time.Time{}, true)
	if err != nil {
		return err
	}
	to, err := required(q, "destination_station_id")
	if err != nil {
		return err
	}
	arr, err := epochMillis(q, "destination_arrival_time", time.Time{}, true)
	if err != nil {
		return err
	}
	ix, err := s.transitIndex()
	if err != nil {
		return err
	}
	trip, err := ix.FindTrip(from, dep, to, arr, strings.TrimSpace(q.value("line_name")))
	if err != nil {
		return err
	}
	s.passSession(w, r)
	writeJSON(w, http.StatusOK, trip)
	return nil
}

// searchStationsByName: accent- and case-insensitive, ranked, optionally
// biased towards latitude/longitude (both or neither).
func (s *Server) searchStationsByName(w http.ResponseWriter, r *http.Request) error {
	q := transitQuery(r.URL.RawQuery)
	query, err := required(q, "query")
	if err != nil {
		return err
	}
	lat, hasLat, err := coordinate(q, "latitude", 90)
	if err != nil {
		return err
	}
	lon, hasLon, err := coordinate(q, "longitude", 180)
	if err != nil {
		return err
	}
	if hasLat != hasLon {
		missing := "longitude"
		if !hasLat {
			missing = "latitude"
		}
		return apperr.Param("query", missing, "latitude and longitude bias the search only together")
	}
	ix, err := s.transitIndex()
	if err != nil {
		return err
	}
	var near *departure.Position
	if hasLat {
		near = &departure.Position{Latitude: lat, Longitude: lon}
	}
	s.passSession(w, r)
	writeStations(w, ix.SearchByName(query, near, departure.DefaultSearchLimit))
	return nil
}

// searchStationsByPosition lists the stations nearest to a point.
func (s *Server) searchStationsByPosition(w http.ResponseWriter, r *http.Request) error {
	q := transitQuery(r.URL.RawQuery)
	lat, hasLat, err := coordinate(q, "latitude", 90)
	if err != nil {
		return err
	}
	if !hasLat {
		return apperr.Param("query", "latitude", "latitude is required")
	}
	lon, hasLon, err := coordinate(q, "longitude", 180)
	if err != nil {
		return err
	}
	if !hasLon {
		return apperr.Param("query", "longitude", "longitude is required")
	}
	ix, err := s.transitIndex()
	if err != nil {
		return err
	}
	s.passSession(w, r)
	writeStations(w, ix.SearchByPosition(lat, lon, departure.DefaultSearchLimit))
	return nil
}

// searchStationByID returns one station object (the official JavaScript
// client's shape) by our id (id_type mobilitybox, the default) or by a
// feed's own stop_id (dhid, delfi).
func (s *Server) searchStationByID(w http.ResponseWriter, r *http.Request) error {
	q := transitQuery(r.URL.RawQuery)
	id, err := required(q, "query")
	if err != nil {
		return err
	}
	ix, err := s.transitIndex()
	if err != nil {
		return err
	}
	var st departure.Station
	switch t := strings.TrimSpace(q.value("id_type")); t {
	case "", "mobilitybox":
		st, err = ix.StationByID(id)
	case "dhid", "delfi":
		st, err = ix.StationByStopID(id)
	default:
		return apperr.Param("query", "id_type", "id_type must be mobilitybox, dhid or delfi")
	}
	if err != nil {
		return err
	}
	s.passSession(w, r)
	writeJSON(w, http.StatusOK, st)
	return nil
}

// getAttributions names the agencies and data publishers of every feed.
func (s *Server) getAttributions(w http.ResponseWriter, r *http.Request) error {
	ix, err := s.transitIndex()
	if err != nil {
		return err
	}
	s.passSession(w, r)
	writeJSON(w, http.StatusOK, ix.Attributions())
	return nil
}

func writeStations(w http.ResponseWriter, st []departure.Station) {
	if st == nil {
		st = []departure.Station{}
	}
	writeJSON(w, http.StatusOK, st)
}

// writeDepartures writes a board (from the index's board cache, already
// encoded, or encoded without reflection): the hottest response.
func writeDepartures(w http.ResponseWriter, board *departure.BoardJSON) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if bw, ok := w.(*buffer); ok {
		// Encode straight into the pipeline's response buffer.
		bw.body.Grow(board.SizeHint() + 1)
		bw.body.Write(append(board.AppendJSON(bw.body.AvailableBuffer()), '\n'))
		return
	}
	_, _ = w.Write(append(board.AppendJSON(make([]byte, 0, board.SizeHint()+1)), '\n'))
}
