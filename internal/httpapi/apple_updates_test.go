package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/wallet/apple/apnstest"
)

const (
	testWebService = "https://tickets.example.com/wallet/apple"
	testPassType   = "pass.org.farebox.test"
	pushToken1     = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
	pushToken2     = "b1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
	pushToken3     = "c1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
)

// withAppleUpdates is withWallets with the web service and APNs (the local
// server srv) configured.
func withAppleUpdates(t testing.TB, srv *apnstest.Server) func(d *httpapi.Deps) {
	t.Helper()
	return withAppleUpdatesOf(t, srv, walletOptions(t, true))
}

// appleEnv is a server on engine with o whose Apple pass updates push to
// a local APNs (srv).
func appleEnv(t *testing.T, engine store.Engine, o apitest.Options) (e *apitest.Env, srv *apnstest.Server) {
	t.Helper()
	srv = apnstest.New(t, testPassType)
	o.Configure = withAppleUpdates(t, srv)
	return apitest.New(t, engine, o), srv
}

// withAppleUpdatesOf is withAppleUpdates over the wallet options o.
func withAppleUpdatesOf(t testing.TB, srv *apnstest.Server, o wallets.Options) func(d *httpapi.Deps) {
	t.Helper()
	o.AppleWebServiceURL = testWebService
	return func(d *httpapi.Deps) {
		c, err := apple.NewAPNs(srv.Config())
		if err != nil {
			t.Fatal(err)
		}
		o.Pusher = c
		d.Wallets = apitest.Wallets(d, o)
	}
}

// updatablePass is the web-service part of pass.json.
type updatablePass struct {
	SerialNumber        string `json:"serialNumber"`
	WebServiceURL       string `json:"webServiceURL"`
	AuthenticationToken string `json:"authenticationToken"`
	Voided              bool   `json:"voided"`
}

func passFiles(t *testing.T, body []byte) (updatablePass, passJSON) {
	t.Helper()
	files := unzipPass(t, body)
	checkManifest(t, files)
	opensslVerify(t, files, walletCreds.apple.Root.Raw)
	var u updatablePass
	var p passJSON
	if err := json.Unmarshal(files["pass.json"], &u); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(files["pass.json"], &p); err != nil {
		t.Fatal(err)
	}
	return u, p
}

// phonePass is ticket tid's Apple pass in Wallet on device "phone",
// registered for updates with pushToken1 and the pass's token.
type phonePass struct {
	t    *testing.T
	e    *apitest.Env
	srv  *apnstest.Server
	tid  string
	u    updatablePass     // the web-service part of the downloaded pass
	auth map[string]string // the header Wallet sends with the pass's token
	list string            // the device's list of updated serial numbers
}

