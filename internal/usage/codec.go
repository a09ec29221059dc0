package usage

import (
	"bytes"
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
	if len(events) == 1 {
		return appendOne(b, &events[0])
	}
	bb := newBatchBuilder[string](len(events))
	for _, e := range events {
		var flags uint64
		if e.Counted {
			flags = 1
		}
		bb.add(row{req: bb.unique(e.RequestID), acc: bb.intern(e.AccountID), env: bb.intern(string(e.Environment)),
			ep: bb.intern(e.Endpoint), reason: bb.intern(e.Reason), status: uint64(e.Status), flags: flags, at: e.At.UnixMicro()})
	}
	return bb.appendTo(b)
}

// batchBuilder collects a batch's string table and rows: request ids are
// unique, so each is simply added; the strings that repeat (accounts,
// environments, endpoints, reasons) are stored once. S is string when
// encoding events, []byte when re-encoding encoded ones (Compact). The
// rows are kept encoded (about 15 bytes each instead of a 64-byte row).
type batchBuilder[S ~string | ~[]byte] struct {
	strs   []S
	shared map[string]uint64
	rows   []byte // encoded rows (appendRow)
	nrows  int
}

func newBatchBuilder[S ~string | ~[]byte](rows int) *batchBuilder[S] {
	return &batchBuilder[S]{strs: make([]S, 0, rows+8), shared: map[string]uint64{}, rows: make([]byte, 0, 16*rows)}
}

func (bb *batchBuilder[S]) add(r row) {
	bb.rows = appendRow(bb.rows, r)
	bb.nrows++
}

func (bb *batchBuilder[S]) unique(s S) uint64 {
	bb.strs = append(bb.strs, s)
	return uint64(len(bb.strs) - 1)
}

func (bb *batchBuilder[S]) intern(s S) uint64 {
	if i, ok := bb.shared[string(s)]; ok {
		return i
	}
	i := bb.unique(s)
	bb.shared[string(s)] = i
	return i
}

// appendTo appends the batch in the layout described above.
func (bb *batchBuilder[S]) appendTo(b []byte) []byte {
	size := 16 + len(bb.rows)
	for _, s := range bb.strs {
		size += len(s) + 2
	}
	b = slices.Grow(b, size)
	b = binary.AppendUvarint(b, codecVersion)
	b = binary.AppendUvarint(b, uint64(len(bb.strs)))
	for _, s := range bb.strs {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(bb.nrows))
	return append(b, bb.rows...)
}

var errCorrupt = errors.New("usage: corrupt batch record")

// row is one encoded event: indexes into its batch's string table.
type row struct {
	req, acc, env, ep, reason uint64
	status, flags             uint64
	at                        int64 // Unix microseconds
}

// walk parses data, one or more EncodeBatch records back to back (a
// rolled-up journal segment stores its batches so), calling table once per
// batch with its string table (slices of data) and then each for its rows.
// It checks the whole structure, so a corrupt record fails before use.
func walk(data []byte, table func(strs [][]byte), each func(r row, strs [][]byte)) error {
	b := data
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	var strs [][]byte
	for first := true; first || len(b) > 0; first = false {
		if v, ok := next(); !ok || v != codecVersion {
			return errCorrupt
		}
		ns, ok := next()
		if !ok || ns > uint64(len(b)) {
			return errCorrupt
		}
		strs = strs[:0]
		for i := uint64(0); i < ns; i++ {
			l, ok := next()
			if !ok || l > uint64(len(b)) {
				return errCorrupt
			}
			strs = append(strs, b[:l:l])
			b = b[l:]
		}
		ne, ok := next()
		if !ok || ne > uint64(len(b)) {
			return errCorrupt
		}
		if table != nil {
			table(strs)
		}
		n := uint64(len(strs))
		for i := uint64(0); i < ne; i++ {
			var r row
			var oks [7]bool
			r.req, oks[0] = next()
			r.acc, oks[1] = next()
			r.env, oks[2] = next()
			r.ep, oks[3] = next()
			r.reason, oks[4] = next()
			r.status, oks[5] = next()
			r.flags, oks[6] = next()
			if oks != [7]bool{true, true, true, true, true, true, true} || r.status > 999 || r.flags > 1 ||
				r.req >= n || r.acc >= n || r.env >= n || r.ep >= n || r.reason >= n {
				return errCorrupt
			}
			at, m := binary.Varint(b)
			if m <= 0 {
				return errCorrupt
			}
			b = b[m:]
			r.at = at
			each(r, strs)
		}
	}
	return nil
}

