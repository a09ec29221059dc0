package httpapi_test

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/dynamic"
	"github.com/farebox/farebox/internal/barcode/dynamic/dynamictest"
	"github.com/farebox/farebox/internal/blocklist"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
)

// makeDynamic sets inspection_profile dynamic on the single adult tickets.
func makeDynamic(t *testing.T, e *apitest.Env, productID string) {
	t.Helper()
	f := e.Products.Catalog().File()
	for i := range f.Products {
		if f.Products[i].ID == productID {
			f.Products[i].InspectionProfile = catalog.InspectionDynamic
		}
	}
	if err := e.Products.Import(context.Background(), f); err != nil {
		t.Fatal(err)
	}
}

func bind(e *apitest.Env, ticketID, key string) *apitest.Resp {
	return e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/tickets/" + ticketID + "/device.json", Body: map[string]any{"public_key": key}})
}

// TestDeviceBinding drives the binding of a dynamic ticket as the engine
// and the partner would, on both engines: the ticket offers the binding in
// its properties, a bad key is a 400 naming the field with no change, the
// first key binds and gets a payload carrying it (whose window codes pass
// inspection), the same key again changes nothing, another device is
// refused until the partner allows a move (no key: 401; the move is an
// event; a second permission within 24 h is 429, after it allowed), a
// static or revoked ticket binds nothing, and the key of a moved-away
// device no longer matches the ticket.
func TestDeviceBinding(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, false)}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		makeDynamic(t, e, ids["single/adult"])
		o := order(t, e, e.LiveKey, ids["single/adult"], ids["single/adult"], ids["day/adult"])
		m := map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01")}
		tid := mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), m)
		revokedID := mustActivate(t, e, "v9", str(o.Coupons[1]["id"]), m)
		staticID := mustActivate(t, e, "v9", str(o.Coupons[2]["id"]), m)
		kr, err := barcode.ParseKeySet(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body)
		if err != nil {
			t.Fatal(err)
		}

		// The ticket and its product say dynamic; the static one does not.
		tk := ticket(t, e, tid)
		props := tk["ticket"].(map[string]any)["properties"].(map[string]any)
		db, _ := props["device_binding"].(map[string]any)
		if db["path"] != "/v9/ticketing/tickets/"+tid+"/device.json" || db["window_seconds"] != float64(30) || db["bound"] != false {
			t.Errorf("device_binding %v", db)
		}
		if p := tk["product"].(map[string]any); p["inspection_profile"] != "dynamic" {
			t.Errorf("product inspection_profile %v", p["inspection_profile"])
		}
		if c, err := barcode.Verify(ticketPayload(t, tk), kr); err != nil || !c.Dynamic || c.DeviceKey != nil {
			t.Errorf("unbound payload: %v %+v", err, c)
		}
		st := ticket(t, e, staticID)
		if _, ok := st["ticket"].(map[string]any)["properties"].(map[string]any)["device_binding"]; ok || st["product"].(map[string]any)["inspection_profile"] != "static" {
			t.Errorf("static ticket offers a binding")
		}

		// Bad keys: 400 naming the field, nothing bound.
		for _, bad := range []string{"", "not base64!", base64.RawURLEncoding.EncodeToString(make([]byte, 65)), dynamictest.NewDevice(t).Text()[:40]} {
			r := bind(e, tid, bad)
			if r.Status != 400 || r.Map(t)["code"] != "invalid_device_key" || !strings.Contains(string(r.Body), "/public_key") {
				t.Errorf("key %q: %d %s", bad, r.Status, r.Body)
			}
		}
		view := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/tickets/" + tid + "/device_binding.json", Key: e.LiveKey}).Map(t)
		if view["bound"] != false || view["bound_at"] != nil {
			t.Errorf("bound after bad keys: %v", view)
		}

		// The first device binds and its window codes pass inspection.
		a, b := dynamictest.NewDevice(t), dynamictest.NewDevice(t)
		r := bind(e, tid, a.Text())
		if r.Status != 201 || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("bind: %d %s (CORS %q)", r.Status, r.Body, r.Header.Get("Access-Control-Allow-Origin"))
		}
		out := r.Map(t)
		if out["outcome"] != "bound" || out["bound"] != true || out["window_seconds"] != float64(30) || out["moves"] != float64(0) {
			t.Errorf("bind answer %v", out)
		}
		static, err := barcode.FromText(str(out["inspection_barcode"].(map[string]any)["payload"]))
		if err != nil {
			t.Fatal(err)
		}
		now := e.Clock.Now()
		code := a.Code(t, static, now, 30)
		if rep := dynamic.Inspect(code, kr, now, dynamic.Options{}); !rep.Acceptable(false) || rep.Claims.TicketID != tid {
			t.Errorf("bound device's code: %s", rep)
		}
		if rep := dynamic.Inspect(code, kr, now.Add(2*time.Minute), dynamic.Options{}); rep.Acceptable(false) || !strings.HasPrefix(rep.Copied, "copied:") {
			t.Errorf("screenshot accepted: %s", rep)
		}
		// The ticket as the SDK reads it now carries the bound payload.
		tk = ticket(t, e, tid)
		if got := tk["ticket"].(map[string]any)["properties"].(map[string]any)["device_binding"].(map[string]any)["bound"]; got != true {
			t.Errorf("device_binding.bound %v", got)
		}
		if string(ticketPayload(t, tk)) != string(static) {
			t.Error("ticket payload differs from the bind answer")
		}

		// The same device again: unchanged; another: refused.
		if r := bind(e, tid, a.Text()); r.Status != 200 || r.Map(t)["outcome"] != "unchanged" {
			t.Errorf("rebind: %d %s", r.Status, r.Body)
		}
		if r := bind(e, tid, b.Text()); r.Status != 409 || r.Map(t)["code"] != "device_binding_conflict" {
			t.Errorf("second device: %d %s", r.Status, r.Body)
		}

		// The partner allows a move: no key 401, another account's key 404.
		move := "/v9/ticketing/tickets/" + tid + "/device_move.json"
		if r := e.Do(apitest.Req{Method: "POST", Path: move}); r.Status != 401 {
			t.Errorf("move without key: %d", r.Status)
		}
		if r := e.Do(apitest.Req{Method: "POST", Path: move, Key: e.TestKey}); r.Status != 404 {
			t.Errorf("move with the test key: %d %s", r.Status, r.Body)
		}
		allowed := e.Must(200, apitest.Req{Method: "POST", Path: move, Key: e.LiveKey}).Map(t)
		if allowed["move_allowed_at"] == nil {
			t.Errorf("move answer %v", allowed)
		}
		if r := e.Do(apitest.Req{Method: "POST", Path: move, Key: e.LiveKey}); r.Status != 429 || r.Map(t)["code"] != "device_move_too_soon" {
			t.Errorf("second permission: %d %s", r.Status, r.Body)
		}
		moved := bind(e, tid, b.Text())
		if moved.Status != 201 || moved.Map(t)["outcome"] != "moved" || moved.Map(t)["moves"] != float64(1) {
			t.Fatalf("move: %d %s", moved.Status, moved.Body)
		}
		// The permission is used up: the first device cannot come back.
		if r := bind(e, tid, a.Text()); r.Status != 409 {
			t.Errorf("old device after the move: %d %s", r.Status, r.Body)
		}
		newStatic, _ := barcode.FromText(str(moved.Map(t)["inspection_barcode"].(map[string]any)["payload"]))
		oldOnNew := a.Code(t, newStatic, now, 30)
		if rep := dynamic.Inspect(oldOnNew, kr, now, dynamic.Options{}); rep.Acceptable(false) {
			t.Error("the old device signs the moved ticket")
		}
		evs := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/events.json?limit=100", Key: e.LiveKey}).Map(t)["data"].([]any)
		seen := map[string]bool{}
		for _, ev := range evs {
			seen[str(ev.(map[string]any)["type"])] = true
		}
		if !seen["ticket.device_move_allowed"] || !seen["ticket.device_moved"] {
			t.Errorf("events %v", seen)
		}
		e.Clock.Advance(24 * time.Hour)
		e.Must(200, apitest.Req{Method: "POST", Path: move, Key: e.LiveKey})

		// A static ticket and a revoked one bind nothing.
		if r := bind(e, staticID, a.Text()); r.Status != 409 || r.Map(t)["code"] != "ticket_not_dynamic" {
			t.Errorf("static ticket: %d %s", r.Status, r.Body)
		}
		if _, err := e.App.RevokeTicket(t.Context(), idempotency.Claim{}, revokedID, "Fahrgeld erstattet"); err != nil {
			t.Fatal(err)
		}
		if r := bind(e, revokedID, a.Text()); r.Status != 409 || r.Map(t)["code"] != "ticket_not_valid" {
			t.Errorf("revoked ticket: %d %s", r.Status, r.Body)
		}
		if r := bind(e, "farebox-ticket-00000000-0000-4000-8000-000000000000", a.Text()); r.Status != 404 {
			t.Errorf("unknown ticket: %d", r.Status)
		}
	})
}