// registerOnPhone downloads ticket tid's pass and registers it on the
// phone (201).
func registerOnPhone(t *testing.T, e *apitest.Env, srv *apnstest.Server, tid string) *phonePass {
	t.Helper()
	u, _ := passFiles(t, e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/apple_wallet/" + tid + ".pkpass"}).Body)
	auth := map[string]string{"Authorization": "ApplePass " + u.AuthenticationToken}
	e.Must(201, apitest.Req{Method: "POST", Path: "/wallet/apple/v1/devices/phone/registrations/" + testPassType + "/" + tid,
		Body: map[string]any{"pushToken": pushToken1}, Header: auth})
	return &phonePass{t: t, e: e, srv: srv, tid: tid, u: u, auth: auth, list: "/wallet/apple/v1/devices/phone/registrations/" + testPassType}
}

// now is the pass as Wallet fetches it now: the same serial number and
// token, not voided.
func (w *phonePass) now() passJSON {
	w.t.Helper()
	v, p := passFiles(w.t, w.e.Must(200, apitest.Req{Method: "GET", Path: "/wallet/apple/v1/passes/" + testPassType + "/" + w.tid, Header: w.auth}).Body)
	if v.SerialNumber != w.tid || v.AuthenticationToken != w.u.AuthenticationToken || v.Voided {
		w.t.Fatalf("pass %+v", v)
	}
	return p
}

// unmoved checks that nothing was pushed, nothing changed since tag and
// the pass still shows ticket cur's validity (when says the moment).
func (w *phonePass) unmoved(tag wallets.AppleSerials, cur map[string]any, when string) {
	w.t.Helper()
	if n := len(w.srv.Pushes()); n != 0 {
		w.t.Fatalf("%d pushes %s", n, when)
	}
	w.e.Must(204, apitest.Req{Method: "GET", Path: w.list + "?passesUpdatedSince=" + tag.LastUpdated})
	if p := w.now(); p.field("valid_from") != cur["valid_from"] || p.ExpirationDate != cur["valid_until"] {
		w.t.Errorf("%s the pass shows %v – %v, want %v – %v", when, p.field("valid_from"), p.ExpirationDate, cur["valid_from"], cur["valid_until"])
	}
}

// moved waits for the first push to the phone and checks that the pass is
// the one serial number changed since tag and shows ticket next's
// validity and barcode (when says the moment).
func (w *phonePass) moved(tag wallets.AppleSerials, next map[string]any, when string) {
	w.t.Helper()
	waitFor(w.t, "the push "+when, func() bool { return pushesTo(w.srv, pushToken1, 200) == 1 })
	var changed wallets.AppleSerials
	w.e.Must(200, apitest.Req{Method: "GET", Path: w.list + "?passesUpdatedSince=" + tag.LastUpdated}).JSON(w.t, &changed)
	if len(changed.SerialNumbers) != 1 || changed.SerialNumbers[0] != w.tid {
		w.t.Fatalf("changed serials %s: %+v", when, changed)
	}
	p := w.now()
	if p.field("valid_from") != next["valid_from"] || p.field("valid_until") != next["valid_until"] || p.ExpirationDate != next["valid_until"] {
		w.t.Errorf("%s the pass shows %v – %v, want %v – %v", when, p.field("valid_from"), p.field("valid_until"),
			next["valid_from"], next["valid_until"])
	}
	if msg, err := barcode.FromLatin1(p.Barcodes[0].Message); err != nil || !bytes.Equal(msg, ticketPayload(w.t, next)) {
		w.t.Errorf("%s the pass does not carry the new ticket's barcode (%v)", when, err)
	}
}

// waitFor polls cond until it holds; a hang guard of a minute, not a timing
// assertion (the runner is woken by the commit and delivers in
// milliseconds).
func waitFor(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	began := time.Now()
	for !cond() {
		if time.Since(began) > time.Minute {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(began)
}

func pushesTo(srv *apnstest.Server, token string, status int) int {
	n := 0
	for _, p := range srv.Pushes() {
		if p.Token == token && p.Status == status {
			n++
		}
	}
	return n
}

// TestAppleWalletUpdates drives the whole update cycle as Wallet on an
// iPhone would: the pass carries webServiceURL and its token, the device
// registers, the coupon is restored, the push reaches the local APNs
// through the job runner, the device asks what changed since its tag and
// downloads the voided pass (signed), and If-Modified-Since answers 304.
// Then an operator revocation pushes to two devices, one of which APNs
// says is gone (410: its registration is deleted) and one throttled first
// (429: the job is retried with backoff).
func TestAppleWalletUpdates(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		e, srv := appleEnv(t, engine, apitest.Options{Workers: 1})
		appleUpdateCycle(t, e, srv)
	})
}

func appleUpdateCycle(t *testing.T, e *apitest.Env, srv *apnstest.Server) {
	order, tid, _ := activatedTicket(t, e, e.LiveKey)
	r := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/apple_wallet/" + tid + ".pkpass"})
	u, _ := passFiles(t, r.Body)
	if u.WebServiceURL != testWebService || len(u.AuthenticationToken) < 16 || u.SerialNumber != tid || u.Voided {
		t.Fatalf("pass.json web service: %+v", u)
	}
	// The same pass again carries the same token (stored per serial number).
	if u2, _ := passFiles(t, e.Must(200, apitest.Req{Method: "GET", Path: "/v6/ticketing/passes/apple_wallet/" + tid + ".pkpass"}).Body); u2 != u {
		t.Fatalf("second download differs: %+v vs %+v", u2, u)
	}
	auth := map[string]string{"Authorization": "ApplePass " + u.AuthenticationToken}
	reg := "/wallet/apple/v1/devices/device-1/registrations/" + testPassType + "/" + tid
	body := map[string]any{"pushToken": pushToken1}
	e.Must(201, apitest.Req{Method: "POST", Path: reg, Body: body, Header: auth})
	e.Must(200, apitest.Req{Method: "POST", Path: reg, Body: body, Header: auth})

	list := "/wallet/apple/v1/devices/device-1/registrations/" + testPassType
	var serials wallets.AppleSerials
	e.Must(200, apitest.Req{Method: "GET", Path: list}).JSON(t, &serials)
	if len(serials.SerialNumbers) != 1 || serials.SerialNumbers[0] != tid {
		t.Fatalf("serials %+v", serials)
	}
	e.Must(204, apitest.Req{Method: "GET", Path: list + "?passesUpdatedSince=" + serials.LastUpdated})

	passPath := "/wallet/apple/v1/passes/" + testPassType + "/" + tid
	r = e.Must(200, apitest.Req{Method: "GET", Path: passPath, Header: auth})
	lm := r.Header.Get("Last-Modified")
	if _, err := http.ParseTime(lm); err != nil || r.Header.Get("Content-Type") != wallets.ApplePassContentType {
		t.Fatalf("Last-Modified %q, Content-Type %q", lm, r.Header.Get("Content-Type"))
	}
	if got, _ := passFiles(t, r.Body); got != u {
		t.Errorf("web service pass %+v, download %+v", got, u)
	}
	// The entity tag revalidates at once; a date in the pass's last
	// seconds cannot (wallets.LastModifiedMargin): 200 until the margin passed.
	etag := r.Header.Get("ETag")
	e.Must(304, apitest.Req{Method: "GET", Path: passPath, Header: map[string]string{"Authorization": auth["Authorization"], "If-None-Match": etag}})
	e.Must(200, apitest.Req{Method: "GET", Path: passPath, Header: map[string]string{"Authorization": auth["Authorization"], "If-Modified-Since": lm}})
	e.Clock.Advance(wallets.LastModifiedMargin + time.Second)
	r = e.Must(200, apitest.Req{Method: "GET", Path: passPath, Header: auth})
	lm = r.Header.Get("Last-Modified")
	e.Must(304, apitest.Req{Method: "GET", Path: passPath, Header: map[string]string{"Authorization": auth["Authorization"], "If-Modified-Since": lm}})

	attacks(t, e, tid, reg, list, passPath, auth)

	// Restore: the old ticket is voided; the job pushes to device-1.
	e.Clock.Advance(time.Minute)
	coupon := order["coupons"].([]any)[0].(map[string]any)["id"].(string)
	e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders/" + order["order_id"].(string) + "/restore.json", Key: e.LiveKey,
		Body: map[string]any{"restore_secret": order["restore_secret"], "coupon_ids": []string{coupon}}})
	took := waitFor(t, "the push after the restore", func() bool { return pushesTo(srv, pushToken1, 200) == 1 })
	t.Logf("restore → push at the local APNs: %v", took)
	if r := srv.Refused(); len(r) != 0 {
		t.Fatalf("APNs refused: %v", r)
	}
	var changed wallets.AppleSerials
	e.Must(200, apitest.Req{Method: "GET", Path: list + "?passesUpdatedSince=" + serials.LastUpdated}).JSON(t, &changed)
	if len(changed.SerialNumbers) != 1 || changed.SerialNumbers[0] != tid || changed.LastUpdated == serials.LastUpdated {
		t.Fatalf("after the restore: %+v (tag before %s)", changed, serials.LastUpdated)
	}
	r = e.Must(200, apitest.Req{Method: "GET", Path: passPath, Header: map[string]string{"Authorization": auth["Authorization"], "If-Modified-Since": lm}})
	v, vp := passFiles(t, r.Body)
	if !v.Voided || v.SerialNumber != tid || v.AuthenticationToken != u.AuthenticationToken || vp.field("status") != "REPLACED_VALUE" {
		t.Errorf("updated pass: %+v status %v", v, vp.field("status"))
	}
	lm2 := r.Header.Get("Last-Modified")
	if lm2 == lm {
		t.Errorf("Last-Modified unchanged after the restore: %s", lm2)
	}
	if r.Header.Get("ETag") == etag {
		t.Errorf("ETag unchanged after the restore: %s", etag)
	}
	e.Must(304, apitest.Req{Method: "GET", Path: passPath, Header: map[string]string{"Authorization": auth["Authorization"], "If-None-Match": r.Header.Get("ETag")}})
	e.Clock.Advance(wallets.LastModifiedMargin + time.Second)
	lm2 = e.Must(200, apitest.Req{Method: "GET", Path: passPath, Header: map[string]string{"Authorization": auth["Authorization"], "If-Modified-Since": lm2}}).Header.Get("Last-Modified")
	e.Must(304, apitest.Req{Method: "GET", Path: passPath, Header: map[string]string{"Authorization": auth["Authorization"], "If-Modified-Since": lm2}})
	e.Must(204, apitest.Req{Method: "GET", Path: list + "?passesUpdatedSince=" + changed.LastUpdated})

	// Unregister.
	e.Must(200, apitest.Req{Method: "DELETE", Path: reg, Header: auth})
	e.Must(204, apitest.Req{Method: "GET", Path: list})

	// The restored coupon's ticket: two devices; APNs says one is gone and
	// throttles the other once.
	restored := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/orders/" + order["order_id"].(string) + ".json", Key: e.LiveKey}).Map(t)
	var newCoupon string
	for _, c := range restored["coupons"].([]any) {
		if c.(map[string]any)["original_coupon_id"] == coupon {
			newCoupon = c.(map[string]any)["id"].(string)
		}
	}
	tid2 := e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/coupons/" + newCoupon + "/activate.json", Body: map[string]any{}}).Map(t)["ticket_id"].(string)
	u2, _ := passFiles(t, e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/apple_wallet/" + tid2 + ".pkpass"}).Body)
	auth2 := map[string]string{"Authorization": "ApplePass " + u2.AuthenticationToken}
	if u2.AuthenticationToken == u.AuthenticationToken {
		t.Fatal("two passes share a token")
	}
	for dev, tok := range map[string]string{"device-2": pushToken2, "device-3": pushToken3} {
		e.Must(201, apitest.Req{Method: "POST", Path: "/wallet/apple/v1/devices/" + dev + "/registrations/" + testPassType + "/" + tid2,
			Body: map[string]any{"pushToken": tok}, Header: auth2})
	}
	srv.Respond(func(token string, n int) (int, string) {
		switch {
		case token == pushToken2:
			return http.StatusGone, "Unregistered"
		case token == pushToken3 && n == 0:
			return http.StatusTooManyRequests, "TooManyRequests"
		}
		return http.StatusOK, ""
	})
	e.Clock.Advance(time.Minute)
	if _, err := e.App.RevokeTicket(context.Background(), idempotency.Claim{}, tid2, "fraud suspected"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the failed attempt to be scheduled again", func() bool {
		js, err := e.Store.Read().Jobs(context.Background(), passes.JobApplePassUpdate)
		if err != nil {
			t.Fatal(err)
		}
		last := js[len(js)-1]
		return last.Payload == tid2 && last.State == jobs.StateReady && last.Attempts == 1 && last.LastError != nil &&
			strings.Contains(*last.LastError, "429")
	})
	if pushesTo(srv, pushToken2, http.StatusGone) != 1 {
		t.Fatalf("device-2 not pushed: %s", srv)
	}
	e.Must(204, apitest.Req{Method: "GET", Path: "/wallet/apple/v1/devices/device-2/registrations/" + testPassType}) // 410: deleted
	e.Clock.Advance(time.Minute)                                                                                     // past the backoff
	e.App.Jobs.Notify()
	waitFor(t, "the retried push", func() bool { return pushesTo(srv, pushToken3, 200) == 1 })
	var d3 wallets.AppleSerials
	e.Must(200, apitest.Req{Method: "GET", Path: "/wallet/apple/v1/devices/device-3/registrations/" + testPassType}).JSON(t, &d3)
	r = e.Must(200, apitest.Req{Method: "GET", Path: "/wallet/apple/v1/passes/" + testPassType + "/" + tid2, Header: auth2})
	if v, vp := passFiles(t, r.Body); !v.Voided || vp.field("status") != "VOIDED_VALUE" {
		t.Errorf("revoked pass: %+v %v", v, vp.field("status"))
	}
}