// DecodeBatch parses what EncodeBatch wrote, or several such records back
// to back (their events in order).
func DecodeBatch(b []byte) ([]Event, error) {
	var out []Event
	var strs []string
	err := walk(b, func(raw [][]byte) {
		strs = strs[:0]
		for _, s := range raw {
			strs = append(strs, string(s))
		}
	}, func(r row, _ [][]byte) {
		out = append(out, Event{RequestID: strs[r.req], AccountID: strs[r.acc], Environment: account.Environment(strs[r.env]),
			Endpoint: strs[r.ep], Reason: strs[r.reason], Status: int(r.status), Counted: r.flags&1 == 1,
			At: time.UnixMicro(r.at).UTC()})
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []Event{}
	}
	return out, nil
}

// Tally is what Compact counted of the batches it read.
type Tally struct {
	Counts []Count   // as Aggregate of the events
	Events int       // number of events
	First  time.Time // time of the first event (zero without events)
}

// Compact re-encodes batches stored back to back as one batch with a single
// string table, and tallies them (as Aggregate would, without building
// the events). A journal segment
// holds one frame per request, each repeating the account, endpoint and
// the rest (~120 bytes a row); compacted, a row is ~40 bytes, which is what
// the rollup stores.
func Compact(data []byte) ([]byte, Tally, error) {
	var t tallier
	bb := newBatchBuilder[[]byte](len(data) / 64)
	// A segment's rows mostly repeat the row before them (one account and
	// endpoint under load): comparing with it is cheaper than a lookup.
	var acc, env, ep, reason lastString
	err := walk(data, nil, func(r row, in [][]byte) {
		out := r
		out.req = bb.unique(in[r.req])
		out.acc, out.env = acc.intern(bb, in[r.acc]), env.intern(bb, in[r.env])
		out.ep, out.reason = ep.intern(bb, in[r.ep]), reason.intern(bb, in[r.reason])
		t.add(out, bb.strs)
		bb.add(out)
	})
	if err != nil {
		return nil, Tally{}, err
	}
	return bb.appendTo(nil), t.result(), nil
}

// lastString remembers the string interned last at one position of a row.
type lastString struct {
	s   []byte
	i   uint64
	set bool
}

func (c *lastString) intern(bb *batchBuilder[[]byte], s []byte) uint64 {
	if c.set && bytes.Equal(c.s, s) {
		return c.i
	}
	c.s, c.i, c.set = s, bb.intern(s), true
	return c.i
}

// appendOne is AppendBatch of one event (a journal frame per request),
// without the interning: its five strings are the table.
func appendOne(b []byte, e *Event) []byte {
	b = binary.AppendUvarint(b, codecVersion)
	b = binary.AppendUvarint(b, 5)
	for _, s := range [...]string{e.RequestID, e.AccountID, string(e.Environment), e.Endpoint, e.Reason} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, 1)
	var flags uint64
	if e.Counted {
		flags = 1
	}
	return appendRow(b, row{req: 0, acc: 1, env: 2, ep: 3, reason: 4, status: uint64(e.Status), flags: flags, at: e.At.UnixMicro()})
}

// appendRow encodes one event of a batch (the layout EncodeBatch writes).
func appendRow(b []byte, r row) []byte {
	for _, v := range [...]uint64{r.req, r.acc, r.env, r.ep, r.reason, r.status, r.flags} {
		b = binary.AppendUvarint(b, v)
	}
	return binary.AppendVarint(b, r.at)
}

// tallier adds up rows by account, environment, day and endpoint. The
// rows' string indexes must be those of one table for the whole tally (a
// Compact's output table), whose equal strings share an index: the key is
// then four numbers.
type tallier struct {
	t      Tally
	counts []Count
	pos    map[tallyKey]int
	prev   tallyKey
	last   int // index of prev's count: consecutive rows mostly share it
}

type tallyKey struct {
	acc, env, ep uint64
	day          int64
}

func (t *tallier) add(r row, strs [][]byte) {
	if t.t.Events == 0 {
		t.t.First = time.UnixMicro(r.at).UTC()
		t.pos, t.last = map[tallyKey]int{}, -1
	}
	t.t.Events++
	const microsPerDay = 86_400_000_000
	key := tallyKey{acc: r.acc, env: r.env, ep: r.ep, day: floorDiv(r.at, microsPerDay)}
	i := t.last
	if i < 0 || key != t.prev {
		var ok bool
		if i, ok = t.pos[key]; !ok {
			i = len(t.counts)
			t.pos[key] = i
			t.counts = append(t.counts, Count{AccountID: string(strs[r.acc]), Environment: account.Environment(strs[r.env]),
				Day: time.UnixMicro(r.at).UTC().Format(time.DateOnly), Endpoint: string(strs[r.ep])})
		}
		t.prev, t.last = key, i
	}
	if r.flags&1 == 1 {
		t.counts[i].Counted++
	} else {
		t.counts[i].Uncounted++
		if string(strs[r.reason]) == ReasonRateLimited {
			t.counts[i].Refused++
		}
	}
}

func (t *tallier) result() Tally {
	sortCounts(t.counts)
	t.t.Counts = t.counts
	return t.t
}

// Count is the aggregate of a batch for one account, day and endpoint.
type Count struct {
	AccountID   string
	Environment account.Environment
	Day         string
	Endpoint    string
	Counted     int64
	Uncounted   int64
	Refused     int64 // uncounted rows refused by a rate limit
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
			if e.Reason == ReasonRateLimited {
				out[i].Refused++
			}
		}
	}
	sortCounts(out)
	return out
}

// sortCounts orders counts by their key, so concurrent writers upsert
// counter rows in one global order (no lock-order deadlocks).
func sortCounts(out []Count) {
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
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
