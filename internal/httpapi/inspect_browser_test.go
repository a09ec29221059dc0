package httpapi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/boombuler/barcode/qr"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/dynamic"
	"github.com/farebox/farebox/internal/barcode/dynamic/dynamictest"
	"github.com/farebox/farebox/internal/engines/browsertest"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
)

// inspectResults is what internal/engines/testdata/browser/inspect.js records.
type inspectResults struct {
	Pages          map[string]browserPage
	Errors         []string
	Status         int
	WrongPassword  string
	Online         map[string]string // code digest → verdict
	Offline        map[string]string
	OfflineAge     string
	PendingOffline int
	Debug          string
	Timings        []inspectTiming
	// Detector: the verdicts read through the page's BarcodeDetector (a
	// polyfill over the embedded decoder) and how often the app called it.
	Detector      []struct{ Digest, Outcome, Via string }
	DetectorCalls int
	Throttled     []inspectTiming // frame to verdict under 4× CPU throttling
	Tolerance     float64         // the window tolerance the app judges with
	Bounds        []struct{ Name, Want, Got, Reason string }
	TooOld        string // the verdict of a valid code with the data made too old
	Verify        map[string]struct {
		Ms       float64
		Runs     int
		Outcomes map[string]int
	}
	Fuzz struct {
		Runs, Images, ImageBad int
		Bad                    []string
		Outcomes               map[string]int
	}
}

type inspectTiming struct {
	Verify, Total float64
	Via           string
}

// inspectCode is a code of the test video and its verdict.
type inspectCode struct {
	Name    string `json:"name"`
	Want    string `json:"want"`
	Kind    string `json:"kind"` // static, dynamic (FD) or rotating (FR1)
	Digest  string `json:"digest"`
	Payload string `json:"payload"` // base64url of the bytes the code carries
	bytes   []byte
}

// inspectBound is a verdict at a time on the edge of a moving code's
// window ± the configured tolerance.
type inspectBound struct {
	Name    string `json:"name"`
	Payload string `json:"payload"`
	At      int64  `json:"at"`
	Want    string `json:"want"`
}

// inspectTolerance is the app's window tolerance in
// TestInspectorAppInChromium (--inspect-window-tolerance): wider than the
// 30 s default so that the valid moving codes, made once for the video,
// stay valid while the browser runs (and the app must use the server's).
const inspectTolerance = 180 * time.Second

