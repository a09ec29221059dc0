package gtfs

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"

	"github.com/farebox/farebox/internal/apperr"
)

// snapshotMagic starts every encoded feed; the last byte is the format
// version. Version 2 appends route colours and shapes; version 1 snapshots
// (stored before shapes were kept) still decode, without them.
var snapshotMagic = [8]byte{'F', 'B', 'X', 'G', 'T', 'F', 'S', 2}

// maxLen bounds any decoded length so a corrupt snapshot cannot allocate wildly.
const maxLen = 1 << 28

// Encode writes the feed as a compact binary snapshot: varint and
// delta-varint columns followed by a CRC-32 of everything before it.
func (f *Feed) Encode(w io.Writer) error {
	crc := crc32.NewIEEE()
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	e := &encoder{w: bw}
	e.raw(snapshotMagic[:])
	e.str(f.Timezone)
	e.str(f.Version)
	e.uv(uint64(len(f.Agencies)))
	for _, a := range f.Agencies {
		e.str(a.ID)
		e.str(a.Name)
		e.str(a.URL)
		e.str(a.Timezone)
	}
	e.uv(uint64(len(f.Attributions)))
	for _, a := range f.Attributions {
		e.str(a.Organization)
		e.str(a.URL)
		e.str(a.Role)
	}
	s := &f.Stops
	e.strs(s.ID)
	e.strs(s.Code)
	e.strs(s.Name)
	e.strs(s.Platform)
	e.floats(s.Lat)
	e.floats(s.Lon)
	e.bytes(s.Type)
	e.ints(s.Parent, false)
	e.uv(uint64(len(f.Routes)))
	for _, r := range f.Routes {
		e.str(r.ID)
		e.v(int64(r.Agency))
		e.str(r.ShortName)
		e.str(r.LongName)
		e.v(int64(r.Type))
	}
	t := &f.Trips
	e.strs(t.ID)
	e.ints(t.Route, false)
	e.ints(t.Service, false)
	e.strs(t.Headsign)
	e.strs(t.ShortName)
	e.ints(t.First, true)
	st := &f.StopTimes
	e.ints(st.Stop, false)
	e.ints(st.Arrival, true)
	e.ints(st.Departure, true)
	e.uints(st.Sequence)
	e.bytes(st.Flags)
	e.uints(st.Headsign)
	e.uints(st.Track)
	e.uv(uint64(len(f.Services)))
	for _, sv := range f.Services {
		e.str(sv.ID)
		e.uv(uint64(sv.Weekdays))
		e.v(int64(sv.Start))
		e.v(int64(sv.End))
		e.ints(sv.Added, true)
		e.ints(sv.Removed, true)
	}
	e.uv(uint64(len(f.Frequencies)))
	for _, fr := range f.Frequencies {
		e.v(int64(fr.Trip))
		e.v(int64(fr.Start))
		e.v(int64(fr.End))
		e.v(int64(fr.Headway))
		b := uint64(0)
		if fr.ExactTimes {
			b = 1
		}
		e.uv(b)
	}
	e.strs(f.Strings)
	e.v(int64(f.MaxTime))
	e.v(int64(f.MinDay))
	e.v(int64(f.MaxDay))
	e.uv(uint64(len(f.Problems)))
	for _, p := range f.Problems {
		e.str(p.File)
		e.uv(uint64(p.Line))
		e.str(p.Message)
	}
	e.uv(uint64(f.ProblemCount))
	// Version 2.
	colors := make([]string, len(f.Routes))
	for i, r := range f.Routes {
		colors[i] = r.Color
	}
	e.strs(colors)
	e.ints(t.Shape, false)
	sh := &f.Shapes
	e.strs(sh.ID)
	e.ints(sh.First, true)
	e.ints(sh.Lat, true)
	e.ints(sh.Lon, true)
	if e.err == nil {
		e.err = bw.Flush()
	}
	if e.err != nil {
		return apperr.Wrap("gtfs.Encode", e.err)
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], crc.Sum32())
	_, err := w.Write(sum[:])
	return apperr.Wrap("gtfs.Encode", err)
}

