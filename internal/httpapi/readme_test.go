package httpapi_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
)

// TestREADMEDepartureExample runs the departure board request of the
// README's "Departures" section as written, on a server whose clock is
// today's (2026, after the sample feed ended) with the Caltrain feed the
// README imports: the example must name its `time` and answer departures,
// not the `[]` a board for now would be (issue 18).
func TestREADMEDepartureExample(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"http://127\.0\.0\.1:8080(/v1/departures\.json\?[^"]+)"`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no departure board example (\"http://127.0.0.1:8080/v1/departures.json?…\")")
	}
	path := string(m[1])
	if !strings.Contains(path, "time=") {
		t.Errorf("README departure example %s has no time: for the sample feed (2023–24) a board for now is empty", path)
	}
	o := transitOptions(t, apitest.DefaultNow, feedSpec{"caltrain", "caltrain-2023.zip", ""})
	e := apitest.New(t, store.SQLite, o)
	var board []struct {
		Trip struct {
			ID string `json:"id"`
		} `json:"trip"`
	}
	e.Must(200, apitest.Req{Method: "GET", Path: path, Key: e.LiveKey}).JSON(t, &board)
	if len(board) == 0 {
		t.Fatalf("README departure example %s answers no departure for the sample feed", path)
	}
	for _, d := range board {
		if !strings.HasPrefix(d.Trip.ID, "farebox-trip-caltrain_") {
			t.Errorf("departure of trip %q, want a Caltrain trip", d.Trip.ID)
		}
	}
}
