package engines

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"image/png"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
)

// TestSelfContained rejects anything that would make the web view fetch
// from the network or resolve a relative URL against about:blank. The one
// exception is the rendering engine's bind call of a dynamic ticket
// (docs/barcodes.md): one fetch, which its policy lets reach only the
// engine's own origin or https (connect-src), and nothing else.
func TestSelfContained(t *testing.T) {
	attr := regexp.MustCompile(`(?i)<[a-z][^<>]*?\s(src|href|action|srcset|poster)\s*=\s*["']?([^"'\s>]*)`)
	cssURL := regexp.MustCompile(`(?i)url\(\s*["']?([^"')]*)`)
	scripts := regexp.MustCompile(`(?s)<script>.*?</script>`) // CSS url() is looked for outside them
	for _, e := range All() {
		html := string(e.HTML)
		for _, m := range attr.FindAllStringSubmatch(html, -1) {
			if !strings.HasPrefix(m[2], "data:") {
				t.Errorf("%s: %s=%q is not inline", e.Name, m[1], m[2])
			}
		}
		for _, m := range cssURL.FindAllStringSubmatch(scripts.ReplaceAllString(html, ""), -1) {
			if !strings.HasPrefix(m[1], "data:") {
				t.Errorf("%s: url(%q) is not inline", e.Name, m[1])
			}
		}
		for _, bad := range []string{"@import", "<link", "<iframe", "XMLHttpRequest", "import(", "<base", "{{VERSION}}", "{{AZTEC_JS}}",
			"WebSocket", "EventSource", "sendBeacon"} {
			if strings.Contains(html, bad) {
				t.Errorf("%s contains %q", e.Name, bad)
			}
		}
		csp := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(html)
		if csp == nil || !strings.HasPrefix(csp[1], "default-src 'none';") {
			t.Errorf("%s lacks the no-network Content-Security-Policy", e.Name)
		}
		fetches, connect := strings.Count(html, "fetch("), csp != nil && strings.Contains(csp[1], "connect-src")
		if e.Name == RenderingEngineName {
			if fetches != 1 || csp == nil || !strings.HasSuffix(csp[1], "; connect-src 'self' https:") {
				t.Errorf("rendering engine: %d fetch calls, policy %q; want the bind call only", fetches, csp)
			}
		} else if fetches != 0 || connect {
			t.Errorf("%s: %d fetch calls, connect-src %v", e.Name, fetches, connect)
		}
		if !strings.Contains(html, `<meta name="farebox-engine" content="`+e.Name+" "+e.Version+`">`) {
			t.Errorf("%s does not name its version", e.Name)
		}
	}
	for _, id := range []string{`id="submit_activate_button"`, `id="close_identification_form_button"`,
		"window.renderIdentificationView", "window.getIdentificationMedium", "window.getTariffSettings"} {
		if !bytes.Contains(IdentificationView().HTML, []byte(id)) {
			t.Errorf("identification view lacks %s", id)
		}
	}
	if !bytes.Contains(RenderingEngine().HTML, []byte("window.renderTicket")) {
		t.Error("rendering engine lacks window.renderTicket")
	}
	// The Aztec encoder is inlined into the rendering engine, whole, and only there.
	if !bytes.Contains(RenderingEngine().HTML, bytes.TrimSpace(aztecJS)) || bytes.Contains(IdentificationView().HTML, []byte("fareboxAztec")) {
		t.Error("the Aztec encoder is not inlined into the rendering engine alone")
	}
}

// TestVersionsRecorded enforces the bump rule: versions.txt lists every
// released version of each engine with the SHA-256 of its document, in
// ascending order; the current document must match the last line of its
// engine. Changing an engine therefore needs a new version and a new line.
func TestVersionsRecorded(t *testing.T) {
	f, err := os.Open("versions.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	last := map[string][2]string{}
	lastNum := map[string][3]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) != 3 || len(fs[2]) != 64 {
			t.Fatalf("bad line %q", line)
		}
		a, b, c, err := parseVersion(fs[1])
		if err != nil {
			t.Fatal(err)
		}
		if p, seen := lastNum[fs[0]]; seen && !newer([3]int{a, b, c}, p) {
			t.Errorf("%s %s is not newer than the line before", fs[0], fs[1])
		}
		lastNum[fs[0]] = [3]int{a, b, c}
		last[fs[0]] = [2]string{fs[1], fs[2]}
	}
	for _, e := range All() {
		rec, ok := last[e.Name]
		switch {
		case !ok:
			t.Errorf("%s: not in versions.txt", e.Name)
		case rec[0] != e.Version:
			t.Errorf("%s: version %s, but versions.txt ends at %s", e.Name, e.Version, rec[0])
		case rec[1] != e.SHA256():
			t.Errorf("%s %s changed (sha256 %s); bump the version and append a line to versions.txt", e.Name, e.Version, e.SHA256())
		}
	}
}

