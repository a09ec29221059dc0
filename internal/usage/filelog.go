package usage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// FileLog is the embedded mode's ledger journal: segment files in the data
// directory, each mapped into memory (MAP_SHARED). A request's row is
// copied into the mapping under a mutex, and that is its commit: the bytes
// are then in the kernel's page cache, exactly where a write() would put
// them, so the row survives a crash of the process; this is the durability
// SQLite's WAL with synchronous=NORMAL gives the database file next to it.
// No system call and no waiting for other requests is needed, which is what
// keeps the ledger off the request path (a journal append per batch still
// cost ~8 % of the server's CPU at 45k req/s; a SQLite transaction per
// batch cost about half of it).
//
// Segments are preallocated (so a full disk fails when a segment is
// opened, as an error, never later as SIGBUS) and rolled into the database
// by Rollup (every second while serving, and at start and shutdown): one
// transaction per segment stores its batches and counters and records the
// segment's name, so a segment is counted exactly once even if the process
// dies between the commit and the removal of the file. Reading stops at the
// zeroed tail of a segment, and at a torn frame (a crash in the middle of a
// copy, whose request therefore got no response).
//
// Segments are recycled: a segment this process wrote stays mapped after
// it is switched out, Rollup reads its frames from the mapping (no read of
// the file), and once committed zeroes the bytes it used and renames the
// file to a spare ("spare-*.log", which Rollup never reads), which the next
// switch renames to the next segment's name. Every byte past a segment's
// frames is zero at all times, so a crash at any step leaves either a
// recorded segment (counted once, then removed), a segment of zeros, or a
// spare (removed at the next start). The pages of a new segment are
// touched once when it is created off the request path and stay in the
// page cache while it is recycled, so a request's copy does not take the
// page faults of fresh file pages (about 20 µs each on ext4, one per 30
// requests at 45k req/s: bench/ledger-cpu.sh, docs/operations.md).
//
// Frame layout: uint32 length (never 0), uint32 CRC-32 (IEEE) of the
// payload, payload = EncodeBatch(events).
type FileLog struct {
	dir      string
	size     int        // bytes per segment
	rollupMu sync.Mutex // one Rollup at a time
	frames   []byte     // Rollup's buffer for a segment's payloads (rollupMu held)

	lock *os.File // held while open (lockDir)

	mu      sync.Mutex
	seg     *segment   // nil: none open (opening the last one failed, or closed)
	retired []*segment // switched out, still mapped, not yet rolled up
	spares  []*segment // zeroed, mapped, renamed to spare names
	closed  bool
	seq     int
	run     string // unique per process start
}

// segment is an open, mapped journal file.
type segment struct {
	f    *os.File
	name string
	mem  []byte // the whole (preallocated) file
	off  int    // bytes used
}

const segmentPrefix, segmentSuffix, sparePrefix = "usage-", ".log", "spare-"

// maxSpares bounds the zeroed segments kept for reuse: one is enough for
// the switch every second; more pile up only after a burst that filled
// segments within a second.
const maxSpares = 2

var errDirInUse = errors.New("in use by another farebox process (each instance needs its own --data-dir)")

// SegmentSize is the size of a journal segment: about three seconds of
// rows at 45k requests per second (Rollup starts a new one every second).
const SegmentSize = 8 << 20

// OpenFileLog opens a new segment in dir (created if needed).
func OpenFileLog(dir string) (*FileLog, error) {
	return openFileLog(dir, SegmentSize)
}

func openFileLog(dir string, size int) (*FileLog, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("usage: journal dir: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("usage: journal %s: %w", dir, err)
	}
	// Spares an earlier process left hold nothing (they are zeroed before
	// they are renamed to spares).
	if stale, err := filepath.Glob(filepath.Join(dir, sparePrefix+"*"+segmentSuffix)); err == nil {
		for _, p := range stale {
			_ = os.Remove(p)
		}
	}
	l := &FileLog{dir: dir, size: size, lock: lock, run: fmt.Sprintf("%d", time.Now().UnixNano())}
	if err := l.openSegment(); err != nil {
		lock.Close()
		return nil, err
	}
	touch(l.seg.mem) // before serving: the first requests take no page faults either
	return l, nil
}

func (l *FileLog) openSegment() error {
	seg, err := l.newSegment(l.nextName())
	if err != nil {
		return err
	}
	l.seg = seg
	return nil
}

// nextName names the next segment (l.mu held).
func (l *FileLog) nextName() string {
	l.seq++
	return fmt.Sprintf("%s%s-%06d%s", segmentPrefix, l.run, l.seq, segmentSuffix)
}

// newSegment creates, preallocates and maps a segment file.
func (l *FileLog) newSegment(name string) (*segment, error) {
	path := filepath.Join(l.dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o640)
	if err != nil {
		return nil, fmt.Errorf("usage: journal segment: %w", err)
	}
	mem, err := mapSegment(f, l.size)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("usage: journal segment %s: %w", name, err)
	}
	return &segment{f: f, name: name, mem: mem}, nil
}

