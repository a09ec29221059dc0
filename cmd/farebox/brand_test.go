package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/testtool"
)

// TestServeBrandSettings: a bad brand stops `farebox serve` before it opens
// anything, naming each bad flag and why.
func TestServeBrandSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeImg := func(name string, w, h int) string { return writeBlankPNG(t, dir, name, w, h) }
	notPNG := testtool.WriteFile(t, dir, "logo.jpg", []byte("\xff\xd8\xff\xe0 not a png"))
	for _, c := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"colours without an organisation", map[string]string{"FAREBOX_BRAND_BACKGROUND_COLOR": "#123456"},
			[]string{"--brand-organization: required"}},
		{"bad colour", map[string]string{"FAREBOX_BRAND_ORGANIZATION": "VMS", "FAREBOX_BRAND_BACKGROUND_COLOR": "green"},
			[]string{"--brand-background-color", `"green" is not a colour`}},
		{"unreadable text", map[string]string{"FAREBOX_BRAND_ORGANIZATION": "VMS", "FAREBOX_BRAND_BACKGROUND_COLOR": "#f0f0f0"},
			[]string{"--brand-foreground-color", "contrast of 1.14:1"}},
		{"small, non-square icon and a JPEG logo", map[string]string{"FAREBOX_BRAND_ORGANIZATION": "VMS",
			"FAREBOX_BRAND_ICON": writeImg("icon.png", 60, 60), "FAREBOX_BRAND_LOGO": notPNG},
			[]string{"--brand-icon", "60x60 pixels; at least 87x87", "--brand-logo", "is no PNG image"}},
		{"wide logo, oblong icon", map[string]string{"FAREBOX_BRAND_ORGANIZATION": "VMS",
			"FAREBOX_BRAND_ICON": writeImg("wide-icon.png", 100, 90), "FAREBOX_BRAND_LOGO": writeImg("wide.png", 600, 150)},
			[]string{"--brand-icon", "must be square", "--brand-logo", "at most 3.2 times as wide as high"}},
		{"missing file", map[string]string{"FAREBOX_BRAND_ORGANIZATION": "VMS", "FAREBOX_BRAND_LOGO": filepath.Join(dir, "nope.png")},
			[]string{"--brand-logo", "no such file"}},
	} {
		dataDir := serveStops(t, c.name, c.env, c.want...)
		if _, statErr := os.Stat(dataDir); statErr == nil {
			t.Errorf("%s: the data dir was created before the brand was checked", c.name)
		}
	}
}

// TestServeWithBrand: a brand set by environment reaches what `farebox
// serve` hands out: pass.json, the pass icon, ticket.properties.brand; the
// log names it instead of warning about the development brand.
func TestServeWithBrand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	img := func(name string, w, h int) string { return writeBlankPNG(t, dir, name, w, h) }
	env := map[string]string{"FAREBOX_DATA_DIR": t.TempDir(), "FAREBOX_BRAND_ORGANIZATION": "Verkehrsverbund Musterstadt",
		"FAREBOX_BRAND_OPERATOR": "Musterbus GmbH", "FAREBOX_BRAND_BACKGROUND_COLOR": "#142878",
		"FAREBOX_BRAND_ICON": img("icon.png", 300, 300), "FAREBOX_BRAND_LOGO": img("logo.png", 300, 150)}
	var created struct {
		APIKey string `json:"api_key"`
	}
	_ = json.Unmarshal([]byte(cli(t, env, "accounts", "create", "--create", "--name", "Brand GmbH", "--json")), &created)
	in := startServe(t, env)
	if logs := in.logs.String(); !strings.Contains(logs, "brand loaded") || strings.Contains(logs, "development brand") {
		t.Errorf("startup log: %s", logs)
	}
	ticketID := activateMonthly(t, httpCaller(t, in.addr), created.APIKey,
		`{"photo_id_lite":{"first_name":"Jürgen","last_name":"Müller","birth_date":"1979-12-31"}}`)
	call := httpCaller(t, in.addr)
	var ticket struct {
		Ticket struct {
			Properties struct {
				Brand map[string]any `json:"brand"`
			} `json:"properties"`
		} `json:"ticket"`
	}
	_ = json.Unmarshal(call("PATCH", "/v9/ticketing/tickets/"+ticketID+".json", "", ""), &ticket)
	if b := ticket.Ticket.Properties.Brand; b["organization"] != "Verkehrsverbund Musterstadt" || b["operator"] != "Musterbus GmbH" ||
		b["background"] != "#142878" || !strings.HasPrefix(b["logo_png"].(string), "data:image/png;base64,") {
		t.Errorf("ticket.properties.brand: %v", b)
	}
	pass := call("GET", "/v9/ticketing/passes/apple_wallet/"+ticketID+".pkpass", "", "")
	zr, err := zip.NewReader(bytes.NewReader(pass), int64(len(pass)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		files[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	var pj struct {
		OrganizationName, BackgroundColor string
	}
	_ = json.Unmarshal(files["pass.json"], &pj)
	icon, err := png.DecodeConfig(bytes.NewReader(files["icon@3x.png"]))
	if pj.OrganizationName != "Verkehrsverbund Musterstadt" || pj.BackgroundColor != "rgb(20, 40, 120)" || err != nil || icon.Width != 87 ||
		!strings.Contains(string(files["pass.json"]), `"value": "31.12.1979"`) || !strings.Contains(string(files["pass.json"]), "Musterbus GmbH") {
		t.Errorf("pass.json %s; icon@3x %+v %v", files["pass.json"], icon, err)
	}
}

// writeBlankPNG writes a transparent w×h PNG into dir and returns its path.
func writeBlankPNG(t *testing.T, dir, name string, w, h int) string {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// httpCaller returns a function that sends a request to the instance at
// addr (with a Bearer key when key is set) and fails the test on a status
// of 300 or more.
func httpCaller(t *testing.T, addr string) func(method, path, key, body string) []byte {
	return func(method, path, key, body string) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
		return b
	}
}

// activateMonthly orders Berlin's adult monthly product with apiKey and
// activates it for medium; it returns the ticket id.
func activateMonthly(t *testing.T, call func(method, path, key, body string) []byte, apiKey, medium string) string {
	t.Helper()
	var products []map[string]any
	_ = json.Unmarshal(call("GET", "/v2/products/search_by_city_name.json?city_name=Berlin", apiKey, ""), &products)
	var pid string
	for _, p := range products {
		if p["ticket_type"] == "month" && p["customer_type"] == "adult" {
			pid = p["id"].(string)
		}
	}
	var order struct {
		Coupons []struct{ ID string } `json:"coupons"`
	}
	_ = json.Unmarshal(call("POST", "/v9/ticketing/orders.json", apiKey, `{"product_ids":["`+pid+`"]}`), &order)
	var act struct {
		TicketID string `json:"ticket_id"`
	}
	_ = json.Unmarshal(call("POST", "/v9/ticketing/coupons/"+order.Coupons[0].ID+"/activate.json", "",
		`{"identification_medium":`+medium+`,"tariff_settings":{"german_postal_code":"10115"}}`), &act)
	return act.TicketID
}