// TestDeviceBindingTwins: eight devices binding one ticket at once, exactly
// one wins and the others are refused; eight binds of one key at once bind
// once and answer the rest unchanged. Both engines.
func TestDeviceBindingTwins(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, false)}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		makeDynamic(t, e, ids["single/adult"])
		o := order(t, e, e.LiveKey, ids["single/adult"], ids["single/adult"])
		m := map[string]any{"identification_medium": medium("Erika", "Muster", "1985-05-05")}
		for i, sameKey := range []bool{false, true} {
			tid := mustActivate(t, e, "v9", str(o.Coupons[i]["id"]), m)
			shared := dynamictest.NewDevice(t)
			statuses := make([]int, 8)
			var wg sync.WaitGroup
			for j := range statuses {
				k := shared
				if !sameKey {
					k = dynamictest.NewDevice(t)
				}
				wg.Go(func() { statuses[j] = bind(e, tid, k.Text()).Status })
			}
			wg.Wait()
			count := map[int]int{}
			for _, s := range statuses {
				count[s]++
			}
			want := map[int]int{201: 1, 409: 7}
			if sameKey {
				want = map[int]int{201: 1, 200: 7}
			}
			if len(count) != len(want) || count[201] != 1 || count[409] != want[409] || count[200] != want[200] {
				t.Errorf("same key %v: statuses %v", sameKey, count)
			}
		}
	})
}