// attacks: a request without the pass's token changes nothing and tells
// nothing apart; bad input is a 4xx naming the field.
func attacks(t *testing.T, e *apitest.Env, tid, reg, list, passPath string, auth map[string]string) {
	t.Helper()
	other := "/wallet/apple/v1/devices/intruder/registrations/" + testPassType + "/" + tid
	body := map[string]any{"pushToken": pushToken2}
	for name, h := range map[string]map[string]string{
		"no header":    nil,
		"wrong token":  {"Authorization": "ApplePass " + strings.Repeat("x", 32)},
		"bearer":       {"Authorization": "Bearer " + strings.TrimPrefix(auth["Authorization"], "ApplePass ")},
		"token prefix": {"Authorization": auth["Authorization"][:len(auth["Authorization"])-1]},
		"huge token":   {"Authorization": "ApplePass " + strings.Repeat("y", 4000)},
	} {
		for _, req := range []apitest.Req{
			{Method: "POST", Path: other, Body: body, Header: h},
			{Method: "DELETE", Path: reg, Header: h},
			{Method: "GET", Path: passPath, Header: h},
		} {
			if r := e.Do(req); r.Status != 401 || !strings.Contains(string(r.Body), wallets.CodeApplePassUnauthorized) {
				t.Errorf("%s: %s %s: %d %s", name, req.Method, req.Path, r.Status, r.Body)
			}
		}
	}
	// An unknown serial number answers exactly like a wrong token.
	unknown := "/wallet/apple/v1/devices/intruder/registrations/" + testPassType + "/farebox-ticket-unknown"
	if r := e.Do(apitest.Req{Method: "POST", Path: unknown, Body: body, Header: auth}); r.Status != 401 {
		t.Errorf("unknown serial: %d %s", r.Status, r.Body)
	}
	e.Must(401, apitest.Req{Method: "GET", Path: "/wallet/apple/v1/passes/" + testPassType + "/farebox-ticket-unknown", Header: auth})
	// Another pass type, bad inputs, huge bodies.
	e.Must(404, apitest.Req{Method: "GET", Path: "/wallet/apple/v1/passes/pass.com.example.other/" + tid, Header: auth})
	e.Must(404, apitest.Req{Method: "GET", Path: "/wallet/apple/v1/devices/device-1/registrations/pass.com.example.other"})
	for _, b := range []any{map[string]any{"pushToken": "not hex"}, map[string]any{}, map[string]any{"pushToken": strings.Repeat("a", 201)}} {
		if r := e.Do(apitest.Req{Method: "POST", Path: other, Body: b, Header: auth}); r.Status != 400 || !strings.Contains(string(r.Body), wallets.CodeInvalidPushToken) {
			t.Errorf("push token %v: %d %s", b, r.Status, r.Body)
		}
	}
	for _, b := range []string{"[1,2]", `{"pushToken": 7}`, `{"pushToken": "a\u0000"}`, "{"} {
		e.Must(400, apitest.Req{Method: "POST", Path: other, Body: b, Header: auth})
	}
	long := "/wallet/apple/v1/devices/" + strings.Repeat("d", 129) + "/registrations/" + testPassType + "/" + tid
	if r := e.Do(apitest.Req{Method: "POST", Path: long, Body: body, Header: auth}); r.Status != 400 || !strings.Contains(string(r.Body), wallets.CodeInvalidDeviceID) {
		t.Errorf("long device id: %d %s", r.Status, r.Body)
	}
	huge := `{"pushToken":"` + pushToken2 + `","pad":"` + strings.Repeat("z", 5000) + `"}`
	e.Must(413, apitest.Req{Method: "POST", Path: other, Body: huge, Header: auth})
	e.Must(400, apitest.Req{Method: "GET", Path: list + "?passesUpdatedSince=yesterday"})
	e.Must(400, apitest.Req{Method: "GET", Path: list + "?passesUpdatedSince=-1"})
	// Nothing of the above registered the intruder.
	e.Must(204, apitest.Req{Method: "GET", Path: "/wallet/apple/v1/devices/intruder/registrations/" + testPassType})
	var s wallets.AppleSerials
	e.Must(200, apitest.Req{Method: "GET", Path: list}).JSON(t, &s)
	if len(s.SerialNumbers) != 1 {
		t.Errorf("device-1's registration changed: %+v", s)
	}
	// The log: messages accepted, bounded.
	e.Must(200, apitest.Req{Method: "POST", Path: "/wallet/apple/v1/log", Body: map[string]any{"logs": []string{"Web service error", strings.Repeat("ü", 3000)}}})
	e.Must(400, apitest.Req{Method: "POST", Path: "/wallet/apple/v1/log", Body: map[string]any{"logs": "not an array"}})
	e.Must(413, apitest.Req{Method: "POST", Path: "/wallet/apple/v1/log", Body: `{"logs":["` + strings.Repeat("x", wallets.MaxAppleLogBody) + `"]}`})
}