type encoder struct {
	w   *bufio.Writer
	buf [binary.MaxVarintLen64]byte
	err error
}

func (e *encoder) raw(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}
func (e *encoder) uv(x uint64) { e.raw(e.buf[:binary.PutUvarint(e.buf[:], x)]) }
func (e *encoder) v(x int64)   { e.raw(e.buf[:binary.PutVarint(e.buf[:], x)]) }
func (e *encoder) str(s string) {
	e.uv(uint64(len(s)))
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}
func (e *encoder) strs(ss []string) {
	e.uv(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}
func (e *encoder) floats(fs []float64) {
	e.uv(uint64(len(fs)))
	for _, f := range fs {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(f))
		e.raw(b[:])
	}
}
func (e *encoder) bytes(b []uint8) { e.uv(uint64(len(b))); e.raw(b) }

// ints writes a column; delta stores differences to the previous value.
func (e *encoder) ints(xs []int32, delta bool) {
	e.uv(uint64(len(xs)))
	prev := int32(0)
	for _, x := range xs {
		if delta {
			e.v(int64(x) - int64(prev))
			prev = x
		} else {
			e.v(int64(x))
		}
	}
}

// uints writes a column of small unsigned values; a nil column stays nil.
func (e *encoder) uints(xs []uint32) {
	if xs == nil {
		e.uv(0)
		return
	}
	e.uv(uint64(len(xs)) + 1)
	for _, x := range xs {
		e.uv(uint64(x))
	}
}

// Decode reads a snapshot written by Encode. A corrupt or truncated snapshot
// is an apperr.Invalid error.
func Decode(r io.Reader) (*Feed, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, apperr.Wrap("gtfs.Decode", err)
	}
	f, err := decodeBytes(data)
	if err != nil {
		return nil, &apperr.Error{Op: "gtfs.Decode", Kind: apperr.Invalid, Code: CodeGTFSSnapshotCorrupt, Msg: "the feed snapshot is corrupt", Err: err}
	}
	return f, nil
}

func decodeBytes(data []byte) (*Feed, error) {
	if len(data) < len(snapshotMagic)+4 || [7]byte(data[:7]) != [7]byte(snapshotMagic[:7]) || data[7] < 1 || data[7] > snapshotMagic[7] {
		return nil, errors.New("not a feed snapshot of this version")
	}
	body := data[:len(data)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, errors.New("checksum mismatch")
	}
	d := &decoder{b: body[8:]}
	f := &Feed{}
	f.Timezone = d.str()
	f.Version = d.str()
	f.Agencies = makeN[Agency](d.n())
	for i := range f.Agencies {
		f.Agencies[i] = Agency{ID: d.str(), Name: d.str(), URL: d.str(), Timezone: d.str()}
	}
	f.Attributions = makeN[Attribution](d.n())
	for i := range f.Attributions {
		f.Attributions[i] = Attribution{Organization: d.str(), URL: d.str(), Role: d.str()}
	}
	s := &f.Stops
	s.ID, s.Code, s.Name, s.Platform = d.strs(), d.strs(), d.strs(), d.strs()
	s.Lat, s.Lon = d.floats(), d.floats()
	s.Type = d.bytes()
	s.Parent = d.ints(false)
	f.Routes = makeN[Route](d.n())
	for i := range f.Routes {
		f.Routes[i] = Route{ID: d.str(), Agency: int32(d.v()), ShortName: d.str(), LongName: d.str(), Type: int32(d.v())}
	}
	t := &f.Trips
	t.ID = d.strs()
	t.Route, t.Service = d.ints(false), d.ints(false)
	t.Headsign, t.ShortName = d.strs(), d.strs()
	t.First = d.ints(true)
	st := &f.StopTimes
	st.Stop = d.ints(false)
	st.Arrival, st.Departure = d.ints(true), d.ints(true)
	st.Sequence = d.uints()
	st.Flags = d.bytes()
	st.Headsign, st.Track = d.uints(), d.uints()
	f.Services = makeN[Service](d.n())
	for i := range f.Services {
		f.Services[i] = Service{ID: d.str(), Weekdays: uint8(d.uv()), Start: int32(d.v()), End: int32(d.v()), Added: d.ints(true), Removed: d.ints(true)}
	}
	f.Frequencies = makeN[Frequency](d.n())
	for i := range f.Frequencies {
		f.Frequencies[i] = Frequency{Trip: int32(d.v()), Start: int32(d.v()), End: int32(d.v()), Headway: int32(d.v()), ExactTimes: d.uv() == 1}
	}
	f.Strings = d.strs()
	f.MaxTime, f.MinDay, f.MaxDay = int32(d.v()), int32(d.v()), int32(d.v())
	f.Problems = makeN[Problem](d.n())
	for i := range f.Problems {
		f.Problems[i] = Problem{File: d.str(), Line: int(d.uv()), Message: d.str()}
	}
	f.ProblemCount = int(d.uv())
	if data[7] >= 2 {
		colors := d.strs()
		if d.err == nil && len(colors) != len(f.Routes) {
			d.fail(errors.New("route colours differ in number from the routes"))
		}
		for i := range colors {
			if i < len(f.Routes) {
				f.Routes[i].Color = colors[i]
			}
		}
		t.Shape = d.ints(false)
		sh := &f.Shapes
		sh.ID = d.strs()
		sh.First = d.ints(true)
		sh.Lat, sh.Lon = d.ints(true), d.ints(true)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("trailing bytes")
	}
	if d.err != nil {
		return nil, d.err
	}
	if err := f.validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// decoder reads varint columns from a byte slice; the first error sticks
// and every later read returns zero values.
type decoder struct {
	b   []byte
	err error
}

var errTruncated = errors.New("truncated snapshot")

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) uv() uint64 { return readVarint(d, binary.Uvarint) }