// TestInspectorAppInChromium: the inspector app (/inspect) in Chromium
// with a fake camera playing a Y4M video of farebox's own barcode images
// of real tickets of a running server: valid, expired, not yet valid,
// revoked, one altered (not genuine); a dynamic ticket's phone code (FD)
// live, from an hour ago (copied) and from the phone the ticket moved away
// from (replaced, by the blocklist's devices); the Google Wallet rotating
// code (FR1, a QR code from the pass's totpDetails, checked with the
// secret the app fetched with its inspector token) live and from an hour
// ago. After the network is cut the app reloads from its service worker
// and still says "valid" from its cached data, keeping the check until it
// is back online, when it posts it. Then, in the same page: the app's
// BarcodeDetector branch through a page-installed BarcodeDetector over
// the embedded decoder; the window edges ± the configured tolerance; a
// check with data too old (posted as data_too_old); verification alone
// per kind; frame to verdict under 4× CPU throttling. Sign-in and camera
// screens have no WCAG 2.1 AA violation. Random bytes, texts, clocks and
// images give a verdict each, never a throw. One browser, one video
// (SQLite: the API tests cover both engines).
func TestInspectorAppInChromium(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Browser)
	now := time.Now().UTC().Truncate(time.Second)
	e := apitest.New(t, store.SQLite, apitest.Options{Now: now, Configure: withInspectorApp(t, inspectTolerance)})
	inspector(t, e, "Kontrolle Chromium")
	if err := e.WebUsers.SetInspectorPassword(t.Context(), "Kontrolle Chromium", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	codes := append(staticInspectCodes(t, e, now), dynamicInspectCodes(t, e, now)...)
	var images []modules
	for i := range codes {
		sum := sha256.Sum256(codes[i].bytes)
		codes[i].Digest, codes[i].Payload = hex.EncodeToString(sum[:]), barcode.Text(codes[i].bytes)
		images = append(images, codeModules(t, codes[i]))
	}
	video := filepath.Join(t.TempDir(), "tickets.y4m")
	if err := os.WriteFile(video, y4mOfCodes(images, 640, 480), 0o644); err != nil {
		t.Fatal(err)
	}
	var res inspectResults
	browsertest.Run(t, "inspect.js", map[string]any{"base": e.URL, "name": "Kontrolle Chromium", "password": "correct horse battery",
		"tickets": codes, "offline": []string{codes[0].Digest}, "lang": "de", "bounds": inspectBounds(t, codes),
		"chromiumArgs": []string{"--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream", "--use-file-for-fake-video-capture=" + video}}, &res)
	for _, msg := range res.Errors {
		t.Error(msg)
	}
	checkBrowserPages(t, res.Pages, []string{"inspect-signin-de", "inspect-camera-de"}, func(string) bool { return true })
	if res.WrongPassword != "Name oder Passwort ist falsch." {
		t.Errorf("a wrong password showed %q", res.WrongPassword)
	}
	for _, c := range codes {
		if got := res.Online[c.Digest]; got != c.Want {
			t.Errorf("%s: verdict %q online, want %q (%s)", c.Name, got, c.Want, res.Debug)
		}
	}
	if got := res.Offline[codes[0].Digest]; got != "valid" {
		t.Errorf("valid ticket with the network cut: %q (data: %s)", got, res.OfflineAge)
	}
	if res.PendingOffline == 0 {
		t.Error("the offline check was not kept on the device")
	}
	checkInspectExtras(t, e, codes, &res)
}

