package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
)

// newClock creates a test clock at frozen and returns its id.
func newClock(t *testing.T, e *apitest.Env, key, frozen string) string {
	t.Helper()
	r := e.Must(201, apitest.Req{Method: "POST", Path: "/v1/test_clocks.json", Key: key, Body: map[string]any{"frozen_time": frozen, "name": "t"}})
	c := r.Map(t)
	if c["frozen_time"] != frozen || c["status"] != "ready" || c["environment"] != "test" || c["object"] != "test_clock" {
		t.Fatalf("new clock: %s", r.Body)
	}
	return str(c["id"])
}

// eventsOf are the caller's events of type typ, newest first.
func eventsOf(t *testing.T, e *apitest.Env, key, typ string) []map[string]any {
	t.Helper()
	var l struct {
		Data []map[string]any `json:"data"`
	}
	e.Must(200, apitest.Req{Method: "GET", Path: "/v1/events.json?limit=100&type=" + typ, Key: key}).JSON(t, &l)
	return l.Data
}

// wantError checks a refusal: status, code and the field it names ("" for none).
func wantError(t *testing.T, r *apitest.Resp, status int, code, field string) {
	t.Helper()
	m := r.Map(t)
	if r.Status != status || m["code"] != code || (field != "" && !strings.Contains(string(r.Body), `"field":"`+field+`"`)) {
		t.Fatalf("want %d %s naming %q, got %d %s", status, code, field, r.Status, r.Body)
	}
}

