package engines

import (
	"bytes"
	"encoding/json"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/engines/browsertest"
	"github.com/farebox/farebox/internal/testtool"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/uic"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/wallet"
)

// Schemas of the monthly product as the server stores them (full draft-04)
// and as iOS re-encodes them (only the keywords of client-contract 3.2/3.3).
const mediumSchema = `{
  "$schema": "http://json-schema.org/draft-04/schema#",
  "type": "object",
  "oneOf": [{"type": "object", "required": ["photo_id_lite"], "additionalProperties": false,
             "properties": {"photo_id_lite": {"$ref": "#/definitions/photo_id_lite"}}}],
  "definitions": {
    "photo_id_lite": {"type": "object", "title": "Photo-Id", "additionalProperties": false,
      "required": ["first_name", "last_name", "birth_date"],
      "properties": {
        "first_name": {"type": "string", "title": "Vorname", "minLength": 1, "maxLength": 100, "description": "as on the ID"},
        "last_name": {"type": "string", "title": "Nachname", "minLength": 1, "maxLength": 100},
        "birth_date": {"type": "string", "title": "Geburtsdatum", "format": "date"}}}}}`

const mediumSchemaIOS = `{
  "$schema": "http://json-schema.org/draft-04/schema#",
  "type": "object",
  "oneOf": [{"type": "object", "required": ["photo_id_lite"], "properties": {"photo_id_lite": {"$ref": "#/definitions/photo_id_lite"}}}],
  "definitions": {
    "photo_id_lite": {"type": "object", "title": "Photo-Id", "required": ["first_name", "last_name", "birth_date"],
      "properties": {
        "first_name": {"type": "string", "title": "Vorname", "minLength": 1, "maxLength": 100},
        "last_name": {"type": "string", "title": "Nachname", "minLength": 1, "maxLength": 100},
        "birth_date": {"type": "string", "title": "Geburtsdatum", "format": "date"}}}}}`

const tariffSchema = `{
  "$schema": "http://json-schema.org/draft-04/schema#",
  "type": "object",
  "allOf": [{"type": "object", "required": ["german_postal_code"], "additionalProperties": false,
             "properties": {"german_postal_code": {"$ref": "#/definitions/german_postal_code"}}}],
  "definitions": {"german_postal_code": {"type": "string", "title": "Postleitzahl (Wohnort)",
    "pattern": "^([0-9]{5}|not-germany)$", "examples": ["10115"]}}}`

const tariffSchemaIOS = `{
  "$schema": "http://json-schema.org/draft-04/schema#",
  "type": "object",
  "allOf": [{"type": "object", "required": ["german_postal_code"], "properties": {"german_postal_code": {"$ref": "#/definitions/german_postal_code"}}}],
  "definitions": {"german_postal_code": {"type": "string", "title": "Postleitzahl (Wohnort)", "pattern": "^([0-9]{5}|not-germany)$"}}}`

const multiSchema = `{
  "$schema": "http://json-schema.org/draft-04/schema#",
  "type": "object",
  "oneOf": [
    {"type": "object", "required": ["photo_id"], "properties": {"photo_id": {"$ref": "#/definitions/photo_id"}}},
    {"type": "object", "required": ["photo_id_name_only"], "properties": {"photo_id_name_only": {"$ref": "#/definitions/photo_id_name_only"}}}],
  "definitions": {
    "photo_id": {"type": "object", "title": "Ausweis", "required": ["first_name", "last_name", "birth_date", "id_type", "id_number"],
      "properties": {
        "first_name": {"type": "string", "title": "Vorname"},
        "last_name": {"type": "string", "title": "Nachname"},
        "birth_date": {"type": "string", "title": "Geburtsdatum", "format": "date"},
        "id_type": {"type": "string", "title": "Ausweisart", "enum": ["passport", "id_card"]},
        "id_number": {"type": "string", "title": "Ausweisnummer", "minLength": 6, "maxLength": 9}}},
    "photo_id_name_only": {"type": "object", "title": "Nur Name", "required": ["first_name", "last_name"],
      "properties": {
        "first_name": {"type": "string", "title": "Vorname"},
        "last_name": {"type": "string", "title": "Nachname", "pattern": "^[A-Za-z\\- ]+$"}}}}}`

