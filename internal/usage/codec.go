package usage

import (
	"encoding/binary"
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/farebox/farebox/internal/account"
)

// A batch is stored as one compact binary record: the ledger commits one
// database row per group commit instead of one per request, which keeps its
// cost per request to the encoding below. Layout (all integers uvarint):
//
//	version(=1) nstrings { len bytes }... nevents { requestID account env endpoint reason (string indexes) status flags unixMicros }...
//
// flags bit 0 = counted. Strings repeat heavily within a batch (account,
// endpoint, environment), so each is stored once.
const codecVersion = 1

// EncodeBatch serialises events.
func EncodeBatch(events []Event) []byte { return AppendBatch(nil, events) }

// AppendBatch appends the serialised events to b.
func AppendBatch(b []byte, events []Event) []byte {
	// Request ids are unique, so each is simply added to the table; the
	// few strings that repeat (accounts, environments, endpoints, reasons)
	// are looked up by scanning them until a map pays off.
	strs := make([]string, 0, 2*len(events)+8)
	shared := make([]uint64, 0, 8) // indexes in strs of the repeating strings
	var idx map[string]uint64
	add := func(s string) uint64 {
		strs = append(strs, s)
		return uint64(len(strs) - 1)
	}
	intern := func(s string) uint64 {
		if idx != nil {
			if i, ok := idx[s]; ok {
				return i
			}
		} else {
			for _, i := range shared {
				if strs[i] == s {
					return i
				}
			}
		}
		i := add(s)
		shared = append(shared, i)
		if idx == nil && len(shared) > 16 {
			idx = make(map[string]uint64, 2*len(shared))
			for _, j := range shared {
				idx[strs[j]] = j
			}
		} else if idx != nil {
			idx[s] = i
		}
		return i
	}
	type enc struct{ req, acc, env, ep, reason uint64 }
	refs := make([]enc, len(events))
	for i, e := range events {
		refs[i] = enc{add(e.RequestID), intern(e.AccountID), intern(string(e.Environment)), intern(e.Endpoint), intern(e.Reason)}
	}
	b = slices.Grow(b, 16+len(events)*48)
	b = binary.AppendUvarint(b, codecVersion)
	b = binary.AppendUvarint(b, uint64(len(strs)))
	for _, s := range strs {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(events)))
	for i, e := range events {
		r := refs[i]
		for _, v := range []uint64{r.req, r.acc, r.env, r.ep, r.reason, uint64(e.Status)} {
			b = binary.AppendUvarint(b, v)
		}
		var flags uint64
		if e.Counted {
			flags |= 1
		}
		b = binary.AppendUvarint(b, flags)
		b = binary.AppendVarint(b, e.At.UnixMicro())
	}
	return b
}

var errCorrupt = errors.New("usage: corrupt batch record")

// DecodeBatch parses what EncodeBatch wrote.
func DecodeBatch(b []byte) ([]Event, error) {
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	if v, ok := next(); !ok || v != codecVersion {
		return nil, errCorrupt
	}
	ns, ok := next()
	if !ok || ns > uint64(len(b)) {
		return nil, errCorrupt
	}
	strs := make([]string, 0, ns)
	for i := uint64(0); i < ns; i++ {
		l, ok := next()
		if !ok || l > uint64(len(b)) {
			return nil, errCorrupt
		}
		strs = append(strs, string(b[:l]))
		b = b[l:]
	}
	ne, ok := next()
	if !ok || ne > uint64(len(b)) {
		return nil, errCorrupt
	}
	str := func() (string, bool) {
		i, ok := next()
		if !ok || i >= uint64(len(strs)) {
			return "", false
		}
		return strs[i], true
	}
	out := make([]Event, 0, ne)
	for i := uint64(0); i < ne; i++ {
		var e Event
		var env string
		var ok1, ok2, ok3, ok4, ok5 bool
		e.RequestID, ok1 = str()
		e.AccountID, ok2 = str()
		env, ok3 = str()
		e.Endpoint, ok4 = str()
		e.Reason, ok5 = str()
		status, ok6 := next()
		flags, ok7 := next()
		if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || status > 999 || flags > 1 {
			return nil, errCorrupt
		}
		at, n := binary.Varint(b)
		if n <= 0 {
			return nil, errCorrupt
		}
		b = b[n:]
		e.Environment = account.Environment(env)
		e.Status = int(status)
		e.Counted = flags&1 == 1
		e.At = time.UnixMicro(at).UTC()
		out = append(out, e)
	}
	if len(b) != 0 {
		return nil, errCorrupt
	}
	return out, nil
}

// Count is the aggregate of a batch for one account, day and endpoint.
type Count struct {
	AccountID   string
	Environment account.Environment
	Day         string
	Endpoint    string
	Counted     int64
	Uncounted   int64
}

// Aggregate sums events by account, environment, day and endpoint, sorted
// by that key so concurrent writers upsert counter rows in one global order
// (no lock-order deadlocks between PostgreSQL ledger writers).
func Aggregate(events []Event) []Count {
	type key struct{ acc, env, day, ep string }
	pos := map[key]int{}
	var out []Count
	for _, e := range events {
		k := key{e.AccountID, string(e.Environment), e.Day(), e.Endpoint}
		i, ok := pos[k]
		if !ok {
			i = len(out)
			pos[k] = i
			out = append(out, Count{AccountID: k.acc, Environment: e.Environment, Day: k.day, Endpoint: k.ep})
		}
		if e.Counted {
			out[i].Counted++
		} else {
			out[i].Uncounted++
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.AccountID != b.AccountID {
			return a.AccountID < b.AccountID
		}
		if a.Day != b.Day {
			return a.Day < b.Day
		}
		if a.Endpoint != b.Endpoint {
			return a.Endpoint < b.Endpoint
		}
		return a.Environment < b.Environment
	})
	return out
}