// nextSegment is the segment to switch to: a spare renamed to name, or a
// new file. A spare that cannot be renamed is dropped (its file holds
// zeros only) and a new file made instead.
func (l *FileLog) nextSegment(spare *segment, name string) (*segment, error) {
	if spare != nil {
		if err := os.Rename(filepath.Join(l.dir, spare.name), filepath.Join(l.dir, name)); err == nil {
			spare.name = name
			return spare, nil
		}
		_ = spare.remove(l.dir)
	}
	return l.newSegment(name)
}

// takeSpare takes a spare segment, or nil (l.mu held).
func (l *FileLog) takeSpare() *segment {
	n := len(l.spares)
	if n == 0 {
		return nil
	}
	s := l.spares[n-1]
	l.spares = l.spares[:n-1]
	return s
}

// close unmaps the segment and cuts the file to its frames.
func (seg *segment) close() error {
	return errors.Join(unmapSegment(seg.mem), seg.f.Truncate(int64(seg.off)), seg.f.Close())
}

// remove unmaps the segment and removes its file.
func (seg *segment) remove(dir string) error {
	err := errors.Join(unmapSegment(seg.mem), seg.f.Close())
	if rerr := os.Remove(filepath.Join(dir, seg.name)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

// touch writes to every page of mem, so the kernel maps them now (off the
// request path) instead of on a request's first copy into each page.
func touch(mem []byte) {
	page := os.Getpagesize()
	for i := 0; i < len(mem); i += page {
		mem[i] = 0
	}
}

// Record commits one row (a usage.Recorder).
func (l *FileLog) Record(ctx context.Context, ev Event) error {
	one := [1]Event{ev}
	return l.Write(ctx, one[:])
}

// Write commits events as one frame.
func (l *FileLog) Write(_ context.Context, events []Event) error {
	var buf [256]byte
	frame := AppendBatch(buf[:8], events)
	binary.LittleEndian.PutUint32(frame[0:4], uint32(len(frame)-8))
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.seg == nil || l.seg.off+len(frame) > len(l.seg.mem) {
		if err := l.rotateLocked(true); err != nil {
			return fmt.Errorf("usage: journal write: %w", err)
		}
		if len(frame) > len(l.seg.mem) {
			return fmt.Errorf("usage: journal write: a frame of %d bytes exceeds the segment size", len(frame))
		}
	}
	dst := l.seg.mem[l.seg.off : l.seg.off+len(frame)]
	copy(dst, frame)
	// The checksum is taken of the copy, last: hash/crc32 calls through a
	// function variable, so checksumming buf would move it to the heap
	// (an allocation per request). A crash before it leaves a frame
	// whose checksum fails: torn, and unanswered.
	binary.LittleEndian.PutUint32(dst[4:8], crc32.ChecksumIEEE(dst[8:]))
	l.seg.off += len(frame)
	return nil
}

// rotateLocked retires the current segment (Rollup takes it in) and
// opens the next if reopen: a spare if there is one, else a new file whose
// pages are not touched beforehand (the requests waiting for the lock
// should not wait for that too). On failure no segment is open and the
// next Write tries again.
func (l *FileLog) rotateLocked(reopen bool) error {
	if seg := l.seg; seg != nil {
		l.seg = nil
		l.retired = append(l.retired, seg)
	}
	if !reopen {
		return nil
	}
	seg, err := l.nextSegment(l.takeSpare(), l.nextName())
	if err != nil {
		return err
	}
	l.seg = seg
	return nil
}

// Close retires the current segment and drops the spares; Rollup
// afterwards takes the segment in. The directory stays locked until
// Release.
func (l *FileLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	err := l.rotateLocked(false)
	for _, s := range l.spares {
		err = errors.Join(err, s.remove(l.dir))
	}
	l.spares = nil
	return err
}

// Release unlocks the directory for another process (after Close and the
// last Rollup). Segments the last Rollup could not commit are unmapped and
// cut to their frames; the next start rolls them up.
func (l *FileLog) Release() error {
	l.mu.Lock()
	var err error
	for _, s := range l.retired {
		err = errors.Join(err, s.close())
	}
	l.retired = nil
	l.mu.Unlock()
	return errors.Join(err, l.lock.Close())
}

// SegmentStore commits one segment's batches (EncodeBatch records back to
// back) and remembers its name, all in one transaction, doing nothing when
// the name is already recorded. data is only valid during the call.
type SegmentStore func(ctx context.Context, name string, data []byte) error

// Rollup closes the current segment unless it is empty (starting a new one
// unless the log is closed) and moves every closed segment in the directory, including those
// left by an earlier process, into the database: this process's segments
// are read from their mappings and recycled after their commit, the others
// read from their files and removed after it.
func (l *FileLog) Rollup(ctx context.Context, commit SegmentStore) error {
	l.rollupMu.Lock()
	defer l.rollupMu.Unlock()
	if err := l.switchSegment(); err != nil {
		return err
	}
	l.mu.Lock()
	active := ""
	if l.seg != nil {
		active = l.seg.name
	}
	l.mu.Unlock()
	names, err := filepath.Glob(filepath.Join(l.dir, segmentPrefix+"*"+segmentSuffix))
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, path := range names {
		name := filepath.Base(path)
		if name == active {
			continue
		}
		if err := l.rollupOne(ctx, commit, path); err != nil {
			return err
		}
	}
	return nil
}

// rollupOne commits one closed segment and then recycles or removes it.
func (l *FileLog) rollupOne(ctx context.Context, commit SegmentStore, path string) error {
	name := filepath.Base(path)
	seg := l.takeRetired(name)
	var data []byte
	if seg != nil {
		// Written by this process and switched out: no request writes
		// into it any more, and its frames are whole (each was copied
		// and checksummed under the lock), so their checksums need no
		// second look.
		l.frames = appendPayloads(l.frames[:0], seg.mem[:seg.off], false)
		data = l.frames
	} else {
		var err error
		if data, err = ReadSegment(path); err != nil {
			return err
		}
	}
	if err := commit(ctx, strings.TrimSuffix(name, segmentSuffix), data); err != nil {
		if seg != nil {
			l.mu.Lock()
			l.retired = append(l.retired, seg)
			l.mu.Unlock()
		}
		return err
	}
	if seg != nil {
		return l.recycle(seg)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// takeRetired removes the retired segment named name from the list.
func (l *FileLog) takeRetired(name string) *segment {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, s := range l.retired {
		if s.name == name {
			l.retired = append(l.retired[:i], l.retired[i+1:]...)
			return s
		}
	}
	return nil
}

// recycle zeroes a committed segment's frames and keeps it as a spare
// (removed instead once the log is closed or enough spares wait). Zeroing
// comes before the rename: a spare name never holds a frame. The pages the
// next segment will likely use (twice what this one used) are touched
// again, since the kernel write-protects them when it writes them back.
func (l *FileLog) recycle(seg *segment) error {
	l.mu.Lock()
	keep := !l.closed && len(l.spares) < maxSpares
	l.seq++
	spare := fmt.Sprintf("%s%s-%06d%s", sparePrefix, l.run, l.seq, segmentSuffix)
	l.mu.Unlock()
	if !keep {
		return seg.remove(l.dir)
	}
	used := seg.off
	clear(seg.mem[:used])
	touch(seg.mem[used:min(len(seg.mem), 2*used)])
	if err := os.Rename(filepath.Join(l.dir, seg.name), filepath.Join(l.dir, spare)); err != nil {
		return seg.remove(l.dir)
	}
	seg.name, seg.off = spare, 0
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return seg.remove(l.dir)
	}
	l.spares = append(l.spares, seg)
	return nil
}

// switchSegment puts a new segment in place of the current one unless that
// is empty (an idle service makes no files), and retires the old one. The
// next segment (a spare, or a new file whose pages are touched here) is
// made ready before taking the lock, so requests never wait for it; if it
// cannot be made, the current segment stays in use.
func (l *FileLog) switchSegment() error {
	l.mu.Lock()
	if l.closed || (l.seg != nil && l.seg.off == 0) {
		l.mu.Unlock()
		return nil
	}
	name := l.nextName()
	spare := l.takeSpare()
	l.mu.Unlock()
	next, err := l.nextSegment(spare, name)
	if err != nil {
		return err
	}
	if spare == nil {
		touch(next.mem)
	}
	l.mu.Lock()
	if l.closed { // closed meanwhile: the new segment is not needed
		l.mu.Unlock()
		return next.remove(l.dir)
	}
	if l.seg != nil {
		l.retired = append(l.retired, l.seg)
	}
	l.seg = next
	l.mu.Unlock()
	return nil
}

// ReadSegment returns a segment's batches (EncodeBatch records back to
// back, as DecodeBatch and CountBatches read them), ignoring a torn last
// frame. A frame whose checksum holds but whose record does not decode is
// an error.
func ReadSegment(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := appendPayloads(make([]byte, 0, len(data)), data, true)
	if len(out) > 0 {
		if err := walk(out, nil, func(row, [][]byte) {}); err != nil {
			return nil, fmt.Errorf("usage: %s: %w", filepath.Base(path), err)
		}
	}
	return out, nil
}

// appendPayloads appends the payloads of data's frames to out, up to the
// zeroed rest of the segment or, if verify, a torn or damaged frame
// (nothing after it was acknowledged).
func appendPayloads(out, data []byte, verify bool) []byte {
	for len(data) >= 8 {
		n := binary.LittleEndian.Uint32(data[0:4])
		if n == 0 {
			break // the unused, zeroed rest of a segment
		}
		if int64(n) > int64(len(data)-8) {
			break // torn payload
		}
		payload := data[8 : 8+n]
		if verify && crc32.ChecksumIEEE(payload) != binary.LittleEndian.Uint32(data[4:8]) {
			break // torn or damaged tail: nothing after it was acknowledged
		}
		out = append(out, payload...)
		data = data[8+n:]
	}
	return out
}