func newer(a, b [3]int) bool {
	for i := range 3 {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return false
}

func TestLocationAndResolve(t *testing.T) {
	e := RenderingEngine()
	if got := e.Location("/v9"); got != "/v9/ticketing/rendering_engine/"+e.Path()+"?inline=inline" {
		t.Errorf("Location %q", got)
	}
	// iOS turns the part between /rendering_engine/ and ? into the engine code.
	loc := IdentificationView().Location("/v6/")
	code := strings.ReplaceAll(strings.Split(strings.SplitN(loc, "/identification_view/", 2)[1], "?")[0], "/", ".")
	if code != IdentificationView().Version || len(strings.Split(code, ".")) != 3 {
		t.Errorf("engine code from %q is %q", loc, code)
	}
	for _, c := range []struct {
		name           string
		seg            []string
		redirect, okay bool
	}{
		{RenderingEngineName, []string{"1"}, true, true},
		{RenderingEngineName, strings.Split(e.Path(), "/"), false, true},
		{IdentificationViewName, []string{"1"}, true, true},
		{RenderingEngineName, []string{"2"}, true, false},
		{RenderingEngineName, []string{"1", "0"}, false, false},
		{RenderingEngineName, []string{"0", "9", "9"}, false, false},
		{"other", []string{"1"}, false, false},
	} {
		got, redirect, ok := Resolve(c.name, c.seg)
		if redirect != c.redirect || ok != c.okay || (ok && got.Name != c.name) {
			t.Errorf("Resolve(%s, %v) = %v %v", c.name, c.seg, redirect, ok)
		}
	}
	for _, bad := range []string{"1.0", "1.0.0.0", "1.a.0", "01.0.0", "-1.0.0"} {
		if _, _, _, err := parseVersion(bad); err == nil {
			t.Errorf("version %q accepted", bad)
		}
	}
}

func TestBarcodeProperties(t *testing.T) {
	k, _ := barcode.KeyFromSeed(1, bytes.Repeat([]byte{1}, 32))
	kr, _ := barcode.NewKeyring(k)
	p, _, err := barcode.SignWith(barcode.Claims{TicketID: "t1", ValidFrom: timeAt(1), ValidUntil: timeAt(2), Environment: "live"}, kr, 0)
	if err != nil {
		t.Fatal(err)
	}
	props, err := BarcodeProperties(p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(props)
	var back struct {
		Barcode BarcodeProperty `json:"inspection_barcode"`
		PNG     string          `json:"inspection_barcode_png"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Barcode.Format != "aztec" || back.Barcode.Encoding != "base64url" {
		t.Errorf("property %+v", back.Barcode)
	}
	if got, err := barcode.FromText(back.Barcode.Payload); err != nil || !bytes.Equal(got, p) {
		t.Errorf("payload text: %v", err)
	}
	raw, ok := strings.CutPrefix(back.PNG, "data:image/png;base64,")
	img, err := base64.StdEncoding.DecodeString(raw)
	if !ok || err != nil {
		t.Fatalf("data URI: %v", err)
	}
	stored, _ := json.Marshal(map[string]any{"identification_medium": map[string]any{}, PropBarcode: props[PropBarcode]})
	if back, err := BarcodePayload(stored); err != nil || !bytes.Equal(back, p) {
		t.Errorf("BarcodePayload: %v", err)
	}
	if _, err := BarcodePayload([]byte(`{"identification_medium":{}}`)); err == nil {
		t.Error("BarcodePayload without a barcode succeeded")
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	m, _ := barcode.Aztec(p)
	side := (m.Size + 2*BarcodeQuietModules) * BarcodeModulePixels
	if err != nil || cfg.Width != side || cfg.Height != side || BarcodeModulePixels < 4 || BarcodeQuietModules < 4 {
		t.Errorf("PNG %dx%d, want %d (%d modules at %d px, quiet zone %d): %v", cfg.Width, cfg.Height, side, m.Size,
			BarcodeModulePixels, BarcodeQuietModules, err)
	}
	// The image as served is readable by itself (farebox inspect's reader).
	if got, err := barcode.ParseInput(img); err != nil || !bytes.Equal(got, p) {
		t.Errorf("the served PNG does not scan back: %v", err)
	}
}

func timeAt(h int) time.Time { return time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC) }

// SHA256 is the hex digest of HTML (recorded in versions.txt).
func (e Engine) SHA256() string {
	s := sha256.Sum256(e.HTML)
	return hex.EncodeToString(s[:])
}

// IdentificationView returns the identification view.
func IdentificationView() Engine { return all[1] }

// All returns both engines.
func All() []Engine { return append([]Engine(nil), all...) }
