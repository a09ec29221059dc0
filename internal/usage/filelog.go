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
// zeroed tail of a segment a crashed process left, and at a torn frame (a
// crash in the middle of a copy, whose request therefore got no response).
//
// Frame layout: uint32 length (never 0), uint32 CRC-32 (IEEE) of the
// payload, payload = EncodeBatch(events).
type FileLog struct {
	dir      string
	size     int        // bytes per segment
	rollupMu sync.Mutex // one Rollup at a time

	lock *os.File // held while open (lockDir)

	mu     sync.Mutex
	seg    *segment // nil: none open (opening the last one failed, or closed)
	closed bool
	seq    int
	run    string // unique per process start
}

// segment is an open, mapped journal file.
type segment struct {
	f    *os.File
	name string
	mem  []byte // the whole (preallocated) file
	off  int    // bytes used
}

const segmentPrefix, segmentSuffix = "usage-", ".log"

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
	l := &FileLog{dir: dir, size: size, lock: lock, run: fmt.Sprintf("%d", time.Now().UnixNano())}
	if err := l.openSegment(); err != nil {
		lock.Close()
		return nil, err
	}
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

// close unmaps the segment and cuts the file to its frames.
func (seg *segment) close() error {
	return errors.Join(unmapSegment(seg.mem), seg.f.Truncate(int64(seg.off)), seg.f.Close())
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
	payload := frame[8:]
	binary.LittleEndian.PutUint32(frame[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(frame[4:8], crc32.ChecksumIEEE(payload))
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
	copy(l.seg.mem[l.seg.off:], frame)
	l.seg.off += len(frame)
	return nil
}

// rotateLocked closes the current segment, cut to the frames it holds, and
// opens the next if reopen. On failure no segment is open and the next
// Write tries again.
func (l *FileLog) rotateLocked(reopen bool) error {
	var err error
	if seg := l.seg; seg != nil {
		l.seg = nil
		err = seg.close()
	}
	if reopen {
		if oerr := l.openSegment(); oerr != nil {
			return errors.Join(err, oerr)
		}
	}
	return err
}

// Close closes the current segment; Rollup afterwards takes it in too.
// The directory stays locked until Release.
func (l *FileLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return l.rotateLocked(false)
}

// Release unlocks the directory for another process (after Close and the
// last Rollup).
func (l *FileLog) Release() error { return l.lock.Close() }

// SegmentStore commits one segment's batches (EncodeBatch records back to
// back) and remembers its name, all in one transaction, doing nothing when
// the name is already recorded.
type SegmentStore func(ctx context.Context, name string, data []byte) error

// Rollup closes the current segment unless it is empty (starting a new one
// unless the log is closed) and moves every closed segment in the directory, including those
// left by an earlier process, into the database, removing each file after
// its commit.
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
		data, err := ReadSegment(path)
		if err != nil {
			return err
		}
		if err := commit(ctx, strings.TrimSuffix(name, segmentSuffix), data); err != nil {
			return err
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// switchSegment puts a new segment in place of the current one unless that
// is empty (an idle service makes no files), and closes the old one. The
// new file is created and mapped before taking the lock, so requests never
// wait for it; if it cannot be created, the current segment stays in use.
func (l *FileLog) switchSegment() error {
	l.mu.Lock()
	if l.closed || (l.seg != nil && l.seg.off == 0) {
		l.mu.Unlock()
		return nil
	}
	name := l.nextName()
	l.mu.Unlock()
	next, err := l.newSegment(name)
	if err != nil {
		return err
	}
	l.mu.Lock()
	old := l.seg
	if l.closed {
		old = next // closed meanwhile: the new segment is not needed
	} else {
		l.seg = next
	}
	l.mu.Unlock()
	if old == nil {
		return nil
	}
	return old.close()
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
	out := make([]byte, 0, len(data))
	for len(data) >= 8 {
		n := binary.LittleEndian.Uint32(data[0:4])
		if n == 0 {
			break // the unused, zeroed rest of a segment
		}
		if int64(n) > int64(len(data)-8) {
			break // torn payload
		}
		payload := data[8 : 8+n]
		if crc32.ChecksumIEEE(payload) != binary.LittleEndian.Uint32(data[4:8]) {
			break // torn or damaged tail: nothing after it was acknowledged
		}
		out = append(out, payload...)
		data = data[8+n:]
	}
	if len(out) > 0 {
		if err := walk(out, nil, func(row, [][]byte) {}); err != nil {
			return nil, fmt.Errorf("usage: %s: %w", filepath.Base(path), err)
		}
	}
	return out, nil
}
