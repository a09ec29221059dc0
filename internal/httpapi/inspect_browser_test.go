package httpapi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/barcode"
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
	Online         map[string]string // payload digest → verdict
	Offline        map[string]string
	OfflineAge     string
	PendingOffline int
	Debug          string
	Timings        []struct{ Verify, Total float64 }
	Fuzz           struct {
		Runs, Images, ImageBad int
		Bad                    []string
		Outcomes               map[string]int
		VerifyMs               float64
	}
}

// TestInspectorAppInChromium: the inspector app (/inspect) in Chromium
// with a fake camera playing a Y4M video of farebox's own barcode images
// of real tickets of a running server: valid, expired, not yet valid,
// revoked, and one altered (not genuine) each get their verdict; after the
// network is cut the app reloads from its service worker and still says
// "valid" from its cached data, keeping the check until it is back online,
// when it posts it. Sign-in and camera screens have no WCAG 2.1 AA
// violation. Random bytes, texts, clocks and images through the verifier
// and the decoder give a verdict each, never a throw. One browser, one
// video (SQLite: the API tests cover both engines).
func TestInspectorAppInChromium(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Browser)
	now := time.Now().UTC().Truncate(time.Second)
	e := apitest.New(t, store.SQLite, apitest.Options{Now: now, Configure: withWallets(t, false)})
	ctx := t.Context()
	inspector(t, e, "Kontrolle Chromium")
	if err := e.WebUsers.SetInspectorPassword(ctx, "Kontrolle Chromium", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	// The monthly product starts on the first of a month (Berlin).
	loc, _ := time.LoadLocation("Europe/Berlin")
	l := now.In(loc)
	month := func(add int) string {
		return time.Date(l.Year(), l.Month()+time.Month(add), 1, 0, 0, 0, 0, loc).Format("2006-01-02T15:04:05-0700")
	}
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
	if _, err := e.App.RevokeTicket(ctx, idempotency.Claim{}, revokedID, "Fahrgeld erstattet"); err != nil {
		t.Fatal(err)
	}
	_, _, otherT := ticketFrom(t, e, e.LiveKey, "", month(0))
	forged := ticketPayload(t, otherT)
	forged[bytes.Index(forged, []byte("Max"))] = 'W' // "Wax": the signature no longer holds

	type ticket struct {
		Name, Want, Digest, Payload string
		bytes                       []byte
	}
	tickets := []ticket{{Name: "valid", Want: "valid", bytes: ticketPayload(t, validT)}, {Name: "expired", Want: "expired", bytes: ticketPayload(t, expiredT)},
		{Name: "not yet", Want: "not_yet_valid", bytes: ticketPayload(t, notYetT)}, {Name: "revoked", Want: "revoked", bytes: ticketPayload(t, revokedT)},
		{Name: "altered", Want: "not_genuine", bytes: forged}}
	var codes [][]byte
	for i := range tickets {
		sum := sha256.Sum256(tickets[i].bytes)
		tickets[i].Digest, tickets[i].Payload = hex.EncodeToString(sum[:]), barcode.Text(tickets[i].bytes)
		codes = append(codes, tickets[i].bytes)
	}
	video := filepath.Join(t.TempDir(), "tickets.y4m")
	if err := os.WriteFile(video, y4mOfCodes(t, codes, 640, 480), 0o644); err != nil {
		t.Fatal(err)
	}
	var res inspectResults
	browsertest.Run(t, "inspect.js", map[string]any{"base": e.URL, "name": "Kontrolle Chromium", "password": "correct horse battery",
		"tickets": tickets, "offline": []string{tickets[0].Digest}, "lang": "de",
		"chromiumArgs": []string{"--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream", "--use-file-for-fake-video-capture=" + video}}, &res)
	for _, msg := range res.Errors {
		t.Error(msg)
	}
	checkBrowserPages(t, res.Pages, []string{"inspect-signin-de", "inspect-camera-de"}, func(string) bool { return true })
	if res.WrongPassword != "Name oder Passwort ist falsch." {
		t.Errorf("a wrong password showed %q", res.WrongPassword)
	}
	for _, tk := range tickets {
		if got := res.Online[tk.Digest]; got != tk.Want {
			t.Errorf("%s ticket: verdict %q online, want %q (%s)", tk.Name, got, tk.Want, res.Debug)
		}
	}
	if got := res.Offline[tickets[0].Digest]; got != "valid" {
		t.Errorf("valid ticket with the network cut: %q (data: %s)", got, res.OfflineAge)
	}
	if res.PendingOffline == 0 {
		t.Error("the offline check was not kept on the device")
	}
	if n := inspectionRows(t, e); n < len(tickets)+1 {
		t.Errorf("%d inspection records posted, want at least %d (each online check and the offline one)", n, len(tickets)+1)
	}
	if len(res.Fuzz.Bad) > 0 || res.Fuzz.Runs != 3000 || res.Fuzz.ImageBad > 0 {
		t.Errorf("fuzz: %d runs, bad %v, images %d (%d threw)", res.Fuzz.Runs, res.Fuzz.Bad, res.Fuzz.Images, res.Fuzz.ImageBad)
	}
	var total, verify []float64
	for _, x := range res.Timings {
		total, verify = append(total, x.Total), append(verify, x.Verify)
	}
	t.Logf("frame to verdict (decode + verify + screen), median %.1f ms, max %.1f ms over %d codes; verification alone %.2f ms per barcode (200 runs); fuzz outcomes %v",
		median(total), maxOf(total), len(total), res.Fuzz.VerifyMs, res.Fuzz.Outcomes)
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

// y4mOfCodes is a YUV4MPEG2 video (10 frames a second, 4:2:0) that shows
// each code's Aztec image (farebox's barcode.PNG) for 1.2 s on white,
// then 0.4 s of white, in turn; Chromium's fake camera plays it in a loop.
func y4mOfCodes(t *testing.T, codes [][]byte, w, h int) []byte {
	t.Helper()
	var out bytes.Buffer
	out.WriteString("YUV4MPEG2 W" + itoa(w) + " H" + itoa(h) + " F10:1 Ip A1:1 C420jpeg\n")
	chroma := bytes.Repeat([]byte{128}, 2*(w/2)*(h/2))
	blank := bytes.Repeat([]byte{235}, w*h)
	frame := func(y []byte) { out.WriteString("FRAME\n"); out.Write(y); out.Write(chroma) }
	for _, c := range codes {
		pngBytes, err := barcode.PNG(c, 6, 4)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(pngBytes))
		if err != nil {
			t.Fatal(err)
		}
		y := append([]byte(nil), blank...)
		b := img.Bounds()
		x0, y0 := (w-b.Dx())/2, (h-b.Dy())/2
		for py := 0; py < b.Dy() && y0+py < h; py++ {
			for px := 0; px < b.Dx() && x0+px < w; px++ {
				if gray(img, b.Min.X+px, b.Min.Y+py) < 128 {
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
