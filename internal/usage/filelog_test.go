package usage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// rolled collects what Rollup hands to the database, by segment name.
type rolled struct {
	mu   sync.Mutex
	segs map[string][]Event
}

func (r *rolled) store(_ context.Context, name string, data []byte) error {
	ev, err := DecodeBatch(data)
	if err != nil && len(data) > 0 {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.segs == nil {
		r.segs = map[string][]Event{}
	}
	if _, dup := r.segs[name]; dup {
		return nil // recorded already: the store ignores it (SegmentStore contract)
	}
	r.segs[name] = ev
	return nil
}

// eachOnce checks that want distinct rows were rolled up, each once.
func (r *rolled) eachOnce(t *testing.T, want int) {
	t.Helper()
	got := r.ids()
	if len(got) != want {
		t.Fatalf("%d distinct rows rolled up, want %d", len(got), want)
	}
	for id, n := range got {
		if n != 1 {
			t.Fatalf("%s rolled up %d times", id, n)
		}
	}
}

func (r *rolled) ids() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, evs := range r.segs {
		for _, e := range evs {
			out[e.RequestID]++
		}
	}
	return out
}

func segments(t *testing.T, dir string) []string {
	t.Helper()
	s, err := filepath.Glob(filepath.Join(dir, segmentPrefix+"*"+segmentSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A process that dies leaves a preallocated segment whose rows are in the
// file (the mapping is shared) followed by zeros, maybe with a torn frame
// at the frontier; the next process counts exactly the committed rows.
func TestFileLogCrashLeavesCommittedRows(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	dead := mustOpenFileLog(t, dir, 64<<10)
	recordN(t, dead, "r", 10)
	// The crash: no Close, no unmap, no truncation; a frame half copied.
	frontier := dead.seg.off
	half := AppendBatch(make([]byte, 8, 64), []Event{ev("torn")})
	half[0] = byte(len(half) - 8)
	if _, err := dead.seg.f.WriteAt(half[:len(half)/2], int64(frontier)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, dead.seg.name)); err != nil || fi.Size() != 64<<10 {
		t.Fatalf("crashed segment: %v, %v (want the preallocated size)", fi, err)
	}
	// While the process lives, no other may journal into its directory.
	if _, err := openFileLog(dir, 64<<10); err == nil || !strings.Contains(err.Error(), "another farebox process") {
		t.Fatalf("second journal on a locked directory: %v", err)
	}
	dead.lock.Close() // the process is gone: the kernel drops its lock

	next := mustOpenFileLog(t, dir, 64<<10)
	var r rolled
	if err := next.Rollup(ctx, r.store); err != nil {
		t.Fatal(err)
	}
	got := r.ids()
	if len(got) != 10 || got["torn"] != 0 {
		t.Fatalf("rolled up %v, want r0..r9 once each", got)
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("%s rolled up %d times", id, n)
		}
	}
	// Only the next process's (empty, still open) segment is left.
	if s := segments(t, dir); len(s) != 1 || filepath.Base(s[0]) != next.seg.name {
		t.Fatalf("segments left: %v", s)
	}
}

// A full segment is retired and the next opened inline;
// concurrent rows all arrive exactly once, and an idle log makes no files.
func TestFileLogRotatesFullSegments(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l := mustOpenFileLog(t, dir, 4096)
	recordConcurrently(t, l, 8, 200)
	closed := 0
	for _, p := range segments(t, dir) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(p) != l.seg.name {
			closed++
			if fi.Size() == 0 || fi.Size() > 4096 {
				t.Errorf("closed segment %s has %d bytes", filepath.Base(p), fi.Size())
			}
		}
	}
	if closed < 10 {
		t.Fatalf("%d closed segments for 1,600 rows in 4 KiB segments", closed)
	}
	var r rolled
	if err := l.Rollup(ctx, r.store); err != nil {
		t.Fatal(err)
	}
	r.eachOnce(t, 1600)
	// Idle: rollups keep the empty segment instead of making new files.
	before := segments(t, dir)
	for range 3 {
		if err := l.Rollup(ctx, r.store); err != nil {
			t.Fatal(err)
		}
	}
	if after := segments(t, dir); strings.Join(after, ",") != strings.Join(before, ",") || len(after) != 1 {
		t.Fatalf("idle rollups changed the segments: %v -> %v", before, after)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(ctx, ev("late")); err != ErrClosed {
		t.Fatalf("Record after Close: %v", err)
	}
	if err := l.Rollup(ctx, r.store); err != nil {
		t.Fatal(err)
	}
	if s := segments(t, dir); len(s) != 0 {
		t.Fatalf("segments left after Close and Rollup: %v", s)
	}
}

// A segment that cannot be created (here: the directory is gone) fails the
// row with an error instead of losing it, and the log recovers once it can.
func TestFileLogOpenFailureIsAnError(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l := mustOpenFileLog(t, dir, 4096)
	moved := dir + ".moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(moved)
	// Fill the open segment (it lives on in the moved directory), so the
	// next row needs a new one.
	var err2 error
	for i := 0; i < 1000 && err2 == nil; i++ {
		err2 = l.Record(ctx, ev(fmt.Sprintf("r%d", i)))
	}
	if err2 == nil || !strings.Contains(err2.Error(), "journal") {
		t.Fatalf("no error once no segment could be opened: %v", err2)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(ctx, ev("after")); err != nil {
		t.Fatalf("after the directory is back: %v", err)
	}
}

// Rollups running while requests record (every second in the server) take
// every row exactly once: none lost to a rotation, none rolled twice.
func TestFileLogRollupDuringRecords(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l := mustOpenFileLog(t, dir, 16<<10)
	var r rolled
	stop := make(chan struct{})
	rollups := make(chan error, 1)
	go func() {
		defer close(rollups)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := l.Rollup(ctx, r.store); err != nil {
				rollups <- err
				return
			}
		}
	}()
	recordConcurrently(t, l, 4, 500)
	close(stop)
	if err := <-rollups; err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Rollup(ctx, r.store); err != nil {
		t.Fatal(err)
	}
	r.eachOnce(t, 2000)
}

// A rollup that cannot create the next segment leaves the current one in
// use: requests go on being recorded, and the next rollup takes them all.
func TestFileLogRollupKeepsSegmentWhenNextFails(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l := mustOpenFileLog(t, dir, 64<<10)
	if err := l.Record(ctx, ev("before")); err != nil {
		t.Fatal(err)
	}
	moved := dir + ".moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	var r rolled
	if err := l.Rollup(ctx, r.store); err == nil {
		t.Fatal("rollup without a directory succeeded")
	}
	if err := l.Record(ctx, ev("during")); err != nil {
		t.Fatalf("recording after a failed rollup: %v", err)
	}
	if err := os.Rename(moved, dir); err != nil {
		t.Fatal(err)
	}
	if err := l.Rollup(ctx, r.store); err != nil {
		t.Fatal(err)
	}
	if got := r.ids(); len(got) != 2 || got["before"] != 1 || got["during"] != 1 {
		t.Fatalf("rolled up %v, want before and during once", got)
	}
}

// Rollups recycle this process's segments: a committed segment is zeroed
// and kept as a spare (never read by a rollup), the next switch reuses it
// under a new name, and no row is counted twice or lost however often a
// file is reused. Spares an earlier process left are removed at start.
func TestFileLogRecyclesSegments(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(dir, sparePrefix+"1-000001"+segmentSuffix), []byte{1, 2, 3}, 0o640); err != nil {
		t.Fatal(err)
	}
	l := mustOpenFileLog(t, dir, 16<<10)
	if s, _ := filepath.Glob(filepath.Join(dir, sparePrefix+"*")); len(s) != 0 {
		t.Fatalf("stale spares kept: %v", s)
	}
	var r rolled
	var files []os.FileInfo // the distinct files used
	for round := range 6 {
		recordN(t, l, fmt.Sprintf("r%d-", round), 20+round*10)
		fi, err := os.Stat(filepath.Join(dir, l.seg.name))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(files, func(f os.FileInfo) bool { return os.SameFile(f, fi) }) {
			files = append(files, fi)
		}
		if err := l.Rollup(ctx, r.store); err != nil {
			t.Fatal(err)
		}
		spares, _ := filepath.Glob(filepath.Join(dir, sparePrefix+"*"+segmentSuffix))
		if len(spares) == 0 || len(spares) > maxSpares {
			t.Fatalf("round %d: spares %v", round, spares)
		}
		for _, p := range spares { // a spare holds no frame: nothing to count after a crash
			if data, err := ReadSegment(p); err != nil || len(data) != 0 {
				t.Fatalf("spare %s holds %d bytes of frames (%v)", p, len(data), err)
			}
		}
		if s := segments(t, dir); len(s) != 1 || filepath.Base(s[0]) != l.seg.name {
			t.Fatalf("round %d: segments %v", round, s)
		}
	}
	if len(files) != 2 {
		t.Errorf("6 rollups used %d files, want 2 reused ones", len(files))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Rollup(ctx, r.store); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	total := 0
	for round := range 6 {
		total += 20 + round*10
	}
	r.eachOnce(t, total)
	if left, _ := os.ReadDir(dir); len(left) != 1 || left[0].Name() != "lock" {
		t.Fatalf("files left after Close, Rollup and Release: %v", left)
	}
}

// A rollup whose commit fails keeps this process's segment (mapped, as
// it was) for the next rollup, and Release leaves one not yet committed
// cut to its frames for the next start.
func TestFileLogFailedCommitKeepsSegment(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l := mustOpenFileLog(t, dir, 16<<10)
	recordN(t, l, "a", 5)
	failing := func(context.Context, string, []byte) error { return fmt.Errorf("database down") }
	if err := l.Rollup(ctx, failing); err == nil {
		t.Fatal("a failed commit was not reported")
	}
	if err := l.Record(ctx, ev("b")); err != nil {
		t.Fatal(err)
	}
	var r rolled
	if err := l.Rollup(ctx, r.store); err != nil {
		t.Fatal(err)
	}
	r.eachOnce(t, 6)
	if err := l.Record(ctx, ev("c")); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Rollup(ctx, failing); err == nil {
		t.Fatal("a failed commit was not reported")
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	s := segments(t, dir)
	if len(s) != 1 {
		t.Fatalf("segments after Release: %v", s)
	}
	if fi, err := os.Stat(s[0]); err != nil || fi.Size() == 0 || fi.Size() >= 16<<10 {
		t.Fatalf("uncommitted segment not cut to its frames: %v %v", fi, err)
	}
	next := mustOpenFileLog(t, dir, 16<<10)
	if err := next.Rollup(ctx, r.store); err != nil {
		t.Fatal(err)
	}
	r.eachOnce(t, 7)
}

// BenchmarkFileLogRecord: the journal's cost per request (encode, checksum,
// copy into the mapping; the segment's pages are touched when it is
// opened, so no page fault of fresh segment pages).
func BenchmarkFileLogRecord(b *testing.B) {
	l := mustOpenFileLog(b, b.TempDir(), 64<<20)
	e := ev("0123456789abcdef01234567")
	e.AccountID = "farebox-account-0d1f2e3c-4b5a-4687-9a0b-c1d2e3f40516"
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Record(context.Background(), e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFileLogRollup: the rollup's cost per row of a segment of this
// process (its frames read from the mapping, compacted and tallied as the
// store does, the segment zeroed and kept as a spare); the database's
// insert is not in it.
func BenchmarkFileLogRollup(b *testing.B) {
	const rows = 20000
	l := mustOpenFileLog(b, b.TempDir(), 4<<20)
	e := ev("")
	e.AccountID = "farebox-account-0d1f2e3c-4b5a-4687-9a0b-c1d2e3f40516"
	ids := make([]string, rows)
	for i := range ids {
		ids[i] = fmt.Sprintf("%024x", i)
	}
	ctx := context.Background()
	commit := func(_ context.Context, _ string, data []byte) error {
		_, _, err := Compact(data)
		return err
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for _, id := range ids {
			e.RequestID = id
			if err := l.Record(ctx, e); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := l.Rollup(ctx, commit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
}

// BenchmarkFileLogSteady: the journal's whole cost per request as a
// server pays it at about 40k requests per second: a row recorded per
// operation in segments of SegmentSize, and a rollup (compacting and
// tallying as the store does, without the database's insert) every
// 40,000 rows, as the server's rollup every second. Its CPU time per
// operation (user and system, from a run with -benchtime Nx) is what the
// ledger adds to a request.
func BenchmarkFileLogSteady(b *testing.B) {
	l := mustOpenFileLog(b, b.TempDir(), SegmentSize)
	e := ev("")
	e.AccountID = "farebox-account-0d1f2e3c-4b5a-4687-9a0b-c1d2e3f40516"
	e.Endpoint = "GET /v1/account.json"
	ids := make([]string, 40000)
	for i := range ids {
		ids[i] = fmt.Sprintf("%024x", i)
	}
	ctx := context.Background()
	commit := func(_ context.Context, _ string, data []byte) error {
		_, _, err := Compact(data)
		return err
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		e.RequestID = ids[i]
		if err := l.Record(ctx, e); err != nil {
			b.Fatal(err)
		}
		if i++; i == len(ids) {
			i = 0
			if err := l.Rollup(ctx, commit); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// recordConcurrently records n events "w<worker>-<i>" from each of workers
// goroutines at once and returns when all are done.
func recordConcurrently(t *testing.T, l *FileLog, workers, n int) {
	t.Helper()
	concurrently(workers, n, func(id string) {
		if err := l.Record(context.Background(), ev(id)); err != nil {
			t.Error(err)
		}
	})
}

// mustOpenFileLog opens a journal of size-byte segments in dir.
func mustOpenFileLog(tb testing.TB, dir string, size int) *FileLog {
	tb.Helper()
	l, err := openFileLog(dir, size)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// recordN records n rows with the names prefix0 … prefix(n-1), failing t
// at the first error.
func recordN(t *testing.T, l *FileLog, prefix string, n int) {
	t.Helper()
	for i := range n {
		if err := l.Record(context.Background(), ev(fmt.Sprintf("%s%d", prefix, i))); err != nil {
			t.Fatal(err)
		}
	}
}