// checkInspectExtras checks what TestInspectorAppInChromium did after the
// offline phase, the records the app posted, and logs the figures.
func checkInspectExtras(t *testing.T, e *apitest.Env, codes []inspectCode, res *inspectResults) {
	t.Helper()
	want := map[string]string{}
	for _, c := range codes {
		want[c.Digest] = c.Want
	}
	viaDetector := 0
	for _, d := range res.Detector {
		if d.Via == "detector" {
			viaDetector++
		}
		if d.Outcome != want[d.Digest] {
			t.Errorf("through the BarcodeDetector: %s for %.12s…, want %q", d.Outcome, d.Digest, want[d.Digest])
		}
	}
	if viaDetector < 2 || res.DetectorCalls == 0 {
		t.Errorf("the app's BarcodeDetector branch: %d verdicts read by it, %d detect calls", viaDetector, res.DetectorCalls)
	}
	if res.Tolerance != inspectTolerance.Seconds() {
		t.Errorf("the app judges with a tolerance of %v s, the server's is %v", res.Tolerance, inspectTolerance.Seconds())
	}
	for _, b := range res.Bounds {
		if b.Got != b.Want {
			t.Errorf("%s: %q (%s), want %q", b.Name, b.Got, b.Reason, b.Want)
		}
	}
	if len(res.Bounds) != 8 {
		t.Errorf("%d window edges judged, want 8", len(res.Bounds))
	}
	if res.TooOld != "data_too_old" {
		t.Errorf("a valid code with data too old: %q", res.TooOld)
	}
	for _, kind := range []string{"static", "dynamic", "rotating"} {
		if v := res.Verify[kind]; v.Runs < 100 || v.Outcomes["valid"] != v.Runs {
			t.Errorf("verification alone of %s codes: %d runs, outcomes %v (each must be a full, valid check)", kind, v.Runs, v.Outcomes)
		}
	}
	if len(res.Fuzz.Bad) > 0 || res.Fuzz.Runs != 3000 || res.Fuzz.ImageBad > 0 {
		t.Errorf("fuzz: %d runs, bad %v, images %d (%d threw)", res.Fuzz.Runs, res.Fuzz.Bad, res.Fuzz.Images, res.Fuzz.ImageBad)
	}
	// The records the app posted: one per verdict, data_too_old included.
	posted, err := e.Store.Read().InspectionsReceived(t.Context(), time.Unix(0, 0), time.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, r := range posted {
		outcomes[r.Outcome]++
	}
	for _, o := range []string{"valid", "expired", "not_yet_valid", "revoked", "not_genuine", "copied", "replaced", "data_too_old"} {
		if outcomes[o] == 0 {
			t.Errorf("no %s check among the posted records %v", o, outcomes)
		}
	}
	if len(res.Throttled) < 3 {
		t.Errorf("only %d frame-to-verdict figures under CPU throttling", len(res.Throttled))
	}
	logInspectFigures(t, res)
}

// logInspectFigures logs the timings (no time limit is asserted).
func logInspectFigures(t *testing.T, res *inspectResults) {
	t.Helper()
	totals := func(ts []inspectTiming) (all []float64) {
		for _, x := range ts {
			all = append(all, x.Total)
		}
		return all
	}
	total, slow := totals(res.Timings), totals(res.Throttled)
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("frame to verdict (decode + verify + screen, ZXing): median %.1f ms, max %.1f ms over %d codes; under 4× CPU throttling median %.1f ms, max %.1f ms over %d; load %s",
		median(total), maxOf(total), len(total), median(slow), maxOf(slow), len(slow), strings.TrimSpace(string(load)))
	for _, kind := range []string{"static", "dynamic", "rotating"} {
		t.Logf("verification alone, %s code: %.3f ms per barcode (%d runs)", kind, res.Verify[kind].Ms, res.Verify[kind].Runs)
	}
	t.Logf("fuzz outcomes %v", res.Fuzz.Outcomes)
}

// staticInspectCodes are the still codes of the video: valid, expired,
// not yet valid, revoked, altered.
func staticInspectCodes(t *testing.T, e *apitest.Env, now time.Time) []inspectCode {
	t.Helper()
	loc, _ := time.LoadLocation("Europe/Berlin")
	l := now.In(loc)
	month := func(add int) string { return berlinMonth(now, add) }
	_, _, validT := ticketFrom(t, e, e.LiveKey, "", month(0))
	// Expired and not yet valid: the service's clock set to June and to
	// the first of next month for their activation (the app judges them
	// by the phone's clock, now).
	e.Clock.Set(apitest.DefaultNow)
	_, _, expiredT := ticketFrom(t, e, e.LiveKey, "", "2026-06-01T00:00:00+0200")
	e.Clock.Set(time.Date(l.Year(), l.Month()+1, 1, 9, 0, 0, 0, loc))
	_, _, notYetT := ticketFrom(t, e, e.LiveKey, "", month(1))
	e.Clock.Set(now)
	_, revokedID, revokedT := ticketFrom(t, e, e.LiveKey, "", month(0))
	if _, err := e.App.RevokeTicket(t.Context(), idempotency.Claim{}, revokedID, "Fahrgeld erstattet"); err != nil {
		t.Fatal(err)
	}
	_, _, otherT := ticketFrom(t, e, e.LiveKey, "", month(0))
	forged := ticketPayload(t, otherT)
	forged[bytes.Index(forged, []byte("Max"))] = 'W' // "Wax": the signature no longer holds
	return []inspectCode{{Name: "valid", Want: "valid", bytes: ticketPayload(t, validT)}, {Name: "expired", Want: "expired", bytes: ticketPayload(t, expiredT)},
		{Name: "not yet", Want: "not_yet_valid", bytes: ticketPayload(t, notYetT)}, {Name: "revoked", Want: "revoked", bytes: ticketPayload(t, revokedT)},
		{Name: "altered", Want: "not_genuine", bytes: forged}}
}

// dynamicInspectCodes are the moving codes of the video, of monthly
// tickets made dynamic: a bound phone's code (FD) of the window 150 s ahead
// (within the tolerance, so it stays valid while the browser runs) and of
// an hour ago (copied); the code a phone the ticket moved away from signs
// (replaced); the Google Wallet pass's rotating code (FR1) as the phone
// computes it from the pass's totpDetails, 150 s ahead and an hour ago.
func dynamicInspectCodes(t *testing.T, e *apitest.Env, now time.Time) []inspectCode {
	t.Helper()
	makeDynamic(t, e, productIDs(t, e)["month/adult"])
	monthly := func() string {
		_, id, _ := ticketFrom(t, e, e.LiveKey, "", berlinMonth(now, 0))
		return id
	}
	bound := func(id string, k dynamictest.Device) []byte {
		r := bind(e, id, k.Text())
		if r.Status != 201 && r.Status != 200 {
			t.Fatalf("bind: %d %s", r.Status, r.Body)
		}
		p, err := barcode.FromText(str(r.Map(t)["inspection_barcode"].(map[string]any)["payload"]))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	fd := func(p []byte, at time.Time, k dynamictest.Device) []byte {
		return k.Code(t, p, at, int(dynamic.DefaultWindow/time.Second))
	}
	phone, old, moved := dynamictest.NewDevice(t), dynamictest.NewDevice(t), dynamictest.NewDevice(t)
	live := bound(monthly(), phone)
	movedID := monthly()
	left := bound(movedID, old)
	e.Must(200, apitest.Req{Method: "POST", Path: "/v9/ticketing/tickets/" + movedID + "/device_move.json", Key: e.LiveKey})
	bound(movedID, moved)
	googleID := monthly()
	link := string(e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + googleID + ".json"}).Body)
	claims, _ := googleJWT(t, link)
	rb := claims["payload"].(map[string]any)["transitObjects"].([]any)[0].(map[string]any)["rotatingBarcode"].(map[string]any)
	ahead, ago := now.Add(150*time.Second), now.Add(-time.Hour)
	return []inspectCode{{Name: "phone's live code", Want: "valid", Kind: "dynamic", bytes: fd(live, ahead, phone)},
		{Name: "phone's code of an hour ago", Want: "copied", Kind: "dynamic", bytes: fd(live, ago, phone)},
		{Name: "code of the phone the ticket left", Want: "replaced", Kind: "dynamic", bytes: fd(left, ahead, old)},
		{Name: "Google Wallet's live code", Want: "valid", Kind: "rotating", bytes: showRotating(t, rb, ahead)},
		{Name: "Google Wallet's code of an hour ago", Want: "copied", Kind: "rotating", bytes: showRotating(t, rb, ago)}}
}