func (d *decoder) v() int64 { return readVarint(d, binary.Varint) }

// readVarint reads one varint with read (binary.Uvarint or binary.Varint).
func readVarint[T uint64 | int64](d *decoder, read func([]byte) (T, int)) T {
	x, n := read(d.b)
	if n <= 0 {
		d.fail(errTruncated)
		return 0
	}
	d.b = d.b[n:]
	return x
}

// n reads a length and checks it against the remaining input (every element
// takes at least one byte).
func (d *decoder) n() int {
	x := d.uv()
	if x > maxLen || x > uint64(len(d.b)) {
		d.fail(errTruncated)
		return 0
	}
	return int(x)
}

func (d *decoder) take(n int) []byte {
	if n > len(d.b) {
		d.fail(errTruncated)
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

func (d *decoder) str() string { return string(d.take(d.n())) }

func (d *decoder) strs() []string {
	n := d.n()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) floats() []float64 {
	n := d.n()
	if n == 0 {
		return nil
	}
	raw := d.take(n * 8)
	if raw == nil {
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[i*8:]))
	}
	return out
}

func (d *decoder) bytes() []uint8 {
	n := d.n()
	if n == 0 {
		return nil
	}
	return append([]uint8(nil), d.take(n)...)
}

func (d *decoder) ints(delta bool) []int32 {
	n := d.n()
	if n == 0 {
		return nil
	}
	out := make([]int32, n)
	prev := int64(0)
	for i := range out {
		x := d.v()
		if delta {
			x += prev
			prev = x
		}
		if x < math.MinInt32 || x > math.MaxInt32 {
			d.fail(errors.New("value out of range"))
			return nil
		}
		out[i] = int32(x)
	}
	return out
}

func (d *decoder) uints() []uint32 {
	n := d.uv()
	if n == 0 {
		return nil
	}
	n--
	if n > maxLen || n > uint64(len(d.b)) {
		d.fail(errTruncated)
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		x := d.uv()
		if x > math.MaxUint32 {
			d.fail(errors.New("value out of range"))
			return nil
		}
		out[i] = uint32(x)
	}
	return out
}

// makeN returns nil for zero so decoded feeds equal parsed ones.
func makeN[T any](n int) []T {
	if n == 0 {
		return nil
	}
	return make([]T, n)
}
