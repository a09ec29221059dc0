package httpapi

import (
	"math"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/app"
	billingapp "github.com/farebox/farebox/internal/app/billing"
	"github.com/farebox/farebox/internal/app/transit"
	"github.com/farebox/farebox/internal/apperr"
)

// Transit endpoints (client-contract.md 2.4 and 8; docs/departures.md).
// Departure boards are metered per station and trips per trip id with
// session tokens; the other transit endpoints count every request. Every
// 2xx transit response carries the current session-token.

// session applies the session-block rule's verdict on a successful request
// for a station's board or a trip (app.Sessions): an unexpired block in the
// presented token makes it uncounted. The current token is always sent back
// (the Kotlin client forgets its token when a 2xx response lacks the
// header).
func (s *Server) session(w http.ResponseWriter, r *http.Request, counted bool, tok string) {
	if !counted {
		markUncounted(r, billingapp.ReasonSession)
	}
	w.Header()[tokenHeaderKey] = []string{tok}
}

// passSession sends the caller's token back on transit responses metered
// per request, so a client that forgets its token when the header is
// missing (the Kotlin client, client-contract.md 8.1) keeps its blocks.
func (s *Server) passSession(w http.ResponseWriter, r *http.Request) {
	w.Header()[tokenHeaderKey] = []string{s.sessions.Renew(principalOf(r), requestToken(r))}
}

// answer returns err if there is one, else writes v as the 200 answer
// with the caller's renewed session token.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, v any, err error) error {
	if err != nil {
		return err
	}
	s.passSession(w, r)
	writeJSON(w, http.StatusOK, v)
	return nil
}

// tokenHeaderKey is the canonical form of app.SessionHeader: Header.Get
// would canonicalise (allocate) it on every request.
var tokenHeaderKey = textproto.CanonicalMIMEHeaderKey(app.SessionHeader)

// requestToken is the session token the client sent (any case), or "".
func requestToken(r *http.Request) string {
	if v := r.Header[tokenHeaderKey]; len(v) > 0 {
		return v[0]
	}
	return ""
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

// requiredCoordinate is coordinate for a parameter that must be given.
func requiredCoordinate(q query, name string, limit float64) (float64, error) {
	f, ok, err := coordinate(q, name, limit)
	if err == nil && !ok {
		err = apperr.Param("query", name, name+" is required")
	}
	return f, err
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
	var now time.Time // the default time, read only when needed
	if v, ok := q.lookup("time"); !ok || v == "" {
		now = s.app.Now()
	}
	at, err := epochMillis(q, "time", now, false)
	if err != nil {
		return err
	}
	max := 10
	if v, ok := q.lookup("max_departures"); ok && v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > transit.MaxDepartures {
			return apperr.Param("query", "max_departures", "max_departures must be an integer from 1 to 100")
		}
		max = n
	}
	board, err := s.Transit.Departures(id, at, max, r.Header.Get("Accept-Language"))
	if err != nil {
		return err
	}
	counted, tok := s.sessions.Station(principalOf(r), requestToken(r), id)
	s.session(w, r, counted, tok)
	s.writeDepartures(w, r, &board)
	return nil
}

// getTrip answers GET /v1/trips/{trip_id}.json: one run with its stops.
func (s *Server) getTrip(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("trip_id")
	trip, err := s.Transit.Trip(id, r.Header.Get("Accept-Language"))
	if err != nil {
		return err
	}
	counted, tok := s.sessions.Trip(principalOf(r), requestToken(r), id)
	s.session(w, r, counted, tok)
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
	trip, err := s.Transit.FindTrip(from, dep, to, arr, strings.TrimSpace(q.value("line_name")), r.Header.Get("Accept-Language"))
	return s.answer(w, r, trip, err)
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
	st, err := s.Transit.StationsByName(query, hasLat, lat, lon)
	return s.answer(w, r, st, err)
}

