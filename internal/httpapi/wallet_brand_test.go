package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/wallet"
	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/wallet/google"
)

// writePNG writes a w×h PNG of one colour and returns its path.
func writePNG(t *testing.T, dir, name string, w, h int, c color.NRGBA) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	brandIconColor = color.NRGBA{200, 30, 40, 255}
	brandLogoColor = color.NRGBA{250, 200, 0, 255}
)

// testBrand is a configured brand with a 120×120 icon and a 480×150 logo.
func testBrand(t *testing.T) wallet.Brand {
	t.Helper()
	dir := t.TempDir()
	b, err := wallet.LoadBrand(wallet.BrandSettings{Organization: "Verkehrsverbund Musterstadt", Operator: "Musterstädtische Verkehrsbetriebe AG",
		Foreground: "#ffffff", Background: "rgb(20, 40, 120)", Label: "#dcdcfa",
		IconFile: writePNG(t, dir, "icon.png", 120, 120, brandIconColor), LogoFile: writePNG(t, dir, "logo.png", 480, 150, brandLogoColor)})
	if err != nil || b.Development {
		t.Fatalf("brand: %+v %v", b, err)
	}
	return b
}

// withBrand configures wallets (development credentials) with brand b and a
// Google logo URL, so the save link carries the transit class.
func withBrand(t *testing.T, b wallet.Brand) func(d *httpapi.Deps) {
	t.Helper()
	withWallets(t, true) // generates the shared development credentials
	ab, err := apple.NewBuilder(apple.Config{PassTypeID: "pass.org.farebox.test", TeamID: "FAREBOXTST", Credentials: walletCreds.apple, Brand: b})
	if err != nil {
		t.Fatal(err)
	}
	g, err := google.NewIssuer(google.Config{IssuerID: "3388000000022000001", Origins: []string{testOrigin}, Account: walletCreds.google,
		LogoURL: "https://tickets.example.org/logo.png", Brand: b})
	if err != nil {
		t.Fatal(err)
	}
	kr := walletKeyring(t)
	return func(d *httpapi.Deps) {
		d.Wallets = apitest.Wallets(d, wallets.Options{Inspection: kr, Apple: ab, Google: g, AdvertiseDevelopmentWallets: true, Brand: b})
	}
}

func decodePNG(t *testing.T, name string, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return img
}

