package departure

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/gtfs"
)

// DefaultSearchLimit is the number of stations a search returns by default.
const DefaultSearchLimit = 20

type stationEntry struct {
	fi   *feedIndex
	stop int32
	id   string
	norm string // normalized name
}

func (ix *Index) buildStations() {
	for _, fi := range ix.feeds {
		for s := 0; s < fi.f.Stops.Len(); s++ {
			if fi.isStation(int32(s)) {
				ix.stations = append(ix.stations, stationEntry{fi: fi, stop: int32(s), id: ix.stationID(fi, int32(s)), norm: normalize(fi.f.Stops.Name[s])})
			}
		}
	}
}

func (ix *Index) station(fi *feedIndex, stop int32) Station {
	s := &fi.f.Stops
	return Station{ID: ix.stationID(fi, stop), Name: s.Name[stop], Position: Position{Latitude: s.Lat[stop], Longitude: s.Lon[stop]}}
}

// fold maps accented Latin letters to their base letters.
var fold = func() map[rune]string {
	m := map[rune]string{'ß': "ss", 'æ': "ae", 'œ': "oe", 'þ': "th", 'ø': "o", 'đ': "d", 'ł': "l", 'ħ': "h", 'ı': "i"}
	groups := map[string]string{
		"a": "àáâãäåāăą", "c": "çćĉċč", "d": "ď", "e": "èéêëēĕėęě", "g": "ĝğġģ", "h": "ĥ", "i": "ìíîïĩīĭį",
		"j": "ĵ", "k": "ķ", "l": "ĺļľŀ", "n": "ñńņňŉ", "o": "òóôõöōŏő", "r": "ŕŗř", "s": "śŝşšș",
		"t": "ţťŧț", "u": "ùúûüũūŭůűų", "w": "ŵ", "y": "ýÿŷ", "z": "źżž",
	}
	for base, letters := range groups {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}()

// normalize lowercases, removes accents, writes German umlaut spellings
// (ue, oe, ae) like the plain vowel and reduces punctuation to single spaces,
// so "Zürich HB", "Zuerich Hb" and "zurich-hb" compare equal.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := true
	for _, r := range strings.ToLower(s) {
		if f, ok := fold[r]; ok {
			b.WriteString(f)
			space = false
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
			continue
		}
		if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	out := strings.TrimRight(b.String(), " ")
	return strings.NewReplacer("ae", "a", "oe", "o", "ue", "u").Replace(out)
}

// distance in meters (haversine).
func distance(lat1, lon1, lat2, lon2 float64) float64 {
	const r = 6371000.0
	p1, p2 := lat1*math.Pi/180, lat2*math.Pi/180
	dp, dl := (lat2-lat1)*math.Pi/180, (lon2-lon1)*math.Pi/180
	a := math.Sin(dp/2)*math.Sin(dp/2) + math.Cos(p1)*math.Cos(p2)*math.Sin(dl/2)*math.Sin(dl/2)
	return 2 * r * math.Asin(math.Sqrt(min(1, a)))
}

// matchTier ranks how a normalized name matches normalized query tokens:
// 0 equal, 1 name starts with the query, 2 every token starts a word,
// 3 every token occurs somewhere; -1 no match.
func matchTier(name, query string, tokens []string) int {
	if name == query {
		return 0
	}
	if strings.HasPrefix(name, query) {
		return 1
	}
	tier := 2
	for _, t := range tokens {
		i := strings.Index(name, t)
		if i < 0 {
			return -1
		}
		if i != 0 && name[i-1] != ' ' && !strings.Contains(name, " "+t) {
			tier = 3
		}
	}
	return tier
}

// SearchByName returns stations whose names contain every word of query
// (accent- and case-insensitive), best match first: equal names, then
// prefixes, then word prefixes, then substrings; within a rank the nearest
// to near (when given), else the shortest name, then by id.
func (ix *Index) SearchByName(query string, near *Position, limit int) []Station {
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	q := normalize(query)
	if q == "" {
		return []Station{}
	}
	tokens := strings.Fields(q)
	type hit struct {
		e    *stationEntry
		tier int
		dist float64
	}
	var hits []hit
	for i := range ix.stations {
		e := &ix.stations[i]
		tier := matchTier(e.norm, q, tokens)
		if tier < 0 {
			continue
		}
		h := hit{e: e, tier: tier}
		if near != nil {
			s := &e.fi.f.Stops
			h.dist = distance(near.Latitude, near.Longitude, s.Lat[e.stop], s.Lon[e.stop])
		}
		hits = append(hits, h)
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.tier != b.tier {
			return a.tier - b.tier
		}
		if a.dist != b.dist {
			if a.dist < b.dist {
				return -1
			}
			return 1
		}
		if la, lb := utf8.RuneCountInString(a.e.norm), utf8.RuneCountInString(b.e.norm); la != lb {
			return la - lb
		}
		return strings.Compare(a.e.id, b.e.id)
	})
	out := make([]Station, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, ix.station(h.e.fi, h.e.stop))
	}
	return out
}

// SearchByPosition returns the limit stations nearest to (lat, lon), nearest first.
func (ix *Index) SearchByPosition(lat, lon float64, limit int) []Station {
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	type hit struct {
		e    *stationEntry
		dist float64
	}
	hits := make([]hit, 0, len(ix.stations))
	for i := range ix.stations {
		e := &ix.stations[i]
		s := &e.fi.f.Stops
		hits = append(hits, hit{e, distance(lat, lon, s.Lat[e.stop], s.Lon[e.stop])})
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.dist != b.dist {
			if a.dist < b.dist {
				return -1
			}
			return 1
		}
		return strings.Compare(a.e.id, b.e.id)
	})
	out := make([]Station, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, ix.station(h.e.fi, h.e.stop))
	}
	return out
}

// StationByID returns the station (or platform) with our id; unknown ids
// and entrances or nodes are apperr.NotFound.
func (ix *Index) StationByID(id string) (Station, error) {
	fi, stop, ok := ix.parseStationID(id)
	if !ok || fi.f.Stops.Type[stop] > gtfs.StopStation {
		return Station{}, apperr.E("departure.StationByID", apperr.NotFound, CodeStationNotFound, "no station with id "+id)
	}
	return ix.station(fi, stop), nil
}

// StationByStopID finds a station by a feed's own stop_id (for id_type dhid
// or delfi, where German feeds use the DHID as stop_id); feeds are searched
// in index order and the first match wins.
func (ix *Index) StationByStopID(stopID string) (Station, error) {
	for _, fi := range ix.feeds {
		if s, ok := fi.stopIdx[stopID]; ok && fi.f.Stops.Type[s] <= gtfs.StopStation {
			return ix.station(fi, s), nil
		}
	}
	return Station{}, apperr.E("departure.StationByStopID", apperr.NotFound, CodeStationNotFound, "no station with stop id "+stopID)
}

// FeedStations calls yield with every listed station of the feed feedID
// (a station, or a stop without a parent station: what the station search
// lists) as its stop_id in the feed and position, in the feed's order, until
// yield returns false; ok is false for an unknown feed. The fare export
// maps them into the catalog's areas (internal/fareexport).
func (ix *Index) FeedStations(feedID string, yield func(stopID string, lat, lon float64) bool) (ok bool) {
	fi := ix.byID[feedID]
	if fi == nil {
		return false
	}
	s := &fi.f.Stops
	for i := 0; i < s.Len(); i++ {
		if fi.isStation(int32(i)) && !yield(s.ID[i], s.Lat[i], s.Lon[i]) {
			break
		}
	}
	return true
}
