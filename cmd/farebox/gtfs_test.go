package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/shareddata"

	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

var gtfsData = shareddata.Path("gtfs") + "/"

// TestGTFSCommands imports a feed with the CLI (problems by file and line,
// a summary), lists it, serves it (the server loads it in the background
// and /readyz turns ready), and removes it, on both engines.
func TestGTFSCommands(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		opts := storetest.Options(t, engine)
		env := map[string]string{"FAREBOX_DATA_DIR": opts.DataDir, "FAREBOX_ADDR": "127.0.0.1:0", "FAREBOX_GTFS_REFRESH": "1s"}
		if engine == store.Postgres {
			env["FAREBOX_DATABASE_URL"] = opts.URL + "&search_path=" + opts.Schema
			env["FAREBOX_DATA_DIR"] = t.TempDir() // wallet development credentials
		}
		var out, errb bytes.Buffer
		err := run(context.Background(), []string{"gtfs", "import", "--create", "--feed-id", "sample", "--realtime-file", gtfsData + "caltrain-2023-trip-updates.pb",
			"--realtime-interval", "45s", gtfsData + "sample-gtfs-feed-0.13.0.zip"}, envFrom(env), nil, &out, &errb)
		if err != nil {
			t.Fatalf("import: %v\n%s", err, errb.String())
		}
		if !strings.Contains(out.String(), "imported feed sample (version 1) from sample-gtfs-feed-0.13.0.zip: 10 stops, 10 trips, 29 stop_times") ||
			!strings.Contains(out.String(), "caltrain-2023-trip-updates.pb every 45s") {
			t.Errorf("import output: %s", out.String())
		}
		if want := "agency.txt:3: agency_timezone Europe/Berlin differs from Europe/Warsaw; the feed uses Europe/Warsaw\n" +
			"1 problem(s), rows skipped or repaired; by file: agency.txt 1\n"; errb.String() != want {
			t.Errorf("problems:\n%s\nwant:\n%s", errb.String(), want)
		}
		for _, bad := range [][]string{
			{"gtfs", "import", "--feed-id", "a/b", gtfsData + "sample-gtfs-feed-0.13.0.zip"},
			{"gtfs", "import", "--feed-id", "x", gtfsData + "missing.zip"},
			{"gtfs", "import", "--feed-id", "x", "--realtime-url", "ftp://a/b", gtfsData + "sample-gtfs-feed-0.13.0.zip"},
			{"gtfs", "import", "--feed-id", "x", "--realtime-url", "http://a/b", "--realtime-file", "f.pb", gtfsData + "sample-gtfs-feed-0.13.0.zip"},
			{"gtfs", "remove", "nosuchfeed"},
		} {
			if err := run(context.Background(), bad, envFrom(env), nil, io.Discard, io.Discard); err == nil {
				t.Errorf("%v succeeded", bad)
			}
		}
		list := cli(t, env, "gtfs", "list")
		if !strings.Contains(list, "sample") || !strings.Contains(list, "29") || !strings.Contains(list, "every 45s") || strings.Contains(list, "\nx ") {
			t.Errorf("list:\n%s", list)
		}
		var feeds []map[string]any
		if err := json.Unmarshal([]byte(cli(t, env, "gtfs", "list", "--json")), &feeds); err != nil || len(feeds) != 1 || feeds[0]["ID"] != "sample" {
			t.Errorf("list --json: %v %v", feeds, err)
		}
		var created struct {
			APIKey string `json:"api_key"`
		}
		_ = json.Unmarshal([]byte(cli(t, env, "accounts", "create", "--name", "P", "--json")), &created)

		in := startServe(t, env)
		addr, logs := in.addr, in.logs
		get := func(path string) *http.Response {
			res, err := http.Get("http://" + addr + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res
		}
		deadline := time.Now().Add(30 * time.Second)
		for get("/readyz").StatusCode != 200 {
			if time.Now().After(deadline) {
				t.Fatalf("never ready:\n%s", logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		res := get("/v1/departures.json?station_id=farebox-station-sample_airport&time=1553990400000&api_key=" + created.APIKey)
		if res.StatusCode != 200 || res.Header.Get("session-token") == "" {
			t.Errorf("departures: %d, token %q", res.StatusCode, res.Header.Get("session-token"))
		}
		// Removing the feed reaches the running server within its refresh interval.
		if out := cli(t, env, "gtfs", "remove", "sample"); out != "removed feed sample\n" {
			t.Errorf("remove: %q", out)
		}
		for get("/v1/departures.json?station_id=farebox-station-sample_airport&api_key="+created.APIKey).StatusCode != 404 {
			if time.Now().After(deadline) {
				t.Fatal("removed feed still served")
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := in.stop(); err != nil {
			t.Fatalf("serve: %v", err)
		}
		if !strings.Contains(logs.String(), `"msg":"gtfs feed loaded"`) || !strings.Contains(logs.String(), `"msg":"realtime source polled"`) {
			t.Errorf("logs:\n%s", logs.String())
		}
	})
}