// browserResults mirrors results.json of run.js.
type browserResults struct {
	Rendering map[string]struct {
		Returned   bool           `json:"returned"`
		First      map[string]any `json:"first"`
		ClockAfter string         `json:"clockAfter"`
	} `json:"rendering"`
	Identification map[string]map[string]json.RawMessage `json:"identification"`
	Requests       []string                              `json:"requests"`
	Errors         []string                              `json:"errors"`
}

type got struct {
	Medium *string  `json:"medium"`
	Tariff *string  `json:"tariff"`
	Errors []string `json:"errors"`
}

func runBrowser(t *testing.T, cfg map[string]any) (browserResults, string) {
	t.Helper()
	dir := t.TempDir()
	for name, e := range map[string]Engine{"rendering": RenderingEngine(), "identification": IdentificationView()} {
		p := filepath.Join(dir, name+".html")
		if err := os.WriteFile(p, e.HTML, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg[name] = p
	}
	var res browserResults
	out := browsertest.Run(t, "run.js", cfg, &res)
	return res, out
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestEnginesInChromium(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Browser)
	kr, tickets, claims := browserTickets(t)
	uicPayload := addUICTicket(t, tickets, claims["ios_live"])
	vdvPayload := addVDVTicket(t, tickets, claims["ios_live"])
	res, out := runBrowser(t, map[string]any{
		"tickets": tickets,
		"schemas": map[string]json.RawMessage{"medium": raw(mediumSchema), "mediumIOS": raw(mediumSchemaIOS),
			"tariff": raw(tariffSchema), "tariffIOS": raw(tariffSchemaIOS), "multi": raw(multiSchema)},
		"prefill": map[string]any{"photo_id_lite": map[string]string{"first_name": "Max", "last_name": "Mustermann", "birth_date": "1990-01-01"}},
	})
	if len(res.Requests) != 0 {
		t.Errorf("engines made network requests: %v", res.Requests)
	}
	if len(res.Errors) != 0 {
		t.Errorf("JavaScript errors: %v", res.Errors)
	}
	checkRendering(t, res, out, kr, claims)
	checkProfileBarcode(t, res, out, "ios_uic", uicPayload)
	checkProfileBarcode(t, res, out, "ios_vdv", vdvPayload)
	checkRevoked(t, res)
	checkDynamicBlank(t, res)
	checkBrand(t, res)
	checkIdentification(t, res)
}

// browserTickets builds the SDK re-encoded ticket shapes (client-contract 6.2).
func browserTickets(t *testing.T) (*barcode.Keyring, map[string]any, map[string]barcode.Claims) {
	k, _ := barcode.KeyFromSeed(5, bytes.Repeat([]byte{3}, 32))
	kr, _ := barcode.NewKeyring(k)
	now := time.Now().UTC().Truncate(time.Second)
	tickets, claims := map[string]any{}, map[string]barcode.Claims{}
	for _, v := range []struct {
		name, env, from, until string
		c                      barcode.Claims
	}{
		{"ios_live", "live", clock.Timestamp(now.Add(-time.Hour)), clock.Timestamp(now.Add(29 * 24 * time.Hour)), barcode.Claims{}},
		{"android_test", "test", clock.Timestamp(now.Add(-time.Hour)), clock.Timestamp(now.Add(29 * 24 * time.Hour)), barcode.Claims{}},
		{"ios_expired_offset", "live", "2025-06-01T00:00:00+0200", "2025-07-01T00:00:00+0200", barcode.Claims{}},
	} {
		from, _ := time.Parse("2006-01-02T15:04:05Z0700", v.from)
		until, _ := time.Parse("2006-01-02T15:04:05Z0700", v.until)
		c := barcode.Claims{TicketID: "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f", ProductID: "farebox-product-0a1b2c3d-4e5f-4a6b-9c8d-7e6f5a4b3c2d",
			ProductName: "Deutschlandticket", ValidFrom: from, ValidUntil: until, FirstName: "Max", LastName: "Mustermann",
			BirthDate: "1990-01-01", Environment: v.env}
		payload, _, err := barcode.SignWith(c, kr, 0)
		if err != nil {
			t.Fatal(err)
		}
		props, err := BarcodeProperties(payload)
		if err != nil {
			t.Fatal(err)
		}
		props["identification_medium"] = map[string]any{"photo_id_lite": map[string]string{"first_name": "Max", "last_name": "Mustermann", "birth_date": "1990-01-01"}}
		area := map[string]any{"id": "farebox-area-x", "type": "Feature",
			"properties": map[string]any{"city_name": "Berlin", "local_zone_name": "Deutschland"}}
		geometry := map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{13.0, 52.3}, {13.8, 52.3}, {13.8, 52.7}, {13.0, 52.3}}}}
		ticket := map[string]any{
			"id": c.TicketID, "coupon_id": "farebox-coupon-1", "environment": v.env,
			"valid_from": v.from, "valid_until": v.until, "ticket_created_at": v.from, "sold_at": v.from,
			"product": map[string]any{"id": c.ProductID, "area_id": "farebox-area-x", "currency": "EUR", "ticket_type": "month",
				"customer_type": "adult", "price_in_cents": 4900, "local_ticket_name": "Deutschlandticket",
				"duration_definition": "calendar_month", "local_validity_description": "Kalendermonat", "is_subscription": true},
			"ticket": map[string]any{"meta": map[string]any{"version": "1", "template": "farebox", "requires_engine": "1.0.0"}, "properties": props},
			"area":   area,
		}
		if strings.HasPrefix(v.name, "ios") {
			area["geojson"] = geometry
			ticket["createdAt"] = 786_000_000.25 // seconds since 2001, as iOS encodes Date
		} else {
			area["geometry"] = geometry
			ticket["createdAt"] = "Nov 21, 2026 6:00:00 AM"
			ticket["coupon_reactivation_key"] = nil
			ticket["wasReactivated"] = false
			ticket["ticket"].(map[string]any)["meta"].(map[string]any)["available_rendering_options"] = []string{"google_wallet"}
		}
		tickets[v.name], claims[v.name] = ticket, c
	}
	// A ticket whose properties carry no barcode (e.g. issued before barcodes existed).
	var bare map[string]any
	b, _ := json.Marshal(tickets["android_test"])
	_ = json.Unmarshal(b, &bare)
	props := bare["ticket"].(map[string]any)["properties"].(map[string]any)
	delete(props, PropBarcode)
	delete(props, PropBarcodePNG)
	bare["environment"] = "live"
	tickets["android_no_barcode"] = bare
	// Tickets that stopped being valid before their end, as the service sends
	// them (ticket.properties.revocation), in both SDK shapes.
	for name, src := range map[string]string{"ios_revoked": "ios_live", "android_restored": "android_test"} {
		var rt map[string]any
		b, _ := json.Marshal(tickets[src])
		_ = json.Unmarshal(b, &rt)
		kind, reason := "revoked", "Fahrgeld erstattet <refunded>"
		if name == "android_restored" {
			kind, reason = "restored", "replaced by the ticket of a restored coupon"
			rt["environment"] = "live"
		}
		props := rt["ticket"].(map[string]any)["properties"].(map[string]any)
		props["valid"] = false
		props["revocation"] = map[string]any{"kind": kind, "reason": reason, "revoked_at": clock.Timestamp(now)}
		tickets[name] = rt
	}
	// Tickets of a configured brand (ticket.properties.brand as the service
	// sends it), in both SDK shapes; the live ones above carry none and show
	// farebox's development brand.
	brand := wallet.Brand{Organization: "Verkehrsverbund Musterstadt", Operator: "Musterstädtische Verkehrsbetriebe AG",
		Foreground: wallet.Color{R: 255, G: 255, B: 255}, Background: wallet.Color{R: 20, G: 40, B: 120}, Label: wallet.Color{R: 220, G: 220, B: 250}}
	for name, src := range map[string]string{"ios_branded": "ios_live", "android_branded": "android_test"} {
		var bt map[string]any
		b, _ := json.Marshal(tickets[src])
		_ = json.Unmarshal(b, &bt)
		bt["environment"] = "live"
		bt["ticket"].(map[string]any)["properties"].(map[string]any)[PropBrand] = BrandProperty(brand, testLogoPNG(t))
		tickets[name] = bt
	}
	// A dynamic ticket (properties.device_binding) in a web view loaded with
	// an about:blank base, as the SDKs load the engine: no WebCrypto, no
	// IndexedDB, no origin to bind from.
	var dyn map[string]any
	b, _ = json.Marshal(tickets["android_test"])
	_ = json.Unmarshal(b, &dyn)
	dyn["environment"] = "live"
	dyn["ticket"].(map[string]any)["properties"].(map[string]any)[PropDeviceBinding] = DeviceBindingProperty("", claims["android_test"].TicketID, 30, false)
	tickets["android_dynamic_blank"] = dyn
	return kr, tickets, claims
}

