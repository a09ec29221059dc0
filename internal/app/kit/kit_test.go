package kit_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
)

// TestTimestampAndList: timestamps are whole-second UTC, a list never has
// a null data, and every bad paging parameter is a 400 naming it.
func TestTimestampAndList(t *testing.T) {
	at := time.Date(2026, 6, 1, 12, 0, 0, 999_000_000, time.FixedZone("CEST", 2*3600))
	b, err := json.Marshal(struct {
		T *kit.Timestamp `json:"t"`
		Z *kit.Timestamp `json:"z"`
	}{kit.TimestampPtr(&at), kit.TimestampPtr(&time.Time{})})
	if err != nil || string(b) != `{"t":"2026-06-01T10:00:00Z","z":null}` {
		t.Errorf("timestamps = %s, %v", b, err)
	}
	if b, _ := json.Marshal(kit.ListOf[int](nil, false)); string(b) != `{"object":"list","data":[],"has_more":false}` {
		t.Errorf("empty list = %s", b)
	}
	var l kit.ListParams
	if n := l.Limit("100"); n != 100 || l.Err("op") != nil {
		t.Errorf("limit 100 = %d, %v", n, l.Err("op"))
	}
	for _, bad := range []string{"0", "101", "1e2", "+5", "٣"} {
		var l kit.ListParams
		l.Limit(bad)
		e := apperr.As(l.Err("op"))
		if e == nil || e.Kind != apperr.Invalid || e.Code != apperr.CodeInvalidParameter || len(e.Details) != 1 || e.Details[0].Field != "limit" {
			t.Errorf("limit %q: %v", bad, l.Err("op"))
		}
	}
	l = kit.ListParams{}
	if err := l.Cursors(kit.ListRequest{StartingAfter: "a", EndingBefore: "b"}, "order", "", func(string, string) (bool, error) {
		t.Error("cursor resolved although both were sent")
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if e := apperr.As(l.Err("op")); e == nil || e.Details[0].Field != "ending_before" {
		t.Errorf("both cursors: %v", l.Err("op"))
	}
}