// searchStationsByPosition lists the stations nearest to a point.
func (s *Server) searchStationsByPosition(w http.ResponseWriter, r *http.Request) error {
	q := transitQuery(r.URL.RawQuery)
	lat, err := requiredCoordinate(q, "latitude", 90)
	if err != nil {
		return err
	}
	lon, err := requiredCoordinate(q, "longitude", 180)
	if err != nil {
		return err
	}
	st, err := s.Transit.StationsByPosition(lat, lon)
	return s.answer(w, r, st, err)
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
	var byStopID bool
	switch t := strings.TrimSpace(q.value("id_type")); t {
	case "", "mobilitybox":
	case "dhid", "delfi":
		byStopID = true
	default:
		return apperr.Param("query", "id_type", "id_type must be mobilitybox, dhid or delfi")
	}
	st, err := s.Transit.StationByID(id, byStopID)
	return s.answer(w, r, st, err)
}

// getAttributions names the agencies and data publishers of every feed.
func (s *Server) getAttributions(w http.ResponseWriter, r *http.Request) error {
	a, err := s.Transit.Attributions()
	return s.answer(w, r, a, err)
}

// writeDepartures writes a board (from the index's board cache, already
// encoded, or encoded without reflection). A client that accepts gzip gets
// the stored compression of a board sent before (gzipcache.go).
func (s *Server) writeDepartures(w http.ResponseWriter, r *http.Request, board *transit.Board) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Add("Vary", "Accept-Encoding")
	id, cached := board.ID()
	zip := cached && s.gz != nil && acceptsGzip(r)
	if zip {
		if gz := s.gz.get(id); gz != nil {
			h.Set("Content-Encoding", "gzip")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(gz)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
	bw, ok := w.(*buffer)
	if !ok {
		_, _ = w.Write(append(board.AppendJSON(make([]byte, 0, board.SizeHint()+1)), '\n'))
		return
	}
	// Encode straight into the pipeline's response buffer.
	bw.body.Grow(board.SizeHint() + 1)
	bw.body.Write(append(board.AppendJSON(bw.body.AvailableBuffer()), '\n'))
	if zip {
		if gz := s.gz.offer(id, bw.body.Bytes()); gz != nil {
			h.Set("Content-Encoding", "gzip")
			bw.body.Reset()
			bw.body.Write(gz)
		}
	}
}

// getStationMapTile answers GET /v1/station_map/{z}-{x}-{y}.mvt.
func (s *Server) getStationMapTile(w http.ResponseWriter, r *http.Request) error {
	return s.mapTile(w, r, false)
}

// getTransitMapTile answers GET /v1/transit_map/{z}-{x}-{y}.mvt.
func (s *Server) getTransitMapTile(w http.ResponseWriter, r *http.Request) error {
	return s.mapTile(w, r, true)
}

// mvtContentType is the media type of a Mapbox Vector Tile.
const mvtContentType = "application/vnd.mapbox-vector-tile"

// mapTile writes a vector tile (docs/maps.md), gzip-compressed when the
// client accepts it. Every request is billed (no session blocks).
func (s *Server) mapTile(w http.ResponseWriter, r *http.Request, transit bool) error {
	z, x, y, err := tileCoords(r.PathValue("tile"))
	if err != nil {
		return err
	}
	tile, err := s.Transit.MapTile(transit, z, x, y)
	if err != nil {
		return err
	}
	s.passSession(w, r)
	h := w.Header()
	h.Set("Content-Type", mvtContentType)
	// private: every request is billed, so a shared cache (a CDN, a
	// corporate proxy) must not answer for the partner's key.
	h.Set("Cache-Control", "private, max-age=300")
	h.Add("Vary", "Accept-Encoding")
	body := tile.Raw
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = tile.Gzip
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

// tileCoords parses "{z}-{x}-{y}" (what precedes .mvt); a part that is
// no integer is a 400 naming z, x or y (the index checks the ranges).
func tileCoords(s string) (z, x, y int64, err error) {
	parts := strings.Split(s, "-")
	names := [3]string{"z", "x", "y"}
	if len(parts) != 3 {
		return 0, 0, 0, apperr.Param("path", "z", "the tile must be {z}-{x}-{y}.mvt with three non-negative integers")
	}
	var v [3]int64
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || p == "" || p[0] == '+' {
			return 0, 0, 0, apperr.Param("path", names[i], names[i]+" must be a non-negative integer")
		}
		v[i] = n
	}
	return v[0], v[1], v[2], nil
}