func TestTestClockDrivesASubscription(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		month, single := productIDs(t, e)["month/adult"], productIDs(t, e)["single/adult"]
		// The service stands at 2026-06-15T10:00Z; the clock at 9 September
		// 12:00 Berlin, the day before the cancellation deadline.
		clk := newClock(t, e, e.TestKey, "2026-09-09T10:00:00Z")
		r := e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.TestKey,
			Body: map[string]any{"product_ids": []string{month, single}, "test_clock": clk}})
		var o orderResp
		r.JSON(t, &o)
		if r.Map(t)["test_clock"] != clk {
			t.Fatalf("order on the clock: %s", r.Body)
		}
		c := o.Coupons[0]
		if w := o.Coupons[1]; w["earliest_activation_start_datetime"] != "2026-09-09T10:00:00Z" || w["activatable_until"] != "2026-09-12T10:00:00Z" {
			t.Errorf("activation window %v – %v, want from the clock's time", w["earliest_activation_start_datetime"], w["activatable_until"])
		}
		// A live order at the same moment stays on the service's time.
		live := order(t, e, e.LiveKey, single)
		if live.Coupons[0]["earliest_activation_start_datetime"] != "2026-06-15T10:00:00Z" || strings.Contains(fmt.Sprint(live), "test_clock") {
			t.Errorf("live order: %v", live.Coupons[0]["earliest_activation_start_datetime"])
		}
		// Activation fixes September, the clock's month.
		tid := mustActivate(t, e, "v9", str(c["id"]), map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01"),
			"tariff_settings": map[string]any{"german_postal_code": "10115"}})
		if tk := ticket(t, e, tid); tk["valid_from"] != "2026-08-31T22:00:00Z" || tk["valid_until"] != "2026-09-30T21:59:59Z" {
			t.Fatalf("ticket on the clock: %v – %v", tk["valid_from"], tk["valid_until"])
		}
		sub := coupon(t, e, "v9", str(c["id"]))["subscription"].(map[string]any)
		subID := str(sub["id"])
		if sub["active"] != true {
			t.Errorf("subscription at the clock's time: %v", sub)
		}
		// Cancelled on the 9th (clock): it ends with September.
		s := e.Must(200, apitest.Req{Method: "DELETE", Path: "/v9/ticketing/subscriptions/" + subID + ".json", Key: e.TestKey}).Map(t)
		if s["ends_at"] != "2026-09-30T21:59:59Z" || s["cancelled_at"] != "2026-09-09T10:00:00Z" {
			t.Fatalf("cancel on the clock: ends %v cancelled %v", s["ends_at"], s["cancelled_at"])
		}
		for _, typ := range []string{"order.created", "coupon.activated", "ticket.issued", "subscription.cancelled"} {
			if evs := eventsOf(t, e, e.TestKey, typ); len(evs) != 1 || evs[0]["created"] != "2026-09-09T10:00:00Z" {
				t.Errorf("%s: %v", typ, evs)
			}
		}

		// The service's maintenance never ends a clock's subscription, even
		// when the service's time passes its end.
		e.Clock.Set(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
		if ended, _, err := e.Events.Maintain(ctx); err != nil || ended != 0 {
			t.Fatalf("service maintenance ended %d clock subscriptions (%v)", ended, err)
		}
		e.Clock.Set(apitest.DefaultNow)

		// Backwards, to the same time, malformed, missing: 400 naming
		// frozen_time, nothing written.
		path := "/v1/test_clocks/" + clk
		jobsBefore, _ := e.Store.Read().CountRows(ctx, "jobs")
		for _, body := range []any{map[string]any{"frozen_time": "2026-09-09T09:59:59Z"}, map[string]any{"frozen_time": "2026-09-09T10:00:00Z"},
			map[string]any{"frozen_time": "9 September"}, map[string]any{}, map[string]any{"frozen_time": "2100-01-01T00:00:00Z"}} {
			wantError(t, e.Do(apitest.Req{Method: "POST", Path: path + "/advance.json", Key: e.TestKey, Body: body}), 422, "invalid_frozen_time", "/frozen_time")
		}
		if got := e.Must(200, apitest.Req{Method: "GET", Path: path + ".json", Key: e.TestKey}).Map(t); got["frozen_time"] != "2026-09-09T10:00:00Z" || got["status"] != "ready" {
			t.Fatalf("refused advances moved the clock: %v", got)
		}
		if n, _ := e.Store.Read().CountRows(ctx, "jobs"); n != jobsBefore {
			t.Errorf("refused advances enqueued %d jobs", n-jobsBefore)
		}

		// Advancing past the end: advancing until the job ran, then ready,
		// and subscription.ended at the clock's new time.
		adv := e.Must(200, apitest.Req{Method: "POST", Path: path + "/advance.json", Key: e.TestKey, Body: map[string]any{"frozen_time": "2026-10-01T00:00:00Z"}}).Map(t)
		if adv["status"] != "advancing" || adv["frozen_time"] != "2026-10-01T00:00:00Z" {
			t.Fatalf("advance: %v", adv)
		}
		wantError(t, e.Do(apitest.Req{Method: "POST", Path: path + "/advance.json", Key: e.TestKey, Body: map[string]any{"frozen_time": "2026-10-02T00:00:00Z"}}),
			409, "test_clock_advancing", "")
		if n, err := e.App.Jobs.RunOnce(ctx); err != nil || n != 1 {
			t.Fatalf("jobs run: %d %v", n, err)
		}
		if got := e.Must(200, apitest.Req{Method: "GET", Path: path + ".json", Key: e.TestKey}).Map(t); got["status"] != "ready" {
			t.Fatalf("after the job: %v", got)
		}
		if evs := eventsOf(t, e, e.TestKey, "subscription.ended"); len(evs) != 1 || evs[0]["created"] != "2026-10-01T00:00:00Z" {
			t.Fatalf("subscription.ended: %v", evs)
		}
		if evs := eventsOf(t, e, e.LiveKey, "subscription.ended"); len(evs) != 0 {
			t.Fatalf("live subscription.ended: %v", evs)
		}
		// After the end, at the clock's time: no reorder.
		if r := reorder(e, e.TestKey, subID, nil); r.Status != 422 {
			t.Errorf("reorder after the end on the clock: %d %s", r.Status, r.Body)
		}
		// A second advance ends nothing twice.
		e.Must(200, apitest.Req{Method: "POST", Path: path + "/advance.json", Key: e.TestKey, Body: map[string]any{"frozen_time": "2027-01-01T00:00:00Z"}})
		if _, err := e.App.Jobs.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if evs := eventsOf(t, e, e.TestKey, "subscription.ended"); len(evs) != 1 {
			t.Fatalf("subscription.ended twice: %v", evs)
		}

		// Deleted: gone for reads, advances and new orders; its objects stay
		// at its last time.
		if d := e.Must(200, apitest.Req{Method: "DELETE", Path: path + ".json", Key: e.TestKey}).Map(t); d["deleted"] != true {
			t.Fatalf("delete: %v", d)
		}
		wantError(t, e.Do(apitest.Req{Method: "GET", Path: path + ".json", Key: e.TestKey}), 404, "test_clock_not_found", "")
		wantError(t, e.Do(apitest.Req{Method: "POST", Path: path + "/advance.json", Key: e.TestKey, Body: map[string]any{"frozen_time": "2028-01-01T00:00:00Z"}}), 404, "test_clock_not_found", "")
		wantError(t, e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.TestKey,
			Body: map[string]any{"product_ids": []string{month}, "test_clock": clk}}), 422, "invalid_test_clock", "/test_clock")
		if sub := coupon(t, e, "v9", str(c["id"]))["subscription"].(map[string]any); sub["active"] != false {
			t.Errorf("subscription of a deleted clock after its end: %v", sub)
		}
	})
}