// inspectBounds are the verdicts at the edges of the live moving codes'
// windows: start − tolerance (valid) and a second before (copied), end +
// tolerance (copied) and a second before (valid).
func inspectBounds(t *testing.T, codes []inspectCode) []inspectBound {
	t.Helper()
	tol := int64(inspectTolerance / time.Second)
	var out []inspectBound
	for _, c := range codes {
		if c.Want != "valid" || c.Kind == "" || c.Kind == "static" {
			continue
		}
		w := int64(dynamic.DefaultWindow / time.Second)
		var start int64
		if c.Kind == "dynamic" {
			bc, err := dynamic.Parse(c.bytes)
			if err != nil {
				t.Fatal(err)
			}
			start = int64(bc.Window) * w
		} else {
			r, err := dynamic.ParseRotating(c.bytes)
			if err != nil {
				t.Fatal(err)
			}
			start = r.Seconds / w * w
		}
		for _, b := range []struct {
			edge string
			at   int64
			want string
		}{{"start − tolerance", start - tol, "valid"}, {"a second before start − tolerance", start - tol - 1, "copied"},
			{"a second before end + tolerance", start + w + tol - 1, "valid"}, {"end + tolerance", start + w + tol, "copied"}} {
			out = append(out, inspectBound{Name: c.Name + " at " + b.edge, Payload: c.Payload, At: b.at, Want: b.want})
		}
	}
	return out
}

