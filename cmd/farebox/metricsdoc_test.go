package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// series is what /metrics exposes: metric name → label → values seen.
type series map[string]map[string]map[string]bool

var (
	sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? `)
	labelPair  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
	// A metric name as the docs write it (a trailing "_" or "*" is a
	// wildcard such as go_sql_*, not a name).
	docMetric = regexp.MustCompile(`\b((?:farebox|go|process)_[a-z0-9_]*[a-z0-9])(_?\*)?(?:\{([^}]*)\})?`)
	matcher   = regexp.MustCompile(`([a-z_]+)\s*(=~|!=|!~|=)\s*"([^"]*)"`)
	backtick  = regexp.MustCompile("`([^`]+)`")
)

// openLabels take values that no list can hold (routes, statuses, buckets).
var openLabels = map[string]bool{"route": true, "status": true, "le": true, "quantile": true}

func scrape(t *testing.T, url string) series {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	out := series{}
	for _, line := range strings.Split(string(b), "\n") {
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		names := []string{m[1]}
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if base, ok := strings.CutSuffix(m[1], suffix); ok {
				names = append(names, base) // a histogram's own name
			}
		}
		for _, name := range names {
			labels := out[name]
			if labels == nil {
				labels = map[string]map[string]bool{}
				out[name] = labels
			}
			for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
				if labels[p[1]] == nil {
					labels[p[1]] = map[string]bool{}
				}
				labels[p[1]][p[2]] = true
			}
		}
	}
	return out
}

// TestDocumentedMetricsExist: every metric name, label and label value
// that the docs (README.md, docs/*.md: tables, dashboard queries, alerts)
// use is one /metrics of a freshly started instance exposes. A query or
// alert on a name or value the service never emits stays silent forever
// (the ledger alert used reason="failed" while the metric says
// server_error).
func TestDocumentedMetricsExist(t *testing.T) {
	t.Parallel()
	in := startServe(t, sqliteEnv(t, nil))
	// One request, so the per-route series have a child to show.
	if res, err := http.Get(in.url() + "/healthz"); err == nil {
		res.Body.Close()
	}
	have := scrape(t, in.url()+"/metrics")
	docs, _ := filepath.Glob("../../docs/*.md")
	docs = append(docs, "../../README.md")
	checked := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			where := filepath.Base(doc) + ":" + strconv.Itoa(n+1)
			var names []string
			for _, m := range docMetric.FindAllStringSubmatch(line, -1) {
				if m[2] != "" {
					continue
				}
				name := m[1]
				if have[name] == nil {
					t.Errorf("%s: metric %s is not exposed", where, name)
					continue
				}
				names = append(names, name)
				checked++
				if m[3] != "" && !strings.Contains(m[3], `"`) { // name{label,label}
					for _, l := range strings.Split(m[3], ",") {
						if l = strings.TrimSpace(l); have[name][l] == nil {
							t.Errorf("%s: %s has no label %q", where, name, l)
						}
					}
				}
			}
			if len(names) == 0 {
				continue
			}
			// Matchers anywhere on the line (query and alert columns)
			// refer to the line's metrics.
			for _, m := range matcher.FindAllStringSubmatch(line, -1) {
				label, op, value := m[1], m[2], m[3]
				found, valueOK := false, false
				for _, name := range names {
					if vals := have[name][label]; vals != nil {
						found = true
						valueOK = valueOK || vals[value]
					}
				}
				switch {
				case !found:
					t.Errorf("%s: no metric of %v has label %q", where, names, label)
				case op == "=" && !openLabels[label] && !valueOK:
					t.Errorf("%s: %s=%q is never emitted by %v", where, label, value, names)
				}
			}
			// A table row naming metrics in its first cell lists their
			// labels and label values in backticks in the other cells.
			cells := strings.Split(line, "|")
			if !strings.HasPrefix(line, "|") || len(cells) < 4 || !docMetric.MatchString(cells[1]) {
				continue
			}
			var own []string
			for _, m := range docMetric.FindAllStringSubmatch(cells[1], -1) {
				if m[2] == "" && have[m[1]] != nil {
					own = append(own, m[1])
				}
			}
			for _, cell := range cells[2:] {
				for _, bt := range backtick.FindAllStringSubmatch(cell, -1) {
					tok := bt[1]
					if docMetric.MatchString(tok) {
						continue
					}
					known := false
					for _, name := range own {
						for label, vals := range have[name] {
							known = known || label == tok || vals[tok]
						}
					}
					if len(own) > 0 && !known {
						t.Errorf("%s: `%s` is neither a label nor a label value of %v", where, tok, own)
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d metric mentions found in the docs; is the parser broken?", checked)
	}
}
