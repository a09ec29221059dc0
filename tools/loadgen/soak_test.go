package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestReadMemory takes the soak's reading of this process, through a
// listener serving what farebox's --pprof-addr serves (the heap profile
// and POST /debug/free-os-memory): the parts are consistent (the live heap
// inside the spans in use, those inside what the runtime holds, that
// inside anonymous RSS inside RSS), and an open .db file counts as one
// SQLite connection.
func TestReadMemory(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/debug/pprof/heap", pprof.Handler("heap"))
	mux.HandleFunc("POST /debug/free-os-memory", func(w http.ResponseWriter, r *http.Request) {
		debug.FreeOSMemory()
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "farebox.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	m, err := readMemory(os.Getpid(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", m)
	if !(0 < m.heap && m.heap <= m.spans && m.spans < m.goResident && 0 < m.stacks && m.stacks < m.goResident) {
		t.Errorf("inconsistent Go figures: %+v", m)
	}
	if !(0 < m.anon && m.anon <= m.rss) {
		t.Errorf("inconsistent resident set: %+v", m)
	}
	if m.dbFiles != 1 {
		t.Errorf("db files = %d, want 1 (this test's farebox.db)", m.dbFiles)
	}
	if l := loadAverage(); l == "" {
		t.Error("no load average")
	}
}

// TestMemStatsRefusesAnotherPage: a listener that is not a pprof one is an
// error naming what came back, not a reading of zeros.
func TestMemStatsRefusesAnotherPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("not a heap profile\n"))
	}))
	defer srv.Close()
	if _, err := memStats(srv.URL, true); err == nil {
		t.Fatal("no error for a page without MemStats")
	}
}
