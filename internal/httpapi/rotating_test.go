package httpapi_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/dynamic"
	"github.com/farebox/farebox/internal/wallet/google"
	"github.com/farebox/farebox/internal/wallet/google/googletest"
)

// testRotatingSecret is the service's rotating-barcode secret in these
// tests; inspection devices hold the same.
var testRotatingSecret = bytes.Repeat([]byte{0x42}, 32)

// showRotating is what Google Wallet shows at t for a rotatingBarcode as
// the API stores it: the valuePattern with {totp_timestamp_seconds} and
// {totp_value_0} replaced, the TOTP computed from totpDetails alone (the
// Base16 key, periodMillis, valueLength), as the phone does.
func showRotating(t *testing.T, rb map[string]any, at time.Time) []byte {
	t.Helper()
	td := rb["totpDetails"].(map[string]any)
	p0 := td["parameters"].([]any)[0].(map[string]any)
	key, err := hex.DecodeString(str(p0["key"]))
	period, err2 := strconv.Atoi(str(td["periodMillis"]))
	if err != nil || err2 != nil || td["algorithm"] != "TOTP_SHA1" {
		t.Fatalf("totpDetails %v", td)
	}
	v := strings.Replace(str(rb["valuePattern"]), "{totp_timestamp_seconds}", strconv.FormatInt(at.Unix(), 10), 1)
	return []byte(strings.Replace(v, "{totp_value_0}", dynamic.TOTP(key, at.Unix(), period/1000, int(p0["valueLength"].(float64))), 1))
}

// rotatingWalletOptions are walletOptions whose Google issuer holds
// testRotatingSecret: dynamic tickets' passes carry rotating codes (fat
// save links, no REST API).
func rotatingWalletOptions(t testing.TB) wallets.Options {
	t.Helper()
	o := walletOptions(t, false)
	g, err := google.NewIssuer(google.Config{IssuerID: "3388000000022000001", Origins: []string{testOrigin}, Account: walletCreds.google,
		RotatingSecret: testRotatingSecret})
	if err != nil {
		t.Fatal(err)
	}
	o.Google = g
	return o
}

// checkRotatingPass: the object's rotatingBarcode passes the stand-in's
// checks of Google's fields, has no still barcode, moves with the ticket's
// window, and its codes pass offline inspection with the keys and the
// rotating secret only while their window is current.
func checkRotatingPass(t *testing.T, e *apitest.Env, o map[string]any, tid string) {
	t.Helper()
	if err := googletest.CheckObject(o); err != nil {
		t.Fatalf("Google would refuse the object: %v", err)
	}
	rb, ok := o["rotatingBarcode"].(map[string]any)
	if !ok || o["barcode"] != nil {
		t.Fatalf("dynamic ticket's object: barcode %v rotatingBarcode %v", o["barcode"], o["rotatingBarcode"])
	}
	td := rb["totpDetails"].(map[string]any)
	if rb["type"] != "QR_CODE" || td["periodMillis"] != "30000" || !strings.HasPrefix(str(rb["valuePattern"]), barcode.RotatingPrefix) || str(rb["alternateText"]) == "" {
		t.Errorf("rotatingBarcode %v", rb)
	}
	kr, err := barcode.ParseKeySet(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body)
	if err != nil {
		t.Fatal(err)
	}
	now := e.Clock.Now()
	code := showRotating(t, rb, now)
	if rep := dynamic.InspectRotating(code, kr, testRotatingSecret, now, dynamic.Options{}); !rep.Acceptable(false) || rep.Claims.TicketID != tid {
		t.Errorf("the pass's live code: %s", rep)
	}
	if rep := dynamic.InspectRotating(code, kr, testRotatingSecret, now.Add(2*time.Minute), dynamic.Options{}); rep.Acceptable(false) || !strings.Contains(rep.Copied, "ago") {
		t.Errorf("a screenshot of the pass two minutes later: %s", rep)
	}
	if rep := dynamic.InspectRotating(code, kr, bytes.Repeat([]byte{1}, 32), now, dynamic.Options{}); rep.Acceptable(false) {
		t.Errorf("another service's secret accepted the code: %s", rep)
	}
}

