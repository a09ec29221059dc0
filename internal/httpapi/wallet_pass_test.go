package httpapi_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock"
)

func ts(t time.Time) string { return clock.Timestamp(t) }

// checkBarcodePNGGeometry: the served code has 4 px per module and a white
// quiet zone of 4 modules on every side, then the symbol's dark corner ring.
func checkBarcodePNGGeometry(t *testing.T, data, payload []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	m, err := barcode.Aztec(payload)
	if err != nil {
		t.Fatal(err)
	}
	const px, quiet = 4, 4
	side := (m.Size + 2*quiet) * px
	if img.Bounds() != image.Rect(0, 0, side, side) {
		t.Fatalf("barcode PNG %v, want %d×%d (%d modules)", img.Bounds(), side, side, m.Size)
	}
	dark := func(x, y int) bool { return color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y < 0x80 }
	for i := 0; i < side; i++ {
		for d := 0; d < quiet*px; d++ {
			if dark(i, d) || dark(d, i) || dark(i, side-1-d) || dark(side-1-d, i) {
				t.Fatalf("quiet zone has a dark pixel at offset %d/%d", i, d)
			}
		}
	}
	// Each module is a 4×4 block of one colour.
	for my := 0; my < m.Size; my++ {
		for mx := 0; mx < m.Size; mx++ {
			x0, y0 := (mx+quiet)*px, (my+quiet)*px
			for d := 0; d < px*px; d++ {
				if dark(x0+d%px, y0+d/px) != m.At(mx, my) {
					t.Fatalf("module (%d,%d) is not a uniform %d px block of the symbol", mx, my, px)
				}
			}
		}
	}
}

type passJSON struct {
	FormatVersion      int    `json:"formatVersion"`
	PassTypeIdentifier string `json:"passTypeIdentifier"`
	TeamIdentifier     string `json:"teamIdentifier"`
	SerialNumber       string `json:"serialNumber"`
	OrganizationName   string `json:"organizationName"`
	Description        string `json:"description"`
	ExpirationDate     string `json:"expirationDate"`
	RelevantDate       string `json:"relevantDate"`
	Voided             *bool  `json:"voided"`
	SharingProhibited  bool   `json:"sharingProhibited"`
	Barcodes           []struct {
		Format, Message, MessageEncoding, AltText string
	} `json:"barcodes"`
	BoardingPass *struct {
		TransitType                                                               string
		HeaderFields, PrimaryFields, SecondaryFields, AuxiliaryFields, BackFields []struct {
			Key   string `json:"key"`
			Label string `json:"label"`
			Value any    `json:"value"`
		}
	} `json:"boardingPass"`
}

// field finds a field value by key across all groups.
func (p passJSON) field(key string) any {
	bp := p.BoardingPass
	for _, g := range [][]struct {
		Key   string `json:"key"`
		Label string `json:"label"`
		Value any    `json:"value"`
	}{bp.HeaderFields, bp.PrimaryFields, bp.SecondaryFields, bp.AuxiliaryFields, bp.BackFields} {
		for _, f := range g {
			if f.Key == key {
				return f.Value
			}
		}
	}
	return nil
}

// fetchPass downloads and verifies a .pkpass as Wallet would and returns pass.json.
func fetchPass(t *testing.T, e *apitest.Env, version, tid string) passJSON {
	t.Helper()
	r := e.Must(200, apitest.Req{Method: "GET", Path: version + "/ticketing/passes/apple_wallet/" + tid + ".pkpass"})
	// Billed to the ticket's account.
	if rows := e.UsageRows(r.Header.Get("X-Request-Id")); len(rows) != 1 || rows[0].AccountID != e.AccountID ||
		rows[0].Endpoint != "GET "+version+"/ticketing/passes/apple_wallet/{ticket_id}.pkpass" {
		t.Errorf("usage rows %+v", rows)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/vnd.apple.pkpass" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	files := unzipPass(t, r.Body)
	for _, name := range []string{"pass.json", "manifest.json", "signature", "icon.png", "icon@2x.png", "icon@3x.png",
		"logo.png", "logo@2x.png", "logo@3x.png", "de.lproj/pass.strings", "en.lproj/pass.strings"} {
		if _, ok := files[name]; !ok {
			t.Errorf("pass lacks %s", name)
		}
	}
	checkManifest(t, files)
	opensslVerify(t, files, walletCreds.apple.Root.Raw)
	var p passJSON
	if err := json.Unmarshal(files["pass.json"], &p); err != nil {
		t.Fatalf("pass.json: %v", err)
	}
	return p
}

// TestApplePass: the pass of a real ticket, then voided after a restore.
func TestApplePass(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, true)}, func(t *testing.T, e *apitest.Env) {
		order, tid, ticket := activatedTicket(t, e, e.LiveKey)
		payload := ticketPayload(t, ticket)
		p := fetchPass(t, e, "/v9", tid)
		product := ticket["product"].(map[string]any)
		if p.FormatVersion != 1 || p.PassTypeIdentifier != "pass.org.farebox.test" || p.TeamIdentifier != "FAREBOXTST" ||
			p.SerialNumber != tid || p.OrganizationName == "" || p.Description == "" || !p.SharingProhibited {
			t.Errorf("pass.json header: %+v", p)
		}
		if p.ExpirationDate != ticket["valid_until"] || p.RelevantDate != ticket["valid_from"] || p.Voided != nil {
			t.Errorf("dates/voided: %s %s %v", p.ExpirationDate, p.RelevantDate, p.Voided)
		}
		if p.BoardingPass == nil || p.BoardingPass.TransitType != "PKTransitTypeGeneric" {
			t.Fatalf("boardingPass: %+v", p.BoardingPass)
		}
		for key, want := range map[string]any{"product": product["local_ticket_name"], "passenger": "Max Mustermann",
			"birth_date": "01.01.1990", "valid_from": ticket["valid_from"], "valid_until": ticket["valid_until"],
			"ticket_id": tid, "reference": "T-" + strings.ToUpper(tid[len(tid)-6:])} {
			if got := p.field(key); got != want {
				t.Errorf("field %s = %v, want %v", key, got, want)
			}
		}
		if p.field("status") != nil || p.field("environment") != nil {
			t.Error("a valid live pass shows a status or TEST marker")
		}
		if len(p.Barcodes) != 1 || p.Barcodes[0].Format != "PKBarcodeFormatAztec" || p.Barcodes[0].MessageEncoding != "iso-8859-1" {
			t.Fatalf("barcodes: %+v", p.Barcodes)
		}
		msg, err := barcode.FromLatin1(p.Barcodes[0].Message)
		if err != nil || !bytes.Equal(msg, payload) {
			t.Errorf("barcode message decodes to %x, want the ticket payload (%v)", msg, err)
		}

		// Restore the order's coupon: the old ticket's pass is voided and no longer offered.
		coupon := order["coupons"].([]any)[0].(map[string]any)["id"].(string)
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders/" + order["order_id"].(string) + "/restore.json", Key: e.LiveKey,
			Body: map[string]any{"restore_secret": order["restore_secret"], "coupon_ids": []string{coupon}}})
		old := e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + tid + ".json"}).Map(t)
		if old["valid"] != false || len(strs(old["ticket"].(map[string]any)["meta"].(map[string]any)["available_rendering_options"])) != 0 {
			t.Errorf("restored-away ticket: valid=%v options=%v", old["valid"], old["ticket"].(map[string]any)["meta"])
		}
		v := fetchPass(t, e, "/v6", tid)
		// Restored away, it is labelled replaced ("Ersetzt"), not cancelled.
		if v.Voided == nil || !*v.Voided || v.field("status") != "REPLACED_VALUE" {
			t.Errorf("restored-away pass not voided: %v %v", v.Voided, v.field("status"))
		}
		link := string(e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + tid + ".json"}).Body)
		claims, _ := googleJWT(t, link)
		obj := claims["payload"].(map[string]any)["transitObjects"].([]any)[0].(map[string]any)
		if obj["state"] != "INACTIVE" {
			t.Errorf("voided Google object state %v", obj["state"])
		}
	})
}