// TestSubscriptionPassMovesAtTheBoundary: a monthly subscription's pass
// (serial number = the first cycle's ticket) moves to the next cycle by
// push at 00:00 Berlin on the 1st. The next cycle's ticket is obtained right
// after the reorder, weeks ahead; its update job is due at the cycle's
// start: a second before,
// nothing is pushed and the pass still shows the old cycle; at the start
// the device is pushed, the pass is among the changed serials and now
// carries the new cycle's validity and barcode under the same serial
// number and token. Month turns: the 31st → 1st, December → January, both
// DST months, and the last cycle of a cancelled subscription.
func TestSubscriptionPassMovesAtTheBoundary(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		activation time.Time
		cycle      time.Time
		cancel     bool
	}{
		{"31 August → 1 September", bln(2026, 8, 3, 9), bln(2026, 9, 1, 0), false},
		{"December → January", bln(2026, 12, 1, 9), bln(2027, 1, 1, 0), false},
		{"31 March → 1 April across the start of summer time", bln(2027, 3, 3, 9), bln(2027, 4, 1, 0), false},
		{"31 October → 1 November across the end of summer time", bln(2026, 10, 3, 9), bln(2026, 11, 1, 0), false},
		{"the last cycle of a cancelled subscription", bln(2027, 1, 2, 9), bln(2027, 2, 1, 0), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
				e, srv := appleEnv(t, engine, apitest.Options{Now: c.activation, Workers: 1})
				passMovesAtBoundary(t, e, srv, c.cycle, c.cancel)
			})
		})
	}
}

