package apple

import (
	"bytes"
	"encoding/asn1"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/smallstep/pkcs7"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/wallet"
)

const (
	testPassType = "pass.org.farebox.tickets"
	testTeam     = "FAREBOX123"
)

var devCreds Credentials

func TestMain(m *testing.M) {
	var err error
	devCreds, err = GenerateDevelopment(testPassType, testTeam, time.Now())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func testPass(t testing.TB, env string, voided bool) wallet.Pass {
	t.Helper()
	k, _ := barcode.KeyFromSeed(1, bytes.Repeat([]byte{7}, 32))
	kr, _ := barcode.NewKeyring(k)
	c := barcode.Claims{
		TicketID: "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f", ProductID: "farebox-product-0a1b2c3d-4e5f-4a6b-9c8d-7e6f5a4b3c2d",
		ProductName: "Deutschlandticket", ValidFrom: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		ValidUntil: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), FirstName: "Max", LastName: "Mustermann",
		BirthDate: "1990-01-01", Environment: env,
	}
	payload, _, err := barcode.SignWith(c, kr, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := wallet.NewPass(wallet.TicketView{
		TicketID: c.TicketID, ProductID: c.ProductID, ProductName: c.ProductName,
		ValidityDescription: "Kalendermonat", ZoneName: "Deutschland", CityName: "Berlin",
		ValidFrom: c.ValidFrom, ValidUntil: c.ValidUntil,
		Passenger:   wallet.Passenger{FirstName: "Max", LastName: "Mustermann", BirthDate: "1990-01-01"},
		Environment: env, Voided: voided, Barcode: payload,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testBuilder(t *testing.T) *Builder {
	t.Helper()
	b, err := NewBuilder(Config{PassTypeID: testPassType, TeamID: testTeam, Credentials: devCreds,
		Brand: wallet.Brand{Organization: "farebox Verkehrsverbund", Operator: "farebox Verkehrsbetriebe AG",
			Foreground: wallet.Color{R: 255, G: 255, B: 255}, Background: wallet.Color{G: 92, B: 68}, Label: wallet.Color{R: 196, G: 232, B: 214}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// unzipPass reads a .pkpass as Wallet does and checks the layout and manifest
// both ways. It returns the files.
func unzipPass(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	files := testtool.Pkpass(t, data)
	if err := testtool.PkpassManifest(files); err != nil {
		t.Fatal(err)
	}
	return files
}

// opensslVerify runs `openssl cms -verify` against the development root.
func opensslVerify(t *testing.T, files map[string][]byte) (string, error) {
	t.Helper()
	return testtool.VerifyCMS(t, files["signature"], files["manifest.json"], devCreds.Root.Raw)
}

func TestBuildVerifiesLikeWallet(t *testing.T) {
	b := testBuilder(t)
	p := testPass(t, barcode.EnvLive, false)
	data, err := b.Build(p)
	if err != nil {
		t.Fatal(err)
	}
	files := unzipPass(t, data)
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	want := []string{"de.lproj/pass.strings", "en.lproj/pass.strings", "icon.png", "icon@2x.png", "icon@3x.png",
		"logo.png", "logo@2x.png", "logo@3x.png", "manifest.json", "pass.json", "signature"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("files %v", names)
	}
	out, err := opensslVerify(t, files)
	if err != nil || !strings.Contains(out, "Verification successful") {
		t.Fatalf("openssl cms -verify: %v\n%s", err, out)
	}

	// CMS details: detached, signingTime, pass + WWDR certificates, signer ids.
	p7, err := pkcs7.Parse(files["signature"])
	if err != nil {
		t.Fatal(err)
	}
	if len(p7.Content) != 0 {
		t.Error("signature is not detached")
	}
	if len(p7.Certificates) < 2 {
		t.Errorf("%d certificates embedded", len(p7.Certificates))
	}
	var signingTime time.Time
	if err := p7.UnmarshalSignedAttribute(pkcs7.OIDAttributeSigningTime, &signingTime); err != nil {
		t.Fatalf("no signingTime: %v", err)
	}
	if signer := p7.GetOnlySigner(); signer == nil || !signer.Equal(devCreds.Certificate) ||
		signingTime.Before(signer.NotBefore) || signingTime.After(signer.NotAfter) {
		t.Error("signer certificate is not the pass certificate valid at signingTime")
	}
	p7.Content = files["manifest.json"]
	if err := p7.Verify(); err != nil {
		t.Errorf("pkcs7 verify: %v", err)
	}

	checkPassJSON(t, files["pass.json"], p)
	for _, n := range []struct {
		name string
		w, h int
	}{{"icon.png", 29, 29}, {"icon@2x.png", 58, 58}, {"icon@3x.png", 87, 87}, {"logo@3x.png", 150, 150}} {
		img, err := png.Decode(bytes.NewReader(files[n.name]))
		if err != nil || img.Bounds().Dx() != n.w || img.Bounds().Dy() != n.h {
			t.Errorf("%s: %v %v", n.name, err, img.Bounds())
		}
	}
	checkStrings(t, files)
}

var colorRE = regexp.MustCompile(`^rgb\(\d{1,3}, \d{1,3}, \d{1,3}\)$`)

func checkPassJSON(t *testing.T, raw []byte, p wallet.Pass) map[string]any {
	t.Helper()
	var pj map[string]any
	if err := json.Unmarshal(raw, &pj); err != nil {
		t.Fatal(err)
	}
	wantStr := map[string]string{
		"passTypeIdentifier": testPassType, "teamIdentifier": testTeam, "serialNumber": p.TicketID,
		"organizationName": "farebox Verkehrsverbund", "description": "PASS_DESCRIPTION",
		"expirationDate": "2026-12-01T00:00:00Z", "relevantDate": "2026-11-01T00:00:00Z",
	}
	for k, v := range wantStr {
		if pj[k] != v {
			t.Errorf("%s = %#v, want %q", k, pj[k], v)
		}
	}
	if pj["formatVersion"] != float64(1) {
		t.Errorf("formatVersion %#v", pj["formatVersion"])
	}
	if pj["sharingProhibited"] != true {
		t.Error("sharingProhibited not true")
	}
	for _, k := range []string{"foregroundColor", "backgroundColor", "labelColor"} {
		if s, _ := pj[k].(string); !colorRE.MatchString(s) {
			t.Errorf("%s = %#v", k, pj[k])
		}
	}
	_, hasWS, _ := strings.Cut(string(raw), "webServiceURL")
	if hasWS != "" {
		t.Error("webServiceURL without authenticationToken")
	}
	styles := 0
	for _, s := range []string{"boardingPass", "eventTicket", "coupon", "storeCard", "generic"} {
		if _, ok := pj[s]; ok {
			styles++
		}
	}
	if styles != 1 {
		t.Fatalf("%d styles", styles)
	}
	bp := pj["boardingPass"].(map[string]any)
	if bp["transitType"] != "PKTransitTypeGeneric" {
		t.Errorf("transitType %#v", bp["transitType"])
	}
	keys := map[string]map[string]any{}
	for _, group := range []string{"headerFields", "primaryFields", "secondaryFields", "auxiliaryFields", "backFields"} {
		arr, _ := bp[group].([]any)
		for _, f := range arr {
			fm := f.(map[string]any)
			k, _ := fm["key"].(string)
			if _, dup := keys[k]; dup || k == "" {
				t.Errorf("field key %q duplicated or empty", k)
			}
			if _, ok := fm["value"].(string); !ok {
				t.Errorf("field %s value %#v", k, fm["value"])
			}
			if fm["dateStyle"] != nil {
				if _, err := time.Parse(time.RFC3339, fm["value"].(string)); err != nil {
					t.Errorf("date field %s: %v", k, err)
				}
			}
			keys[k] = fm
		}
	}
	for k, v := range map[string]string{"product": "Deutschlandticket", "passenger": "Max Mustermann",
		"birth_date": "01.01.1990", "valid_from": "2026-11-01T00:00:00Z", "operator": "farebox Verkehrsbetriebe AG", "valid_until": "2026-12-01T00:00:00Z",
		"area": "Deutschland (Berlin)", "validity": "Kalendermonat", "reference": "T-4D5E6F", "ticket_id": p.TicketID} {
		if keys[k] == nil || keys[k]["value"] != v {
			t.Errorf("field %s = %#v, want %q", k, keys[k], v)
		}
	}
	bcs := pj["barcodes"].([]any)
	bc := bcs[0].(map[string]any)
	if bc["format"] != "PKBarcodeFormatAztec" || bc["messageEncoding"] != "iso-8859-1" || bc["altText"] != "T-4D5E6F" {
		t.Errorf("barcode %#v", bc)
	}
	msg, err := barcode.FromLatin1(bc["message"].(string))
	if err != nil || !bytes.Equal(msg, p.Barcode) {
		t.Errorf("barcode message does not carry the payload: %v", err)
	}
	return pj
}

func checkStrings(t *testing.T, files map[string][]byte) {
	t.Helper()
	line := regexp.MustCompile(`^"([A-Z_]+)" = "((?:[^"\\]|\\.)*)";$`)
	sets := map[string]map[string]string{}
	for _, lang := range []string{"de", "en"} {
		sets[lang] = map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(files[lang+".lproj/pass.strings"])), "\n")[1:] {
			m := line.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("%s: bad line %q", lang, l)
			}
			sets[lang][m[1]] = m[2]
		}
	}
	if len(sets["de"]) != len(sets["en"]) {
		t.Error("languages have different key sets")
	}
	for k := range sets["en"] {
		if _, ok := sets["de"][k]; !ok {
			t.Errorf("de lacks %s", k)
		}
	}
	pj := string(files["pass.json"])
	for _, k := range []string{"PASS_DESCRIPTION", "PRODUCT", "PASSENGER", "VALID_FROM", "VALID_UNTIL", "NOTE_TEXT"} {
		if !strings.Contains(pj, `"`+k+`"`) || sets["de"][k] == "" {
			t.Errorf("localization key %s unused or untranslated", k)
		}
	}
	if sets["de"]["VALID_UNTIL"] != "Gültig bis" {
		t.Errorf("de VALID_UNTIL = %q", sets["de"]["VALID_UNTIL"])
	}
}

func TestVoidedAndTestPasses(t *testing.T) {
	b := testBuilder(t)
	data, err := b.Build(testPass(t, barcode.EnvTest, true))
	if err != nil {
		t.Fatal(err)
	}
	files := unzipPass(t, data)
	var pj PassJSON
	if err := json.Unmarshal(files["pass.json"], &pj); err != nil {
		t.Fatal(err)
	}
	if !pj.Voided {
		t.Error("voided ticket gives a pass that is not voided")
	}
	if pj.BackgroundColor != testBackground || pj.LabelColor != "rgb(255, 212, 0)" {
		t.Errorf("test pass colours %s / %s", pj.BackgroundColor, pj.LabelColor)
	}
	hf := pj.BoardingPass.HeaderFields
	if len(hf) != 2 || hf[0].Value != "TEST_VALUE" || hf[1].Value != "VOIDED_VALUE" {
		t.Errorf("header fields %+v", hf)
	}
	live, _ := b.Build(testPass(t, barcode.EnvLive, false))
	if lp := string(unzipPass(t, live)["pass.json"]); strings.Contains(lp, "voided") || strings.Contains(lp, testBackground) {
		t.Error("live pass carries voided")
	}
}

func TestTamperingIsDetected(t *testing.T) {
	b := testBuilder(t)
	data, _ := b.Build(testPass(t, barcode.EnvLive, false))
	files := unzipPass(t, data)

	edited := cloneFiles(files)
	edited["pass.json"] = bytes.Replace(edited["pass.json"], []byte("Max"), []byte("Eve"), 1)
	if err := testtool.PkpassManifest(edited); err == nil || !strings.Contains(err.Error(), "hash of pass.json") {
		t.Errorf("edited pass.json: %v", err)
	}
	// re-hashing the manifest breaks the signature instead.
	delete(edited, "manifest.json")
	delete(edited, "signature")
	man, _ := Manifest(edited)
	edited["manifest.json"], edited["signature"] = man, files["signature"]
	if err := testtool.PkpassManifest(edited); err != nil {
		t.Fatal(err)
	}
	if out, err := opensslVerify(t, edited); err == nil {
		t.Errorf("re-hashed manifest still verifies:\n%s", out)
	}
	extra := cloneFiles(files)
	extra["strip.png"] = files["icon.png"]
	if err := testtool.PkpassManifest(extra); err == nil || !strings.Contains(err.Error(), "missing from the manifest") {
		t.Errorf("extra file: %v", err)
	}
	missing := cloneFiles(files)
	delete(missing, "logo.png")
	if err := testtool.PkpassManifest(missing); err == nil {
		t.Error("missing file not detected")
	}
}

func cloneFiles(m map[string][]byte) map[string][]byte {
	c := make(map[string][]byte, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func TestBuilderChecksCredentials(t *testing.T) {
	for name, cfg := range map[string]Config{
		"uid mismatch":  {PassTypeID: "pass.org.other.tickets", TeamID: testTeam, Credentials: devCreds},
		"team mismatch": {PassTypeID: testPassType, TeamID: "OTHERTEAM1", Credentials: devCreds},
		"bad team":      {PassTypeID: testPassType, TeamID: "lower", Credentials: devCreds},
		"no key":        {PassTypeID: testPassType, TeamID: testTeam, Credentials: Credentials{Certificate: devCreds.Certificate, WWDR: devCreds.WWDR}},
		"wrong wwdr":    {PassTypeID: testPassType, TeamID: testTeam, Credentials: Credentials{Certificate: devCreds.Certificate, Key: devCreds.Key, WWDR: devCreds.Root}},
	} {
		if _, err := NewBuilder(cfg); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDevelopmentCredentialsPersist(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	c1, created, err := LoadOrCreateDevelopment(dir, testPassType, testTeam, now)
	if err != nil || !created || !c1.Development {
		t.Fatalf("first: %v %v", created, err)
	}
	c2, created, err := LoadOrCreateDevelopment(dir, testPassType, testTeam, now)
	if err != nil || created || !c2.Certificate.Equal(c1.Certificate) || !c2.Root.Equal(c1.Root) || !c2.Development {
		t.Fatalf("reload: %v %v", created, err)
	}
	if st, err := os.Stat(filepath.Join(dir, DevKeyFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode: %v", err)
	}
	b, err := NewBuilder(Config{PassTypeID: testPassType, TeamID: testTeam, Credentials: c2})
	if err != nil || b.Installable() || !b.Development() {
		t.Fatalf("development builder: %v", err)
	}
	// a changed pass type id regenerates.
	c3, created, err := LoadOrCreateDevelopment(dir, "pass.org.farebox.other", testTeam, now)
	if err != nil || !created || c3.PassTypeID() != "pass.org.farebox.other" {
		t.Fatalf("regenerate: %v %v", created, err)
	}
	// PEM files load as regular credentials (the production path).
	pc, err := LoadCredentialFiles(filepath.Join(dir, DevCertFile), filepath.Join(dir, DevKeyFile), filepath.Join(dir, DevWWDRFile))
	if err != nil || pc.Development || pc.TeamID() != testTeam {
		t.Fatalf("LoadCredentialFiles: %v", err)
	}
}

// The signer certificate's subject must carry UID as Apple's does (OID 0.9.2342.19200300.100.1.1).
func TestCertificateSubjectShape(t *testing.T) {
	var found bool
	for _, n := range devCreds.Certificate.Subject.Names {
		if n.Type.Equal(asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}) && n.Value == testPassType {
			found = true
		}
	}
	if !found || devCreds.TeamID() != testTeam {
		t.Errorf("subject %v", devCreds.Certificate.Subject)
	}
}

func BenchmarkBuild(b *testing.B) {
	bl, err := NewBuilder(Config{PassTypeID: testPassType, TeamID: testTeam, Credentials: devCreds})
	if err != nil {
		b.Fatal(err)
	}
	p := testPass(b, barcode.EnvLive, false)
	for b.Loop() {
		if _, err := bl.Build(p); err != nil {
			b.Fatal(err)
		}
	}
}