func TestTestClockRefusals(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		month := productIDs(t, e)["month/adult"]
		clk := newClock(t, e, e.TestKey, "2026-07-01T00:00:00Z")
		before := counts(t, e)
		clocks, _ := e.Store.Read().CountRows(ctx, "test_clocks")
		// Live keys never create, see, advance, delete or order on a clock.
		for _, req := range []apitest.Req{
			{Method: "POST", Path: "/v1/test_clocks.json", Body: map[string]any{"frozen_time": "2026-07-01T00:00:00Z"}},
			{Method: "GET", Path: "/v1/test_clocks.json"},
			{Method: "GET", Path: "/v1/test_clocks/" + clk + ".json"},
			{Method: "POST", Path: "/v1/test_clocks/" + clk + "/advance.json", Body: map[string]any{"frozen_time": "2026-08-01T00:00:00Z"}},
			{Method: "DELETE", Path: "/v1/test_clocks/" + clk + ".json"},
		} {
			req.Key = e.LiveKey
			wantError(t, e.Do(req), 403, "test_clock_live_mode", "")
		}
		wantError(t, e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey,
			Body: map[string]any{"product_ids": []string{month}, "test_clock": clk}}), 422, "invalid_test_clock", "/test_clock")
		// Another account's clock is no clock, on every clock route.
		_, otherKey := e.NewAccount("Other GmbH", account.Test)
		wantError(t, e.Do(apitest.Req{Method: "GET", Path: "/v1/test_clocks/" + clk + ".json", Key: otherKey}), 404, "test_clock_not_found", "")
		wantError(t, e.Do(apitest.Req{Method: "POST", Path: "/v1/test_clocks/" + clk + "/advance.json", Key: otherKey,
			Body: map[string]any{"frozen_time": "2026-08-01T00:00:00Z"}}), 404, "test_clock_not_found", "")
		wantError(t, e.Do(apitest.Req{Method: "DELETE", Path: "/v1/test_clocks/" + clk + ".json", Key: otherKey}), 404, "test_clock_not_found", "")
		if l := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/test_clocks.json", Key: otherKey}).Map(t); len(l["data"].([]any)) != 0 {
			t.Errorf("another account lists %v", l)
		}
		if got := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/test_clocks/" + clk + ".json", Key: e.TestKey}).Map(t); got["frozen_time"] != "2026-07-01T00:00:00Z" || got["status"] != "ready" {
			t.Errorf("refused calls changed the clock: %v", got)
		}
		wantError(t, e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: otherKey,
			Body: map[string]any{"product_ids": []string{month}, "test_clock": clk}}), 422, "invalid_test_clock", "/test_clock")
		wantError(t, e.Do(apitest.Req{Method: "GET", Path: "/v1/test_clocks.json?starting_after=" + clk, Key: otherKey}), 400, "invalid_parameter", "starting_after")
		// Bad creations: 400 naming the field.
		for _, c := range []struct {
			body  map[string]any
			code  string
			field string
		}{
			{map[string]any{}, "invalid_frozen_time", "/frozen_time"},
			{map[string]any{"frozen_time": "2026-06-14T09:59:59Z"}, "invalid_frozen_time", "/frozen_time"}, // over a day before the service's time
			{map[string]any{"frozen_time": "2100-01-01T00:00:00Z"}, "invalid_frozen_time", "/frozen_time"},
			{map[string]any{"frozen_time": "yesterday"}, "invalid_frozen_time", "/frozen_time"},
			{map[string]any{"frozen_time": "2026-07-01T00:00:00Z", "name": strings.Repeat("ü", 256)}, "invalid_test_clock_name", "/name"},
		} {
			wantError(t, e.Do(apitest.Req{Method: "POST", Path: "/v1/test_clocks.json", Key: e.TestKey, Body: c.body}), 422, c.code, c.field)
		}
		if n, _ := e.Store.Read().CountRows(ctx, "test_clocks"); n != clocks {
			t.Errorf("refusals wrote %d clocks", n-clocks)
		}
		if after := counts(t, e); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("refusals wrote rows: %v → %v", before, after)
		}
		// The largest name and the latest time are taken.
		e.Must(201, apitest.Req{Method: "POST", Path: "/v1/test_clocks.json", Key: e.TestKey,
			Body: map[string]any{"frozen_time": "2099-12-31T23:59:59Z", "name": strings.Repeat("ü", 255)}})
	})
}