// checkDynamicBlank: a dynamic ticket where the web view offers no key
// store says the live code cannot be made, shows neither a code nor the
// still payload (inspection refuses it), and binds nothing (no request:
// TestEnginesInChromium fails on any).
func checkDynamicBlank(t *testing.T, res browserResults) {
	r, ok := res.Rendering["android_dynamic_blank"]
	f := r.First
	if !ok || !r.Returned || f["binding"] != "unsupported" || f["bindingShown"] != true || f["barcodeShown"] != false ||
		f["barcodeMissingShown"] != false || !strings.Contains(f["bindingTitle"].(string), "cannot make the live code") ||
		f["passenger"] != "Max Mustermann" || f["error"] != "" {
		t.Errorf("dynamic ticket in an about:blank web view: %+v", r)
	}
}

// testLogoPNG is a 250×100 logo (BrandLogoPixels high).
func testLogoPNG(t *testing.T) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 250, BrandLogoPixels))
	for y := 0; y < BrandLogoPixels; y++ {
		for x := 0; x < 250; x++ {
			img.SetNRGBA(x, y, color.NRGBA{255, uint8(x), uint8(y), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkBrand: the configured brand's names, colours and logo are drawn; a
// ticket without properties.brand shows the development brand.
func checkBrand(t *testing.T, res browserResults) {
	for _, name := range []string{"ios_branded", "android_branded"} {
		r, ok := res.Rendering[name]
		f := r.First
		if !ok || !r.Returned || f["brandOrganization"] != "Verkehrsverbund Musterstadt" || f["brandOperator"] != "Musterstädtische Verkehrsbetriebe AG" ||
			f["brandLogoShown"] != true || f["brandLogoNaturalHeight"] != float64(BrandLogoPixels) ||
			f["bandBackground"] != "rgb(20, 40, 120)" || f["bandColor"] != "rgb(255, 255, 255)" || f["state"] != "valid" || f["birth"] != "01.01.1990" {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if f := res.Rendering["ios_live"].First; f["brandOrganization"] != "farebox" || f["brandOperator"] != "" || f["brandLogoShown"] != false ||
		f["bandBackground"] != "rgb(0, 92, 68)" {
		t.Errorf("development brand: %+v", f)
	}
}

// checkRevoked: a revoked or restored-away ticket is shown as invalid with
// its reason, and no barcode is drawn.
func checkRevoked(t *testing.T, res browserResults) {
	for name, want := range map[string][2]string{
		"ios_revoked":      {"UNGÜLTIG · REVOKED", "Grund · reason: Fahrgeld erstattet <refunded>"},
		"android_restored": {"ERSETZT · REPLACED", "Grund · reason: replaced by the ticket of a restored coupon"},
	} {
		r, ok := res.Rendering[name]
		f := r.First
		if !ok || !r.Returned || f["state"] != "revoked" || f["status"] != want[0] || f["revocation"] != want[1] ||
			f["barcodeShown"] != false || f["barcodeMissingShown"] != true || f["passenger"] != "Max Mustermann" || f["error"] != "" {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

func checkRendering(t *testing.T, res browserResults, out string, kr *barcode.Keyring, claims map[string]barcode.Claims) {
	if nb := res.Rendering["android_no_barcode"]; !nb.Returned || nb.First["barcodeShown"] != false ||
		nb.First["barcodeMissingShown"] != true || nb.First["passenger"] != "Max Mustermann" || nb.First["ribbonVisible"] != false {
		t.Errorf("ticket without barcode: %+v", nb)
	}
	for name, c := range claims {
		r, ok := res.Rendering[name]
		if !ok || !r.Returned {
			t.Errorf("%s: renderTicket did not return true", name)
			continue
		}
		f := r.First
		test := c.Environment == "test"
		wantState := "valid"
		if name == "ios_expired_offset" {
			wantState = "expired"
		}
		for k, want := range map[string]any{
			"product": "Deutschlandticket", "sub": "Kalendermonat", "passenger": "Max Mustermann", "birth": "01.01.1990",
			"area": "Deutschland (Berlin)", "reference": "T-4D5E6F", "state": wantState, "error": "",
			"ribbonVisible": test, "testNoteVisible": test, "barcodeShown": true, "barcodeMissingShown": false,
		} {
			if f[k] != want {
				t.Errorf("%s: %s = %#v, want %#v", name, k, f[k], want)
			}
		}
		if name == "ios_expired_offset" && f["validFrom"] != "So., 01.06.2025, 00:00" {
			t.Errorf("%s: +0200 offset shown as %v", name, f["validFrom"])
		}
		m, _ := barcode.Aztec(mustPayload(t, c, kr))
		if want := (m.Size + 2*BarcodeQuietModules) * BarcodeModulePixels; f["barcodeNaturalWidth"] != float64(want) {
			t.Errorf("%s: barcode image width %v, want %d (%d modules)", name, f["barcodeNaturalWidth"], want, m.Size)
		}
		if r.ClockAfter == f["clock"] || len(r.ClockAfter) != 8 {
			t.Errorf("%s: live clock did not advance: %v → %q", name, f["clock"], r.ClockAfter)
		}
		// The drawn barcode must scan back to a genuine payload.
		payload, err := browsertest.ScanScreenshot(t, filepath.Join(out, "rendering_"+name+"_barcode.png"))
		if err != nil {
			t.Errorf("%s: screenshot barcode unreadable: %v", name, err)
			continue
		}
		gotC, err := barcode.Verify(payload, kr)
		if err != nil || gotC.TicketID != c.TicketID || gotC.Environment != c.Environment {
			t.Errorf("%s: scanned payload: %v %+v", name, err, gotC)
		}
	}
}

// addUICTicket adds "ios_uic": ios_live with the barcode of the
// uic-918-3-uflex profile (a UIC 918.3 container, ~330 bytes, larger than
// farebox's payload) in ticket.properties; it returns the container.
func addUICTicket(t *testing.T, tickets map[string]any, c barcode.Claims) []byte {
	iss, err := uic.GenerateDevIssuer(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	container, err := uic.Issue(c, uic.Product{Number: 9999, Area: "Deutschland"}, iss, c.ValidFrom)
	if err != nil {
		t.Fatal(err)
	}
	addProfileTicket(t, tickets, "ios_uic", container)
	return container
}

// addVDVTicket adds "ios_vdv": ios_live with the barcode of the
// vdv-ka-static profile (~410 bytes, the largest profile) under a
// development PKI; it returns the barcode.
func addVDVTicket(t *testing.T, tickets map[string]any, c barcode.Claims) []byte {
	p, err := vdv.GenerateDevPKI(nil, c.ValidFrom)
	if err != nil {
		t.Fatal(err)
	}
	b, err := vdv.Issue(c, vdv.Product{Number: 9999, Area: "Deutschland", PriceCents: 5800, VATBP: 700}, p.Issuer, c.ValidFrom)
	if err != nil {
		t.Fatal(err)
	}
	addProfileTicket(t, tickets, "ios_vdv", b)
	return b
}

// addProfileTicket adds ticket name: ios_live with code in ticket.properties.
func addProfileTicket(t *testing.T, tickets map[string]any, name string, code []byte) {
	props, err := BarcodeProperties(code)
	if err != nil {
		t.Fatal(err)
	}
	var ut map[string]any
	b, _ := json.Marshal(tickets["ios_live"])
	_ = json.Unmarshal(b, &ut)
	p := ut["ticket"].(map[string]any)["properties"].(map[string]any)
	p[PropBarcode], p[PropBarcodePNG] = props[PropBarcode], props[PropBarcodePNG]
	tickets[name] = ut
}

// checkProfileBarcode: the engine draws a profile's code (UIC container,
// VDV barcode) at phone size, and the screenshot scans back to the very
// bytes.
func checkProfileBarcode(t *testing.T, res browserResults, out, name string, code []byte) {
	r, ok := res.Rendering[name]
	if f := r.First; !ok || !r.Returned || f["barcodeShown"] != true || f["passenger"] != "Max Mustermann" || f["error"] != "" {
		t.Errorf("%s: %+v", name, r)
	}
	m, _ := barcode.Aztec(code)
	if want := (m.Size + 2*BarcodeQuietModules) * BarcodeModulePixels; r.First["barcodeNaturalWidth"] != float64(want) {
		t.Errorf("%s: barcode image width %v, want %d (%d modules)", name, r.First["barcodeNaturalWidth"], want, m.Size)
	}
	got, err := browsertest.ScanScreenshot(t, filepath.Join(out, "rendering_"+name+"_barcode.png"))
	if err != nil || !bytes.Equal(got, code) {
		t.Errorf("%s: screenshot scans to %d bytes (%v), want the %d-byte code", name, len(got), err, len(code))
	}
}

func mustPayload(t *testing.T, c barcode.Claims, kr *barcode.Keyring) []byte {
	p, _, err := barcode.SignWith(c, kr, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func decodeGot(t *testing.T, m map[string]json.RawMessage, key string) got {
	t.Helper()
	var g got
	if err := json.Unmarshal(m[key], &g); err != nil {
		t.Fatalf("%s: %v (%s)", key, err, m[key])
	}
	return g
}

// serverValidator compiles a schema the way the server validates (draft-04,
// formats asserted).
func serverValidator(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	c.AssertFormat()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func serverAccepts(t *testing.T, s *jsonschema.Schema, v string) bool {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(v))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst) == nil
}

// wantJSON checks that s is a JSON string equal to want and that the
// server's validator accepts its inner object.
func wantJSON(t *testing.T, label string, s *string, want string, v *jsonschema.Schema, key string) {
	t.Helper()
	if s == nil {
		t.Errorf("%s: got null, want %s", label, want)
		return
	}
	var a, b any
	_ = json.Unmarshal([]byte(*s), &a)
	_ = json.Unmarshal([]byte(want), &b)
	if diff := cmp.Diff(b, a); diff != "" {
		t.Errorf("%s (-want +got):\n%s", label, diff)
	}
	inner, _ := json.Marshal(a.(map[string]any)[key])
	if v != nil && !serverAccepts(t, v, string(inner)) {
		t.Errorf("%s: the server schema rejects %s", label, inner)
	}
}