// TestOperatorBrand: a configured brand reaches the .pkpass (pass.json names
// and colours, the operator, icon and logo files at Apple's sizes drawn from
// the configured images), the Google save link (class issuer and operator,
// colours) and the rendering engine's ticket.properties.brand; birth dates
// are German; a restored-away ticket is labelled replaced on both passes.
func TestOperatorBrand(t *testing.T) {
	t.Parallel()
	b := testBrand(t)
	apitest.ForEachEngine(t, apitest.Options{Configure: withBrand(t, b)}, func(t *testing.T, e *apitest.Env) {
		order, tid, ticket := activatedTicket(t, e, e.LiveKey)

		// Apple.
		r := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/apple_wallet/" + tid + ".pkpass"})
		files := unzipPass(t, r.Body)
		checkManifest(t, files)
		opensslVerify(t, files, walletCreds.apple.Root.Raw)
		var pj struct {
			OrganizationName, LogoText, ForegroundColor, BackgroundColor, LabelColor string
		}
		var p passJSON
		if json.Unmarshal(files["pass.json"], &pj) != nil || json.Unmarshal(files["pass.json"], &p) != nil {
			t.Fatal("pass.json")
		}
		if pj.OrganizationName != "Verkehrsverbund Musterstadt" || pj.LogoText != "Verkehrsverbund Musterstadt" ||
			pj.ForegroundColor != "rgb(255, 255, 255)" || pj.BackgroundColor != "rgb(20, 40, 120)" || pj.LabelColor != "rgb(220, 220, 250)" {
			t.Errorf("pass.json brand: %+v", pj)
		}
		if p.field("operator") != "Musterstädtische Verkehrsbetriebe AG" || p.field("birth_date") != "01.01.1990" {
			t.Errorf("operator %v, birth date %v", p.field("operator"), p.field("birth_date"))
		}
		for name, size := range map[string][2]int{"icon.png": {29, 29}, "icon@2x.png": {58, 58}, "icon@3x.png": {87, 87},
			"logo.png": {160, 50}, "logo@2x.png": {320, 100}, "logo@3x.png": {480, 150}} {
			img := decodePNG(t, name, files[name])
			want := brandIconColor
			if strings.HasPrefix(name, "logo") {
				want = brandLogoColor
			}
			c := color.NRGBAModel.Convert(img.At(img.Bounds().Dx()/2, img.Bounds().Dy()/2)).(color.NRGBA)
			if img.Bounds().Dx() != size[0] || img.Bounds().Dy() != size[1] || c != want {
				t.Errorf("%s: %dx%d, centre %v; want %dx%d of the configured image (%v)", name, img.Bounds().Dx(), img.Bounds().Dy(), c, size[0], size[1], want)
			}
		}

		// Google.
		link := string(e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + tid + ".json"}).Body)
		claims, _ := googleJWT(t, link)
		payload := claims["payload"].(map[string]any)
		class := payload["transitClasses"].([]any)[0].(map[string]any)
		operator := class["transitOperatorName"].(map[string]any)["defaultValue"].(map[string]any)["value"]
		obj := payload["transitObjects"].([]any)[0].(map[string]any)
		if class["issuerName"] != "Verkehrsverbund Musterstadt" || operator != "Musterstädtische Verkehrsbetriebe AG" ||
			class["hexBackgroundColor"] != "#142878" || obj["hexBackgroundColor"] != "#142878" {
			t.Errorf("Google class %v object colour %v", class, obj["hexBackgroundColor"])
		}
		if mods, _ := json.Marshal(obj["textModulesData"]); !strings.Contains(string(mods), `"body":"01.01.1990"`) {
			t.Errorf("Google birth date: %s", mods)
		}

		// The rendering engine's brand in ticket.properties.
		brand, _ := properties(ticket)["brand"].(map[string]any)
		if brand["organization"] != "Verkehrsverbund Musterstadt" || brand["operator"] != "Musterstädtische Verkehrsbetriebe AG" ||
			brand["background"] != "#142878" || brand["foreground"] != "#ffffff" {
			t.Errorf("ticket.properties.brand: %v", brand)
		}
		logo, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(str(brand["logo_png"]), "data:image/png;base64,"))
		if img := decodePNG(t, "logo_png", logo); err != nil || img.Bounds().Dy() != 100 || img.Bounds().Dx() != 320 {
			t.Errorf("engine logo %v (%v)", img.Bounds(), err)
		}

		// Restored away: "Ersetzt" on both passes.
		coupon := order["coupons"].([]any)[0].(map[string]any)["id"].(string)
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders/" + order["order_id"].(string) + "/restore.json", Key: e.LiveKey,
			Body: map[string]any{"restore_secret": order["restore_secret"], "coupon_ids": []string{coupon}}})
		if v := fetchPass(t, e, "/v9", tid); v.field("status") != "REPLACED_VALUE" {
			t.Errorf("restored-away pass status %v", v.field("status"))
		}
		if de := string(files["de.lproj/pass.strings"]); !strings.Contains(de, `"REPLACED_VALUE" = "Ersetzt";`) || strings.Contains(de, "Storniert") {
			t.Errorf("de pass.strings: %s", de)
		}
		link = string(e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + tid + ".json"}).Body)
		claims, _ = googleJWT(t, link)
		obj = claims["payload"].(map[string]any)["transitObjects"].([]any)[0].(map[string]any)
		if mods, _ := json.Marshal(obj["textModulesData"]); obj["state"] != "INACTIVE" || !strings.Contains(string(mods), "Ersetzt") {
			t.Errorf("restored-away Google object: %v %s", obj["state"], mods)
		}
	})
}