// TestDeviceBindingMarksItsClaims: the bind (keyless) and the partner's
// move permission commit with their Idempotency-Key claims marked (the
// cases TestEveryIdempotentChangeMarksItsClaim leaves to this test), and a
// replay answers the same. Both engines.
func TestDeviceBindingMarksItsClaims(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, false)}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		makeDynamic(t, e, ids["single/adult"])
		o := order(t, e, e.LiveKey, ids["single/adult"])
		tid := mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01")})
		bindPath, movePath := "/v9/ticketing/tickets/"+tid+"/device.json", "/v9/ticketing/tickets/"+tid+"/device_move.json"
		for _, c := range []struct {
			path, key, scope string
			body             any
		}{
			{bindPath, "", "path:" + bindPath, map[string]any{"public_key": dynamictest.NewDevice(t).Text()}},
			{movePath, e.LiveKey, "account:" + e.AccountID + ":live", nil},
		} {
			req := apitest.Req{Method: "POST", Path: c.path, Key: c.key, Body: c.body, Header: map[string]string{"Idempotency-Key": "device-claim"}}
			r := e.Do(req)
			if r.Status >= 300 || r.Header.Get("Idempotency-Replayed") != "false" {
				t.Fatalf("%s: %d %s", c.path, r.Status, r.Body)
			}
			if !claimCommitted(t, e, c.scope, "device-claim") {
				t.Errorf("%s committed its change without marking its Idempotency-Key claim", c.path)
			}
			if again := e.Do(req); again.Status != r.Status || again.Header.Get("Idempotency-Replayed") != "true" || string(again.Body) != string(r.Body) {
				t.Errorf("%s replay: %d %s", c.path, again.Status, again.Header.Get("Idempotency-Replayed"))
			}
		}
	})
}

