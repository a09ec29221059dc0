package config

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseRealtime(t *testing.T) {
	got, err := ParseRealtime(" caltrain=https://rt.example.org/tu.pb?a=1;bart=/data/bart.pb\tlirr= ")
	want := map[string]string{"caltrain": "https://rt.example.org/tu.pb?a=1", "bart": "/data/bart.pb", "lirr": ""}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("got %v %v", got, err)
	}
	for _, bad := range []string{"caltrain", "=x", "a=1;a=2", "http://x=y"} {
		if _, err := ParseRealtime(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	c, err := Load([]string{"--realtime", "a=/f.pb", "--realtime-interval", "45s"}, func(k string) string {
		return map[string]string{"FAREBOX_GTFS_REFRESH": "3s", "FAREBOX_REALTIME_MAX_AGE": "2m", "FAREBOX_REALTIME_ALERTS": "a=https://rt.example.org/alerts.pb;b=/al.pb"}[k]
	}, io.Discard)
	if err != nil || c.Realtime["a"] != "/f.pb" || !cmp.Equal(c.RealtimeAlerts, map[string]string{"a": "https://rt.example.org/alerts.pb", "b": "/al.pb"}) || c.RealtimeInterval != 45*time.Second || c.GTFSRefresh != 3*time.Second || c.RealtimeMaxAge != 2*time.Minute {
		t.Errorf("Load: %+v %v", c, err)
	}
	if _, err := Load([]string{"--realtime-alerts", "a=1;a=2"}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "--realtime-alerts") {
		t.Errorf("duplicate alerts source accepted: %v", err)
	}
	if _, err := Load([]string{"--gtfs-refresh", "10ms"}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "gtfs-refresh") {
		t.Errorf("tiny refresh accepted: %v", err)
	}
}

func TestBoardCacheSetting(t *testing.T) {
	none := func(string) string { return "" }
	if c, err := Load(nil, none, io.Discard); err != nil || c.BoardCacheMB != 32 {
		t.Errorf("default: %d %v", c.BoardCacheMB, err)
	}
	if c, err := Load([]string{"--board-cache-mb", "0"}, none, io.Discard); err != nil || c.BoardCacheMB != 0 {
		t.Errorf("off: %d %v", c.BoardCacheMB, err)
	}
	if c, err := Load(nil, func(k string) string { return map[string]string{"FAREBOX_BOARD_CACHE_MB": "128"}[k] }, io.Discard); err != nil || c.BoardCacheMB != 128 {
		t.Errorf("env: %d %v", c.BoardCacheMB, err)
	}
	for _, bad := range []string{"-1", "12MB", "2000000"} {
		if _, err := Load([]string{"--board-cache-mb", bad}, none, io.Discard); err == nil || !strings.Contains(err.Error(), "board-cache-mb") {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
}

func FuzzParseRealtime(f *testing.F) {
	for _, s := range []string{"a=b", "a=b;c=d", "a=", " ; ", "a=b=c", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseRealtime(s)
		if err != nil {
			return
		}
		for id, src := range m {
			if id == "" || strings.ContainsAny(id, "/:;= \t\n") || strings.ContainsAny(src, "; \t\n") {
				t.Fatalf("%q parsed to %q=%q", s, id, src)
			}
		}
	})
}