// TestRotatingGooglePass: the Google pass of a dynamic ticket carries
// Google's rotating barcode (TOTP, the ticket's window), in the fat save
// JWT and in the object inserted through the (stand-in) REST API; a static
// ticket keeps its still barcode; the Apple pass of a dynamic ticket stays
// still and says on its back that it does not count at inspection. Both
// engines.
func TestRotatingGooglePass(t *testing.T) {
	t.Parallel()
	opts := func(g *googleAPI) wallets.Options {
		o := rotatingWalletOptions(t)
		if g != nil {
			var err error
			if o.Google, err = google.NewIssuer(google.Config{IssuerID: "3388000000022000001", Origins: []string{testOrigin},
				LogoURL: "https://tickets.example.org/logo.png", Account: g.account, RotatingSecret: testRotatingSecret}); err != nil {
				t.Fatal(err)
			}
			o.GoogleAPI = g.client
		}
		return o
	}
	if _, err := google.NewIssuer(google.Config{IssuerID: "1", Account: walletCreds.google, RotatingSecret: []byte("short")}); err == nil {
		t.Error("a 5-byte rotating secret was accepted")
	}
	tickets := func(t *testing.T, e *apitest.Env) (dyn, static string) {
		ids := productIDs(t, e)
		makeDynamic(t, e, ids["single/adult"])
		o := order(t, e, e.LiveKey, ids["single/adult"], ids["day/adult"])
		m := map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01")}
		return mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), m), mustActivate(t, e, "v9", str(o.Coupons[1]["id"]), m)
	}
	apitest.ForEachEngine(t, apitest.Options{Configure: withWalletOptions(opts(nil))}, func(t *testing.T, e *apitest.Env) {
		dyn, static := tickets(t, e)
		link := string(e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + dyn + ".json"}).Body)
		claims, _ := googleJWT(t, link)
		o := claims["payload"].(map[string]any)["transitObjects"].([]any)[0].(map[string]any)
		checkRotatingPass(t, e, o, dyn)

		link = string(e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + static + ".json"}).Body)
		claims, _ = googleJWT(t, link)
		so := claims["payload"].(map[string]any)["transitObjects"].([]any)[0].(map[string]any)
		if so["rotatingBarcode"] != nil || so["barcode"] == nil || googletest.CheckObject(so) != nil {
			t.Errorf("static ticket's object: %v %v", so["barcode"], so["rotatingBarcode"])
		}

		for id, want := range map[string]bool{dyn: true, static: false} {
			files := unzipPass(t, e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/apple_wallet/" + id + ".pkpass"}).Body)
			var pass struct {
				Barcodes []map[string]any `json:"barcodes"`
				Ticket   struct {
					BackFields []map[string]any `json:"backFields"`
				} `json:"eventTicket"`
			}
			_ = json.Unmarshal(files["pass.json"], &pass)
			raw := string(files["pass.json"])
			if got := strings.Contains(raw, `"STILL_CODE_TEXT"`); got != want || len(pass.Barcodes) != 1 {
				t.Errorf("Apple pass of %s: still-code note %v, want %v; barcodes %d", id, got, want, len(pass.Barcodes))
			}
			if want && !strings.Contains(string(files["de.lproj/pass.strings"]), "gilt nicht bei der Kontrolle") {
				t.Error("the German note is missing")
			}
		}
	})
	forEachEngineWithGoogle(t, opts, func(t *testing.T, e *apitest.Env, g *googleAPI) {
		dyn, _ := tickets(t, e)
		e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + dyn + ".json"})
		o := g.srv.Object(g.issuer.ObjectID(dyn))
		if o == nil {
			t.Fatal("the object was not inserted")
		}
		checkRotatingPass(t, e, o, dyn)
	})
}