// TestDeviceMoveBlocklist: after a move the signed blocklist names the
// phone the ticket moved away from (a digest of the ticket and its key), so
// an offline inspector with keys.json and the list refuses the old phone's
// code as replaced and accepts the new phone's; the entry shares the
// revocation feed's numbering (paging with limit=1 reaches it, the feed
// itself still verifies). Both engines.
func TestDeviceMoveBlocklist(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, false)}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		makeDynamic(t, e, ids["single/adult"])
		o := order(t, e, e.LiveKey, ids["single/adult"], ids["single/adult"])
		m := map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01")}
		tid := mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), m)
		other := mustActivate(t, e, "v9", str(o.Coupons[1]["id"]), m)
		kr, err := barcode.ParseKeySet(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body)
		if err != nil {
			t.Fatal(err)
		}
		list := func(q string) *blocklist.List {
			t.Helper()
			l, err := blocklist.Parse(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/blocklist.json" + q}).Body, kr)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		payload := func(r *apitest.Resp) []byte {
			t.Helper()
			p, err := barcode.FromText(str(r.Map(t)["inspection_barcode"].(map[string]any)["payload"]))
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		a, b := dynamictest.NewDevice(t), dynamictest.NewDevice(t)
		oldPayload := payload(bind(e, tid, a.Text()))
		bind(e, other, dynamictest.NewDevice(t).Text())
		if l := list(""); len(l.Devices) != 0 || strings.Contains(string(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/blocklist.json"}).Body), `"devices"`) {
			t.Fatalf("devices before any move: %+v", l.Devices)
		}
		// A revocation before the move, so the move's number follows it.
		if _, err := e.App.RevokeTicket(t.Context(), idempotency.Claim{}, other, "Fahrgeld erstattet"); err != nil {
			t.Fatal(err)
		}
		e.Must(200, apitest.Req{Method: "POST", Path: "/v9/ticketing/tickets/" + tid + "/device_move.json", Key: e.LiveKey})
		e.Clock.Advance(time.Minute)
		moved := bind(e, tid, b.Text())
		if moved.Status != 201 {
			t.Fatalf("move: %d %s", moved.Status, moved.Body)
		}
		newPayload := payload(moved)

		l := list("")
		if len(l.Devices) != 1 || l.Devices[0].TicketID != tid || l.Devices[0].DeviceKeySHA256 != blocklist.DeviceDigest(tid, a.Point) ||
			l.Devices[0].Seq != l.LastSeq || l.Devices[0].Seq != 2 || l.More {
			t.Fatalf("devices %+v (last_seq %d)", l.Devices, l.LastSeq)
		}
		if strings.Contains(string(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/blocklist.json"}).Body), a.Text()) {
			t.Error("the public list carries the device key itself")
		}
		now := e.Clock.Now()
		oldCode := a.Code(t, oldPayload, now, 30)
		rep := dynamic.Inspect(oldCode, kr, now, dynamic.Options{})
		if !rep.Acceptable(false) {
			t.Fatalf("without the list the old phone's code passes (the limitation the list removes): %s", rep)
		}
		l.CheckMoved(&rep)
		if rep.Acceptable(false) || !strings.HasPrefix(rep.Replaced, "replaced: this ticket moved to another phone on ") || !strings.Contains(rep.String(), "REPLACED: ") {
			t.Errorf("old phone with the list: %q\n%s", rep.Replaced, rep)
		}
		newCode := b.Code(t, newPayload, now, 30)
		rep = dynamic.Inspect(newCode, kr, now, dynamic.Options{})
		if l.CheckMoved(&rep); !rep.Acceptable(false) {
			t.Errorf("new phone: %s", rep)
		}

		// Paging: one entry a page; the move is the second.
		p1 := list("?limit=1")
		if !p1.More || p1.LastSeq != 1 || len(p1.Devices) != 0 {
			t.Errorf("page 1: more %v last %d devices %d", p1.More, p1.LastSeq, len(p1.Devices))
		}
		if p2 := list("?since=1&limit=1"); p2.More || p2.LastSeq != 2 || len(p2.Devices) != 1 {
			t.Errorf("page 2: more %v last %d devices %d", p2.More, p2.LastSeq, len(p2.Devices))
		}
		if l := list("?since=2"); len(l.Devices) != 0 || l.LastSeq != 2 {
			t.Errorf("after the move: %+v", l)
		}
		feed, err := barcode.VerifyFeed(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/revocations.json"}).Body, kr)
		if err != nil {
			t.Fatalf("the revocation feed with a move in its numbering: %v", err)
		}
		_ = feed
		// After the ticket's end the entry is pruned with the feed's.
		if err := e.Store.Write(t.Context(), func(q store.Q) error {
			_, err := q.PruneRevocations(t.Context(), now.Add(400*24*time.Hour))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if l := list(""); len(l.Devices) != 0 {
			t.Errorf("after pruning: %+v", l.Devices)
		}
	})
}