// berlinMonth is the start of the month add months after now's, in
// Berlin (the monthly product starts on the first of a month), as
// ticketFrom takes it.
func berlinMonth(now time.Time, add int) string {
	loc, _ := time.LoadLocation("Europe/Berlin")
	l := now.In(loc)
	return time.Date(l.Year(), l.Month()+time.Month(add), 1, 0, 0, 0, 0, loc).Format("2006-01-02T15:04:05-0700")
}

// ticketFrom orders the monthly product with key (on testClock unless
// "") and activates it from start (RFC 3339 with a numeric zone, no colon).
func ticketFrom(t *testing.T, e *apitest.Env, key, testClock, start string) (order map[string]any, ticketID string, ticket map[string]any) {
	t.Helper()
	ids := productIDs(t, e)
	body := map[string]any{"product_ids": []string{ids["month/adult"]}}
	if testClock != "" {
		body["test_clock"] = testClock
	}
	order = e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: key, Body: body}).Map(t)
	coupon := order["coupons"].([]any)[0].(map[string]any)["id"].(string)
	act := `{"identification_medium":` + maxMedium + `,"tariff_settings":{"german_postal_code":"12345"},"activation_start_datetime":"` + start + `"}`
	ticketID = e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/coupons/" + coupon + "/activate.json", Body: act}).Map(t)["ticket_id"].(string)
	ticket = e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + ticketID + ".json"}).Map(t)
	return order, ticketID, ticket
}

// modules is a code's symbol: size × size modules, dark or light.
type modules struct {
	size int
	dark func(x, y int) bool
}

// codeModules is c's symbol: an Aztec code (farebox's barcode.Aztec) of
// the bytes, or for a Google Wallet rotating code the QR code Google
// shows (rotatingBarcode.type QR_CODE) of its text.
func codeModules(t *testing.T, c inspectCode) modules {
	t.Helper()
	if c.Kind == "rotating" {
		q, err := qr.Encode(string(c.bytes), qr.M, qr.Auto)
		if err != nil {
			t.Fatal(err)
		}
		b := q.Bounds()
		return modules{size: b.Dx(), dark: func(x, y int) bool { return gray(q, b.Min.X+x, b.Min.Y+y) < 128 }}
	}
	m, err := barcode.Aztec(c.bytes)
	if err != nil {
		t.Fatal(err)
	}
	return modules{size: m.Size, dark: m.At}
}

// y4mOfCodes is a YUV4MPEG2 video (10 frames a second, 4:2:0) that shows
// each code (at most 6 pixels a module, with a quiet zone of 4 modules, as
// large as fits) for 1.2 s on white, then 0.4 s of white, in turn;
// Chromium's fake camera plays it in a loop.
func y4mOfCodes(codes []modules, w, h int) []byte {
	var out bytes.Buffer
	out.WriteString("YUV4MPEG2 W" + itoa(w) + " H" + itoa(h) + " F10:1 Ip A1:1 C420jpeg\n")
	chroma := bytes.Repeat([]byte{128}, 2*(w/2)*(h/2))
	blank := bytes.Repeat([]byte{235}, w*h)
	frame := func(y []byte) { out.WriteString("FRAME\n"); out.Write(y); out.Write(chroma) }
	for _, c := range codes {
		scale := max(1, min(6, min(w, h)/(c.size+8)))
		side := c.size * scale
		x0, y0 := (w-side)/2, (h-side)/2
		y := append([]byte(nil), blank...)
		for py := 0; py < side; py++ {
			for px := 0; px < side; px++ {
				if c.dark(px/scale, py/scale) {
					y[(y0+py)*w+x0+px] = 16
				}
			}
		}
		for range 12 {
			frame(y)
		}
		for range 4 {
			frame(blank)
		}
	}
	return out.Bytes()
}

func gray(img image.Image, x, y int) uint32 {
	r, _, _, _ := img.At(x, y).RGBA()
	return r >> 8
}

func itoa(n int) string {
	b := []byte{}
	for n >= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(append([]byte{byte('0' + n)}, b...))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func maxOf(xs []float64) (m float64) {
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
