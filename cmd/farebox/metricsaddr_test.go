package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestMetricsListener: with --metrics-addr, /metrics is served there and
// the public API listener answers 404 for it.
func TestMetricsListener(t *testing.T) {
	t.Parallel()
	in := startServe(t, sqliteEnv(t, map[string]string{"FAREBOX_METRICS_ADDR": "127.0.0.1:0", "FAREBOX_LOG_FORMAT": "json"}))
	var metricsAddr string
	for _, line := range strings.Split(in.logs.String(), "\n") {
		var l struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "metrics listening" {
			metricsAddr = l.Addr
		}
	}
	if metricsAddr == "" {
		t.Fatalf("no \"metrics listening\" log line:\n%s", in.logs.String())
	}
	get := func(url string) (int, string) {
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if st, body := get(in.url() + "/metrics"); st != 404 || !strings.Contains(body, `"code":"not_found"`) {
		t.Errorf("/metrics on the API listener: %d %.200s", st, body)
	}
	if st, _ := get(in.url() + "/healthz"); st != 200 {
		t.Errorf("/healthz: %d", st)
	}
	st, body := get("http://" + metricsAddr + "/metrics")
	if st != 200 || !strings.Contains(body, `farebox_http_requests_total{route="GET /healthz",status="200"} 1`) ||
		!strings.Contains(body, `farebox_http_requests_total{route="GET /metrics",status="404"} 1`) {
		t.Errorf("/metrics on --metrics-addr: %d\n%.2000s", st, body)
	}
	if st, _ := get("http://" + metricsAddr + "/v1/account.json"); st != 404 {
		t.Errorf("the metrics listener serves the API: %d", st)
	}
}
