package apitest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// RecordEnv names the directory where Env.Do records every exchange that
// matched api/openapi.yaml, one JSON line each (Exchange), in a file per
// test process: the material of `go run ./tools/openapiexamples`, which
// fills missing examples and error codes from real answers (docs/openapi.md).
//
//	FAREBOX_OPENAPI_RECORD=/tmp/rec go test -count=1 ./internal/httpapi
const RecordEnv = "FAREBOX_OPENAPI_RECORD"

// Exchange is one recorded request and answer; Path is the OpenAPI path
// template the request matched.
type Exchange struct {
	Method   string `json:"method"`
	Path     string `json:"path"`
	Status   int    `json:"status"`
	Request  string `json:"request,omitempty"`
	Response string `json:"response"`
}

var recorder struct {
	sync.Mutex
	f *os.File
}

// record appends the exchange to the process's file under RecordEnv; a
// recording that cannot be written is reported on stderr once per call
// (recording is a tool's input, never a test's outcome).
func record(hr *http.Request, sent []byte, r *Resp) {
	dir := os.Getenv(RecordEnv)
	if dir == "" {
		return
	}
	_, router, err := Spec()
	if err != nil {
		return
	}
	rt, _, err := router.FindRoute(hr)
	if err != nil {
		return
	}
	line, err := json.Marshal(Exchange{Method: hr.Method, Path: rt.Path, Status: r.Status, Request: string(sent), Response: string(r.Body)})
	if err != nil {
		return
	}
	recorder.Lock()
	defer recorder.Unlock()
	if recorder.f == nil {
		if recorder.f, err = os.Create(filepath.Join(dir, fmt.Sprintf("exchanges-%d.jsonl", os.Getpid()))); err != nil {
			fmt.Fprintf(os.Stderr, "apitest: %s: %v\n", RecordEnv, err)
			return
		}
	}
	if _, err := recorder.f.Write(append(line, '\n')); err != nil {
		fmt.Fprintf(os.Stderr, "apitest: %s: %v\n", RecordEnv, err)
	}
}

// ReadExchanges reads every *.jsonl file of dir written by a recording run.
func ReadExchanges(dir string) ([]Exchange, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []Exchange
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for n := 1; sc.Scan(); n++ {
			var x Exchange
			if err := json.NewDecoder(strings.NewReader(sc.Text())).Decode(&x); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			out = append(out, x)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return out, nil
}