// TestGooglePass: the save link body, the redirect and the JWT.
func TestGooglePass(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, true)}, func(t *testing.T, e *apitest.Env) {
		_, tid, ticket := activatedTicket(t, e, e.LiveKey)
		r := e.Must(200, apitest.Req{Method: "GET", Path: "/v7/ticketing/passes/google_wallet/" + tid + ".json"})
		body := string(r.Body)
		if !strings.HasPrefix(body, "https://pay.google.com/gp/v/save/") || strings.ContainsAny(body, "\"\n\r {}") {
			t.Fatalf("body %q", body)
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("headers %v", r.Header)
		}
		claims, _ := googleJWT(t, body)
		// Android's parsing: split on "/save/", element [1] is the JWT, exactly.
		if jwtPart := strings.Split(body, "/save/")[1]; strings.Count(jwtPart, ".") != 2 || len(body) != len("https://pay.google.com/gp/v/save/")+len(jwtPart) {
			t.Errorf("JWT part %q", jwtPart)
		}
		if claims["iss"] != walletCreds.google.ClientEmail || claims["aud"] != "google" || claims["typ"] != "savetowallet" ||
			claims["iat"] != float64(e.Clock.Now().Unix()) {
			t.Errorf("claims %v", claims)
		}
		if o := strs(claims["origins"]); len(o) != 1 || o[0] != testOrigin {
			t.Errorf("origins %v", claims["origins"])
		}
		objs := claims["payload"].(map[string]any)["transitObjects"].([]any)
		obj := objs[0].(map[string]any)
		wantID := "3388000000022000001." + tid
		if len(objs) != 1 || obj["id"] != wantID || obj["classId"] != "3388000000022000001.farebox_ticket" ||
			obj["state"] != "ACTIVE" || obj["tripType"] != "ONE_WAY" || obj["passengerNames"] != "Max Mustermann" {
			t.Errorf("transit object %v", obj)
		}
		bc := obj["barcode"].(map[string]any)
		if bc["type"] != "AZTEC" || bc["value"] != barcode.Text(ticketPayload(t, ticket)) {
			t.Errorf("barcode %v", bc)
		}
		vti := obj["validTimeInterval"].(map[string]any)
		if vti["start"].(map[string]any)["date"] != ticket["valid_from"] || vti["end"].(map[string]any)["date"] != ticket["valid_until"] {
			t.Errorf("validTimeInterval %v", vti)
		}
		// The redirect carries the same link (the clock is fixed and RS256 is deterministic).
		for _, v := range []string{"/v6", "/v9"} {
			rr := e.Must(302, apitest.Req{Method: "GET", Path: v + "/ticketing/passes/google_wallet/" + tid})
			if loc := rr.Header.Get("Location"); loc != body || rr.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("%s redirect Location %q", v, loc)
			}
		}
		// Billed to the ticket's account.
		rows := e.UsageRows(r.Header.Get("X-Request-Id"))
		if len(rows) != 1 || rows[0].AccountID != e.AccountID || rows[0].Environment != "live" ||
			rows[0].Endpoint != "GET /v7/ticketing/passes/google_wallet/{ticket_id}.json" {
			t.Errorf("usage rows %+v", rows)
		}
	})
}
