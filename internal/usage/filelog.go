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

// FileLog is the embedded mode's ledger journal: an append-only file in
// the data directory that takes each group-committed batch with a single
// write. The write returns once the kernel has the bytes, so the record
// survives a crash of the process, exactly the durability SQLite's WAL with
// synchronous=NORMAL gives the database file next to it; what it saves is
// the B-tree and WAL work of one SQLite transaction per batch, which at 64
// concurrent clients cost about half the service's CPU.
//
// Segments are rolled into the database by Rollup (every second while
// serving, and at start and shutdown): one transaction per segment stores
// its batches and counters and records the segment's name, so a segment is
// counted exactly once even if the process dies between the commit and the
// removal of the file. A torn frame at the end of a segment (a crash in the
// middle of a write, whose request therefore got no response) is ignored.
//
// Frame layout: uint32 length, uint32 CRC-32 (IEEE) of the payload, payload
// = EncodeBatch(events).
type FileLog struct {
	dir      string
	rollupMu sync.Mutex // one Rollup at a time

	mu     sync.Mutex
	f      *os.File
	torn   bool // the last write failed
	closed bool
	seq    int
	run    string // unique per process start
}

const segmentPrefix, segmentSuffix = "usage-", ".log"

// OpenFileLog opens a new segment in dir (created if needed).
func OpenFileLog(dir string) (*FileLog, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("usage: journal dir: %w", err)
	}
	l := &FileLog{dir: dir, run: fmt.Sprintf("%d", time.Now().UnixNano())}
	if err := l.openSegment(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *FileLog) openSegment() error {
	l.seq++
	name := fmt.Sprintf("%s%s-%06d%s", segmentPrefix, l.run, l.seq, segmentSuffix)
	f, err := os.OpenFile(filepath.Join(l.dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("usage: journal segment: %w", err)
	}
	l.f = f
	return nil
}

// Write appends one batch with a single write call (a Writer for NewLedger).
func (l *FileLog) Write(_ context.Context, events []Event) error {
	frame := AppendBatch(make([]byte, 8, 64+48*len(events)), events)
	payload := frame[8:]
	binary.LittleEndian.PutUint32(frame[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(frame[4:8], crc32.ChecksumIEEE(payload))
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.torn {
		// A failed write may have left part of a frame, and ReadSegment
		// stops there: later batches go to a new segment.
		if err := l.rotateLocked(true); err != nil {
			return fmt.Errorf("usage: journal write: %w", err)
		}
		l.torn = false
	}
	if l.f == nil { // opening the last segment failed; try again
		if err := l.openSegment(); err != nil {
			return err
		}
	}
	if _, err := l.f.Write(frame); err != nil {
		l.torn = true
		return fmt.Errorf("usage: journal write: %w", err)
	}
	return nil
}

// rotate closes the current segment and starts a new one (unless closing).
func (l *FileLog) rotate(reopen bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rotateLocked(reopen && !l.closed)
}

func (l *FileLog) rotateLocked(reopen bool) error {
	var err error
	if l.f != nil {
		err = l.f.Close()
		l.f = nil
	}
	if reopen {
		// On failure no segment is open and the next Write tries again.
		if oerr := l.openSegment(); oerr != nil {
			return errors.Join(err, oerr)
		}
	}
	return err
}

// Close closes the current segment; Rollup afterwards takes it in too.
func (l *FileLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return l.rotateLocked(false)
}

// SegmentStore commits one segment's batches (EncodeBatch records back to
// back) and remembers its name, all in one transaction, doing nothing when
// the name is already recorded.
type SegmentStore func(ctx context.Context, name string, data []byte) error

// Rollup closes the current segment (starting a new one unless the log is
// closed) and moves every closed segment in the directory, including those
// left by an earlier process, into the database, removing each file after
// its commit.
func (l *FileLog) Rollup(ctx context.Context, commit SegmentStore) error {
	l.rollupMu.Lock()
	defer l.rollupMu.Unlock()
	if err := l.rotate(true); err != nil {
		return err
	}
	l.mu.Lock()
	active := ""
	if l.f != nil {
		active = filepath.Base(l.f.Name())
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
		if err := walk(out, nil, func(*row, [][]byte) {}); err != nil {
			return nil, fmt.Errorf("usage: %s: %w", filepath.Base(path), err)
		}
	}
	return out, nil
}
