package departure

import (
	"strconv"
	"strings"

	"github.com/farebox/farebox/internal/gtfs"
)

const hexDigits = "0123456789ABCDEF"

// escapeID makes a GTFS id URL-safe: bytes outside [A-Za-z0-9._-] become ~XX.
func escapeID(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i]) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if safeByte(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('~')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

func safeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// unescapeID reverses escapeID; it reports false for malformed input.
func unescapeID(s string) (string, bool) {
	if !strings.Contains(s, "~") {
		for i := 0; i < len(s); i++ {
			if !safeByte(s[i]) {
				return "", false
			}
		}
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '~' {
			if !safeByte(c) {
				return "", false
			}
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		hi, lo := strings.IndexByte(hexDigits, s[i+1]), strings.IndexByte(hexDigits, s[i+2])
		if hi < 0 || lo < 0 || safeByte(byte(hi<<4|lo)) {
			return "", false
		}
		b.WriteByte(byte(hi<<4 | lo))
		i += 2
	}
	return b.String(), true
}

// ValidFeedID reports whether id can be used as a feed namespace: 1 to 64
// letters, digits or hyphens (the import command should check it early).
func ValidFeedID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func (ix *Index) stationID(fi *feedIndex, stop int32) string {
	return fi.stationIDs[stop]
}

// cutID splits an id of kind ("-station-", "-trip-") into the feed it
// names (nil when none) and the rest after the feed's "_"; ok is false when
// the id is not of the kind or has no "_" after the feed (the feed is looked
// up even then: what the feed of an id is needs nothing more).
func (ix *Index) cutID(id, kind string) (fi *feedIndex, rest string, ok bool) {
	rest, ok = strings.CutPrefix(id, ix.prefix+kind)
	if !ok {
		return nil, "", false
	}
	feed, rest, ok := strings.Cut(rest, "_")
	return ix.byID[feed], rest, ok
}

// parseStationID resolves a station id to its feed and stop.
func (ix *Index) parseStationID(id string) (*feedIndex, int32, bool) {
	fi, raw, ok := ix.cutID(id, "-station-")
	if !ok || fi == nil {
		return nil, 0, false
	}
	stopID, ok := unescapeID(raw)
	if !ok {
		return nil, 0, false
	}
	s, ok := fi.stopIdx[stopID]
	return fi, s, ok
}

// tripKey identifies one run of a trip: the trip on a service day, and for
// frequency-based trips the instance's start time (else -1).
type tripKey struct {
	fi    *feedIndex
	trip  int32
	day   int32
	start int32
}

// tripID formats "<prefix>-trip-<feed>_<trip>_YYYYMMDD[-HHMMSS]" with one
// allocation (it runs for every board entry).
func (ix *Index) tripID(k tripKey) string {
	return ix.runID(k.fi, k.fi.f.Trips.ID[k.trip], k.day, k.start)
}

// appendDigits appends n zero-padded to width digits (more when n needs them).
func appendDigits(b []byte, n, width int) []byte {
	if n < 0 {
		return strconv.AppendInt(b, int64(n), 10)
	}
	var tmp [20]byte
	i := len(tmp)
	for n >= 10 || width > 1 {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
		width--
	}
	i--
	tmp[i] = byte('0' + n)
	return append(b, tmp[i:]...)
}

// appendEscaped appends escapeID(s).
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if safeByte(c) {
			b = append(b, c)
		} else {
			b = append(b, '~', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return b
}

// parseTripID resolves a trip instance id.
func (ix *Index) parseTripID(id string) (tripKey, bool) {
	fi, rest, ok := ix.cutID(id, "-trip-")
	if !ok || fi == nil {
		return tripKey{}, false
	}
	cut := strings.LastIndexByte(rest, '_')
	if cut < 0 {
		return tripKey{}, false
	}
	raw, suffix := rest[:cut], rest[cut+1:]
	tid, ok := unescapeID(raw)
	if !ok {
		return tripKey{}, false
	}
	tr, ok := fi.tripIdx[tid]
	if !ok {
		return tripKey{}, false
	}
	k := tripKey{fi: fi, trip: tr, start: -1}
	date, start, hasStart := strings.Cut(suffix, "-")
	if len(date) != 8 {
		return tripKey{}, false
	}
	y, e1 := strconv.Atoi(date[:4])
	m, e2 := strconv.Atoi(date[4:6])
	d, e3 := strconv.Atoi(date[6:])
	if e1 != nil || e2 != nil || e3 != nil || m < 1 || m > 12 || d < 1 || d > 31 || y < 1900 || y > 2200 {
		return tripKey{}, false
	}
	k.day = gtfs.DayNumber(y, m, d)
	if y2, m2, d2 := gtfs.DayDate(k.day); y2 != y || int(m2) != m || d2 != d {
		return tripKey{}, false
	}
	if hasStart {
		if len(start) != 6 {
			return tripKey{}, false
		}
		v, err := strconv.Atoi(start)
		if err != nil || v < 0 || v%100 > 59 || v/100%100 > 59 {
			return tripKey{}, false
		}
		k.start = int32(v/10000*3600 + v/100%100*60 + v%100)
	}
	return k, true
}