func passMovesAtBoundary(t *testing.T, e *apitest.Env, srv *apnstest.Server, cycle time.Time, cancel bool) {
	ctx := context.Background()
	cid, subID, first := monthlyCoupon(t, e)
	tid := str(first["id"])
	phone := registerOnPhone(t, e, srv, tid)
	var tag wallets.AppleSerials
	e.Must(200, apitest.Req{Method: "GET", Path: phone.list}).JSON(t, &tag)

	if r := reorder(e, e.LiveKey, subID, nil); r.Status != 201 {
		t.Fatalf("reorder: %d %s", r.Status, r.Body)
	}
	if cancel {
		e.Must(200, apitest.Req{Method: "DELETE", Path: "/v9/ticketing/subscriptions/" + subID + ".json", Key: e.LiveKey})
	}
	next := ticket(t, e, mustActivate(t, e, "v9", cid, map[string]any{"reactivation_key": str(first["coupon_reactivation_key"])}))
	js, err := e.Store.Read().Jobs(ctx, passes.JobApplePassUpdate)
	if err != nil || len(js) != 1 || js[0].Payload != str(next["id"]) || !js[0].RunAt.Equal(cycle) || js[0].State != jobs.StateReady {
		t.Fatalf("update job %+v %v; want one due at %v", js, err, cycle)
	}

	e.Clock.Set(cycle.Add(-time.Second))
	if _, err := e.App.Jobs.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	phone.unmoved(tag, first, "a second before the cycle")

	e.Clock.Set(cycle)
	e.App.Jobs.Notify()
	phone.moved(tag, next, "at the cycle's start")
	// Downloaded again by its first ticket's id, the pass is the same: a
	// stale copy must not replace the moved one on the device.
	again, ap := passFiles(t, e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/apple_wallet/" + tid + ".pkpass"}).Body)
	if again != (updatablePass{SerialNumber: tid, WebServiceURL: testWebService, AuthenticationToken: phone.u.AuthenticationToken}) ||
		ap.field("valid_from") != next["valid_from"] {
		t.Errorf("the pass downloaded again: %+v, from %v", again, ap.field("valid_from"))
	}
	if r := srv.Refused(); len(r) != 0 {
		t.Errorf("APNs refused: %v", r)
	}
}

// TestAppleRegistrationConcurrency: twenty concurrent registrations of one
// device for one pass make one registration (one 201, the rest 200);
// twenty devices at once make twenty, each listed with the pass; one
// revocation then pushes to all twenty once.
func TestAppleRegistrationConcurrency(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		e, srv := appleEnv(t, engine, apitest.Options{Workers: 2})
		_, tid, _ := activatedTicket(t, e, e.LiveKey)
		u, _ := passFiles(t, e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/apple_wallet/" + tid + ".pkpass"}).Body)
		auth := map[string]string{"Authorization": "ApplePass " + u.AuthenticationToken}
		const n = 20
		run := func(device func(i int) string) map[int]int {
			statuses := make(chan int, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := e.Do(apitest.Req{Method: "POST", Path: "/wallet/apple/v1/devices/" + device(i) + "/registrations/" + testPassType + "/" + tid,
						Body: map[string]any{"pushToken": fmt.Sprintf("%064x", i+1)}, Header: auth})
					statuses <- r.Status
				}()
			}
			wg.Wait()
			close(statuses)
			got := map[int]int{}
			for s := range statuses {
				got[s]++
			}
			return got
		}
		if got := run(func(int) string { return "same-device" }); got[201] != 1 || got[200] != n-1 {
			t.Errorf("one device, %d concurrent registrations: %v", n, got)
		}
		e.Must(200, apitest.Req{Method: "DELETE", Path: "/wallet/apple/v1/devices/same-device/registrations/" + testPassType + "/" + tid, Header: auth})
		if got := run(func(i int) string { return fmt.Sprintf("device-%d", i) }); got[201] != n {
			t.Errorf("%d devices at once: %v", n, got)
		}
		for i := range n {
			var s wallets.AppleSerials
			e.Must(200, apitest.Req{Method: "GET", Path: fmt.Sprintf("/wallet/apple/v1/devices/device-%d/registrations/%s", i, testPassType)}).JSON(t, &s)
			if len(s.SerialNumbers) != 1 || s.SerialNumbers[0] != tid {
				t.Errorf("device-%d: %+v", i, s)
			}
		}
		if _, err := e.App.RevokeTicket(context.Background(), idempotency.Claim{}, tid, "chargeback"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "twenty pushes", func() bool { return len(srv.Pushes()) >= n })
		seen := map[string]int{}
		for _, p := range srv.Pushes() {
			seen[p.Token]++
		}
		if len(seen) != n {
			t.Errorf("pushed %d distinct tokens: %v", len(seen), seen)
		}
		for tok, c := range seen {
			if c != 1 {
				t.Errorf("token %s pushed %d times", tok, c)
			}
		}
	})
}