func TestTestClockList(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		var ids []string
		for i := 0; i < 5; i++ {
			ids = append(ids, newClock(t, e, e.TestKey, "2026-07-01T00:00:00Z"))
			e.Clock.Advance(time.Second)
		}
		e.Must(200, apitest.Req{Method: "DELETE", Path: "/v1/test_clocks/" + ids[2] + ".json", Key: e.TestKey})
		var seen []string
		after := ""
		for page := 0; page < 5; page++ {
			path := "/v1/test_clocks.json?limit=2"
			if after != "" {
				path += "&starting_after=" + after
			}
			var l struct {
				Data    []map[string]any `json:"data"`
				HasMore bool             `json:"has_more"`
			}
			e.Must(200, apitest.Req{Method: "GET", Path: path, Key: e.TestKey}).JSON(t, &l)
			for _, c := range l.Data {
				seen = append(seen, str(c["id"]))
			}
			if !l.HasMore {
				break
			}
			after = seen[len(seen)-1]
		}
		want := []string{ids[4], ids[3], ids[1], ids[0]}
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Fatalf("pages: %v, want %v", seen, want)
		}
		wantError(t, e.Do(apitest.Req{Method: "GET", Path: "/v1/test_clocks.json?limit=0", Key: e.TestKey}), 400, "invalid_parameter", "limit")
		wantError(t, e.Do(apitest.Req{Method: "GET", Path: "/v1/test_clocks.json?status=ready", Key: e.TestKey}), 400, "invalid_parameter", "status")
	})
}

// TestConcurrentAdvancesOneWins: advances of one clock sent at once
// serialise on its row: one moves it, the others find it advancing (409)
// and write nothing; one job is enqueued.
func TestConcurrentAdvancesOneWins(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		clk := newClock(t, e, e.TestKey, "2026-07-01T00:00:00Z")
		jobs, _ := e.Store.Read().CountRows(ctx, "jobs")
		const n = 8
		status := make(chan int, n)
		for i := range n {
			go func() {
				r := e.Do(apitest.Req{Method: "POST", Path: "/v1/test_clocks/" + clk + "/advance.json", Key: e.TestKey,
					Body: map[string]any{"frozen_time": fmt.Sprintf("2026-08-%02dT00:00:00Z", i+1)}})
				status <- r.Status
			}()
		}
		got := map[int]int{}
		for range n {
			got[<-status]++
		}
		if got[200] != 1 || got[409] != n-1 {
			t.Fatalf("statuses %v, want one 200 and %d 409", got, n-1)
		}
		if after, _ := e.Store.Read().CountRows(ctx, "jobs"); after != jobs+1 {
			t.Errorf("%d jobs enqueued, want 1", after-jobs)
		}
	})
}
