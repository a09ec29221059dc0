package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestApplePassChangesInTheSameSecond: two changes of one pass in the same
// second — the month turn moves a subscription's pass to the new cycle at
// 00:00:00.000, the device downloads it at .100, and the operator revokes
// the new cycle's ticket at .600. Last-Modified has whole seconds, so the
// device's If-Modified-Since names the second of the revocation; the pass
// must still come back voided (200), by its ETag and by the date, never
// 304 with the valid-looking copy. Then the validators revalidate: the new
// ETag at once, the date once wallets.LastModifiedMargin has passed. Both
// engines, over HTTP with a job worker and the local APNs.
func TestApplePassChangesInTheSameSecond(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		e, srv := appleEnv(t, engine, apitest.Options{Now: bln(2026, 8, 3, 9), Workers: 1})
		ctx := context.Background()
		cycle := bln(2026, 9, 1, 0)
		cid, subID, first := monthlyCoupon(t, e)
		tid := str(first["id"])
		phone := registerOnPhone(t, e, srv, tid)
		authz, list := phone.auth["Authorization"], phone.list
		if r := reorder(e, e.LiveKey, subID, nil); r.Status != 201 {
			t.Fatalf("reorder: %d %s", r.Status, r.Body)
		}
		e.Clock.Set(bln(2026, 8, 25, 0))
		next := ticket(t, e, mustActivate(t, e, "v9", cid, map[string]any{"reactivation_key": str(first["coupon_reactivation_key"])}))

		passPath := "/wallet/apple/v1/passes/" + testPassType + "/" + tid
		get := func(h map[string]string) *apitest.Resp {
			hh := map[string]string{"Authorization": authz}
			for k, v := range h {
				hh[k] = v
			}
			return e.Do(apitest.Req{Method: "GET", Path: passPath, Header: hh})
		}

		// Change 1 at 00:00:00.000: the pass moves to September.
		e.Clock.Set(cycle)
		e.App.Jobs.Notify()
		waitFor(t, "the push at the cycle's start", func() bool { return pushesTo(srv, pushToken1, 200) == 1 })
		var tag wallets.AppleSerials
		e.Must(200, apitest.Req{Method: "GET", Path: list}).JSON(t, &tag)

		// The device downloads it at .100.
		e.Clock.Set(cycle.Add(100 * time.Millisecond))
		r := get(nil)
		if r.Status != 200 {
			t.Fatalf("download: %d", r.Status)
		}
		v, p := passFiles(t, r.Body)
		if v.Voided || p.field("valid_from") != next["valid_from"] {
			t.Fatalf("at the cycle's start the pass shows %v (voided %v), want September", p.field("valid_from"), v.Voided)
		}
		etag1, lm1 := r.Header.Get("ETag"), r.Header.Get("Last-Modified")
		lmTime, err := http.ParseTime(lm1)
		if etag1 == "" || err != nil || lmTime.After(e.Clock.Now()) {
			t.Fatalf("validators: ETag %q, Last-Modified %q (%v), now %v", etag1, lm1, err, e.Clock.Now())
		}
		if s := get(map[string]string{"If-None-Match": etag1}).Status; s != 304 {
			t.Fatalf("unchanged pass with its ETag: %d, want 304", s)
		}

		// Change 2 at .600, the same second: the September ticket is revoked.
		e.Clock.Set(cycle.Add(600 * time.Millisecond))
		if _, err := e.App.RevokeTicket(ctx, idempotency.Claim{}, str(next["id"]), "chargeback"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the push after the revocation", func() bool { return pushesTo(srv, pushToken1, 200) == 2 })
		var changed wallets.AppleSerials
		e.Must(200, apitest.Req{Method: "GET", Path: list + "?passesUpdatedSince=" + tag.LastUpdated}).JSON(t, &changed)
		if len(changed.SerialNumbers) != 1 || changed.SerialNumbers[0] != tid {
			t.Fatalf("changed serials %+v", changed)
		}
		e.Clock.Set(cycle.Add(900 * time.Millisecond))
		for name, h := range map[string]map[string]string{
			"If-Modified-Since of the download":            {"If-Modified-Since": lm1},
			"ETag of the download":                         {"If-None-Match": etag1},
			"ETag of the download, weak":                   {"If-None-Match": "W/" + etag1},
			"ETag of the download with a date":             {"If-None-Match": etag1 + `, "other"`, "If-Modified-Since": lm1},
			"a date in the future (ignored)":               {"If-Modified-Since": cycle.Add(time.Hour).Format(http.TimeFormat)},
			"an unreadable date (ignored)":                 {"If-Modified-Since": "yesterday"},
			"another ETag, a date after the change (used)": {"If-None-Match": `"1-abc"`, "If-Modified-Since": cycle.Add(10 * time.Second).Format(http.TimeFormat)},
		} {
			r := get(h)
			if r.Status != 200 {
				t.Errorf("%s: %d, want 200 with the voided pass", name, r.Status)
				continue
			}
			if v, _ := passFiles(t, r.Body); !v.Voided {
				t.Errorf("%s: the pass is not voided", name)
			}
		}
		r = get(map[string]string{"If-Modified-Since": lm1})
		etag2, lm2 := r.Header.Get("ETag"), r.Header.Get("Last-Modified")
		if etag2 == etag1 {
			t.Errorf("the ETag did not change with the revocation: %s", etag2)
		}
		if s := get(map[string]string{"If-None-Match": etag2}).Status; s != 304 {
			t.Errorf("the new ETag: %d, want 304", s)
		}
		if s := get(map[string]string{"If-None-Match": "*"}).Status; s != 304 {
			t.Errorf("If-None-Match *: %d, want 304", s)
		}
		if s := get(map[string]string{"If-None-Match": etag1, "If-Modified-Since": lm2}).Status; s != 200 {
			t.Errorf("an old ETag takes precedence over a date: %d, want 200", s)
		}
		// Within the margin the date cannot tell the copy from a change
		// in the same second: 200. After it, the stable date is 304.
		if s := get(map[string]string{"If-Modified-Since": lm2}).Status; s != 200 {
			t.Errorf("a date within the margin: %d, want 200", s)
		}
		e.Clock.Set(cycle.Add(wallets.LastModifiedMargin + time.Second))
		r = get(nil)
		lm3 := r.Header.Get("Last-Modified")
		if r.Header.Get("ETag") != etag2 || lm3 == lm2 {
			t.Errorf("after the margin: ETag %s (want %s), Last-Modified %s (was %s)", r.Header.Get("ETag"), etag2, lm3, lm2)
		}
		if s := get(map[string]string{"If-Modified-Since": lm3}).Status; s != 304 {
			t.Errorf("the stable date: %d, want 304", s)
		}
		if s := get(map[string]string{"If-Modified-Since": lm1}).Status; s != 200 {
			t.Errorf("the first download's date after the margin: %d, want 200", s)
		}
	})
}

