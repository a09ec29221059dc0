package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/wallet/apple/apnstest"
)

// TestTestClockMovesWalletPasses: a monthly subscription on a test clock,
// its February pass registered by a device, March reactivated ahead. The
// service's time never moves (20 February); advancing the clock runs the
// pass work of real time for the clock's tickets: to a second before
// March nothing is pushed and the pass shows February; to 00:00 Berlin on
// 1 March the device is pushed, the pass is among the changed serials and
// shows March (validity and barcode) under the same serial number, also
// when downloaded again. A revocation on the clock is pushed at once
// although the clock stands days after the service. Both engines, over
// HTTP with a job worker and the local APNs.
func TestTestClockMovesWalletPasses(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		srv := apnstest.New(t, testPassType)
		service := time.Date(2026, 2, 20, 9, 0, 0, 0, time.UTC)
		e := apitest.New(t, engine, apitest.Options{Now: service, Configure: withAppleUpdates(t, srv), Workers: 1})
		ctx := context.Background()
		clk := newClock(t, e, e.TestKey, "2026-02-25T09:00:00Z")
		advance := func(to string) {
			t.Helper()
			e.Must(200, apitest.Req{Method: "POST", Path: "/v1/test_clocks/" + clk + "/advance.json", Key: e.TestKey,
				Body: map[string]any{"frozen_time": to}})
			waitFor(t, "the advance to "+to, func() bool {
				c := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/test_clocks/" + clk + ".json", Key: e.TestKey}).Map(t)
				return c["status"] == "ready"
			})
			// The advance's pass jobs are enqueued with the status; let
			// the worker finish them.
			waitFor(t, "the pass jobs of the advance", func() bool {
				js, err := e.Store.Read().Jobs(ctx, passes.JobApplePassUpdate)
				if err != nil {
					t.Fatal(err)
				}
				for _, j := range js {
					if j.State != jobs.StateDone && j.State != jobs.StateDead {
						return false
					}
				}
				return true
			})
		}

		var o orderResp
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.TestKey,
			Body: map[string]any{"product_ids": []string{productIDs(t, e)["month/adult"]}, "test_clock": clk}}).JSON(t, &o)
		cid := str(o.Coupons[0]["id"])
		feb := ticket(t, e, mustActivate(t, e, "v9", cid, map[string]any{"identification_medium": medium("Zoë", "Ağaoğlu", "1990-01-01"),
			"tariff_settings": map[string]any{"german_postal_code": "10115"}}))
		if feb["valid_from"] != "2026-01-31T23:00:00Z" || feb["valid_until"] != "2026-02-28T22:59:59Z" {
			t.Fatalf("February on the clock: %v – %v", feb["valid_from"], feb["valid_until"])
		}
		tid := str(feb["id"])
		phone := registerOnPhone(t, e, srv, tid)
		var tag wallets.AppleSerials
		e.Must(200, apitest.Req{Method: "GET", Path: phone.list}).JSON(t, &tag)

		subID := str(coupon(t, e, "v9", cid)["subscription"].(map[string]any)["id"])
		if r := reorder(e, e.TestKey, subID, nil); r.Status != 201 {
			t.Fatalf("reorder: %d %s", r.Status, r.Body)
		}
		march := ticket(t, e, mustActivate(t, e, "v9", cid, map[string]any{"reactivation_key": str(feb["coupon_reactivation_key"])}))
		if march["valid_from"] != "2026-02-28T23:00:00Z" {
			t.Fatalf("March: %v", march["valid_from"])
		}

		// A second before March (clock): February, nothing pushed.
		advance("2026-02-28T22:59:59Z")
		phone.unmoved(tag, feb, "a second before March")

		// 00:00 on 1 March (clock), the service still on 20 February.
		advance("2026-02-28T23:00:00Z")
		phone.moved(tag, march, "at 1 March (clock)")
		if _, ap := passFiles(t, e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/apple_wallet/" + tid + ".pkpass"}).Body); ap.field("valid_from") != march["valid_from"] {
			t.Errorf("downloaded again, the pass shows %v, want March", ap.field("valid_from"))
		}
		// A further advance within March pushes nothing again.
		advance("2026-03-10T12:00:00Z")
		if n := pushesTo(srv, pushToken1, 200); n != 1 {
			t.Errorf("%d pushes after an advance within March, want 1", n)
		}
		if !e.Clock.Now().Equal(service) {
			t.Fatalf("the service's time moved: %v", e.Clock.Now())
		}

		// A restore on the clock (10 March, the service on 20 February):
		// its update is due at once on the service's time.
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders/" + o.OrderID + "/restore.json", Key: e.TestKey,
			Body: map[string]any{"restore_secret": o.RestoreSecret, "coupon_ids": []string{cid}}})
		waitFor(t, "the push after the restore on the clock", func() bool { return pushesTo(srv, pushToken1, 200) == 2 })
		v, _ := passFiles(t, e.Must(200, apitest.Req{Method: "GET", Path: "/wallet/apple/v1/passes/" + testPassType + "/" + tid, Header: phone.auth}).Body)
		if !v.Voided {
			t.Errorf("after the restore on the clock the pass is not voided")
		}
		if r := srv.Refused(); len(r) != 0 {
			t.Errorf("APNs refused: %v", r)
		}
	})
}