// TestApplePassesUpdatedSinceUnknownTag: a passesUpdatedSince tag this
// service never returned is a 400 naming the parameter (a tag from the
// future would hide every update up to it), and nothing else changes; the
// tags it did return answer 200 or 204. Both engines.
func TestApplePassesUpdatedSinceUnknownTag(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		e, srv := appleEnv(t, engine, apitest.Options{Workers: 1})
		list := "/wallet/apple/v1/devices/phone/registrations/" + testPassType
		// Before any pass was updated the only tag is 0 (what a device
		// without passes is told).
		e.Must(204, apitest.Req{Method: "GET", Path: list + "?passesUpdatedSince=0"})
		e.Must(400, apitest.Req{Method: "GET", Path: list + "?passesUpdatedSince=1"})

		_, tid, _ := activatedTicket(t, e, e.LiveKey)
		registerOnPhone(t, e, srv, tid)
		if _, err := e.App.RevokeTicket(context.Background(), idempotency.Claim{}, tid, "chargeback"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the push", func() bool { return pushesTo(srv, pushToken1, 200) == 1 })
		var s wallets.AppleSerials
		e.Must(200, apitest.Req{Method: "GET", Path: list}).JSON(t, &s)
		last, err := strconv.ParseInt(s.LastUpdated, 10, 64)
		if err != nil || last < 1 {
			t.Fatalf("lastUpdated %q", s.LastUpdated)
		}
		e.Must(204, apitest.Req{Method: "GET", Path: list + "?passesUpdatedSince=" + s.LastUpdated})
		e.Must(200, apitest.Req{Method: "GET", Path: list + "?passesUpdatedSince=0"})
		for _, bad := range []string{strconv.FormatInt(last+1, 10), "9223372036854775807", "99999999999999999999",
			"0" + s.LastUpdated, "+" + s.LastUpdated, " " + s.LastUpdated, "1e3", "-0", "٣"} {
			wantInvalidParameter(t, e, "", list+"?passesUpdatedSince="+url.QueryEscape(bad), "passesUpdatedSince")
		}
		// The refusals changed nothing: the device's tag still answers.
		e.Must(204, apitest.Req{Method: "GET", Path: list + "?passesUpdatedSince=" + s.LastUpdated})
	})
}
