package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/engines"
	"github.com/farebox/farebox/internal/store"
)

// TestInspectionBarcodeFlow: order → activate → PATCH; the ticket's barcode
// verifies with the published keys.json and says whose ticket it is.
func TestInspectionBarcodeFlow(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, true)}, func(t *testing.T, e *apitest.Env) {
		_, tid, ticket := activatedTicket(t, e, e.LiveKey)
		meta := ticket["ticket"].(map[string]any)["meta"].(map[string]any)
		if meta["requires_engine"] != engines.RenderingEngine().Version || meta["version"] != "1" || meta["template"] == "" {
			t.Errorf("meta: %v", meta)
		}
		if got := meta["available_rendering_options"]; !slices.Equal(strs(got), []string{"apple_wallet", "google_wallet"}) {
			t.Errorf("available_rendering_options: %v", got)
		}
		opts := e.Must(200, apitest.Req{Method: "GET", Path: "/v7/ticketing/tickets/" + tid + "/available_rendering_options.json"})
		if string(opts.Body) != "[\"apple_wallet\",\"google_wallet\"]\n" {
			t.Errorf("available_rendering_options.json: %s", opts.Body)
		}

		ks := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"})
		kr, err := barcode.ParseKeySet(ks.Body)
		if err != nil {
			t.Fatal(err)
		}
		var set barcode.KeySetJSON
		_ = json.Unmarshal(ks.Body, &set)
		if len(set.Keys) != 2 || set.Keys[0].Kid != "1" || set.Keys[0].Environment != "live" || !set.Keys[0].Active ||
			set.Keys[1].Kid != "32769" || set.Keys[1].Environment != "test" || !set.Keys[1].Active {
			t.Errorf("keys.json: %s", ks.Body)
		}
		payload := ticketPayload(t, ticket)
		c, err := barcode.Verify(payload, kr)
		if err != nil {
			t.Fatalf("payload does not verify with keys.json: %v", err)
		}
		product := ticket["product"].(map[string]any)
		want := barcode.Claims{Version: 1, KeyID: 1, TicketID: tid, ProductID: product["id"].(string),
			ProductName: product["local_ticket_name"].(string), FirstName: "Max", LastName: "Mustermann",
			BirthDate: "1990-01-01", Environment: "live", ValidFrom: c.ValidFrom, ValidUntil: c.ValidUntil}
		if !reflect.DeepEqual(c, want) {
			t.Errorf("claims\n got %+v\nwant %+v", c, want)
		}
		if ts(c.ValidFrom) != ticket["valid_from"] || ts(c.ValidUntil) != ticket["valid_until"] {
			t.Errorf("validity %v – %v, ticket %v – %v", c.ValidFrom, c.ValidUntil, ticket["valid_from"], ticket["valid_until"])
		}
		rep := barcode.Inspect(payload, kr, e.Clock.Now())
		if !rep.Acceptable(false) || rep.State != barcode.StateValid || rep.Test {
			t.Errorf("inspection report: %+v", rep)
		}
		// Deterministic: reading the ticket again gives the same bytes.
		again := e.Must(200, apitest.Req{Method: "PATCH", Path: "/v6/ticketing/tickets/" + tid + ".json"}).Map(t)
		if string(ticketPayload(t, again)) != string(payload) {
			t.Error("the payload changed between two reads")
		}
		// One flipped bit anywhere fails.
		for _, bit := range []int{0, 8*5 + 3, 8 * 20, 8*len(payload)/2 + 1, 8*(len(payload)-64) + 7, 8*len(payload) - 1} {
			bad := append([]byte(nil), payload...)
			bad[bit/8] ^= 1 << (bit % 8)
			if _, err := barcode.Verify(bad, kr); err == nil {
				t.Errorf("bit %d flipped: still verifies", bit)
			}
		}
		// The PNG the rendering engine draws scans back to the same payload as
		// served: 4 px per module inside a white 4-module quiet zone.
		uri := properties(ticket)["inspection_barcode_png"].(string)
		png, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(uri, "data:image/png;base64,"))
		if err != nil || !strings.HasPrefix(uri, "data:image/png;base64,") {
			t.Fatalf("inspection_barcode_png: %.60s", uri)
		}
		scanned, err := barcode.ParseInput(png)
		if err != nil || string(scanned) != string(payload) {
			t.Errorf("PNG scans to %x (%v)", scanned, err)
		}
		checkBarcodePNGGeometry(t, png, payload)
		if pm := properties(ticket)["identification_medium"].(map[string]any)["photo_id_lite"].(map[string]any); pm["first_name"] != "Max" {
			t.Errorf("identification_medium: %v", pm)
		}
	})
}

func TestTestTicketBarcode(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, false)}, func(t *testing.T, e *apitest.Env) {
		_, tid, ticket := activatedTicket(t, e, e.TestKey)
		kr, err := barcode.ParseKeySet(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body)
		if err != nil {
			t.Fatal(err)
		}
		payload := ticketPayload(t, ticket)
		c, err := barcode.Verify(payload, kr)
		if err != nil || !c.Test() || c.KeyID != barcode.TestKeyIDBase+1 || c.TicketID != tid {
			t.Fatalf("test ticket claims %+v (%v)", c, err)
		}
		rep := barcode.Inspect(payload, kr, e.Clock.Now())
		if !rep.Genuine || !rep.Test || rep.Acceptable(false) || !rep.Acceptable(true) {
			t.Errorf("test ticket report: %+v", rep)
		}
		if !strings.Contains(rep.String(), "TEST TICKET") {
			t.Errorf("report: %s", rep)
		}
		// Development wallets are not advertised by default.
		meta := ticket["ticket"].(map[string]any)["meta"].(map[string]any)
		if got := strs(meta["available_rendering_options"]); len(got) != 0 {
			t.Errorf("development wallets advertised: %v", got)
		}
		if b := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/tickets/" + tid + "/available_rendering_options.json"}).Body; string(b) != "[]\n" {
			t.Errorf("options: %s", b)
		}
		// Not advertised, but still served (for tests and web pages): a test pass is marked TEST.
		p := fetchPass(t, e, "/v8", tid)
		if p.field("environment") != "TEST_VALUE" || p.SerialNumber != tid {
			t.Errorf("test pass: environment field %v", p.field("environment"))
		}
		msg, _ := barcode.FromLatin1(p.Barcodes[0].Message)
		if c, err := barcode.Verify(msg, kr); err != nil || !c.Test() {
			t.Errorf("test pass barcode: %+v %v", c, err)
		}
	})
}

// TestWalletNotConfigured: without credentials the endpoints answer 503
// (never a broken 200), unknown tickets 404, and no wallet is offered.
func TestWalletNotConfigured(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		_, tid, ticket := activatedTicket(t, e, e.LiveKey)
		if _, ok := properties(ticket)["inspection_barcode"]; ok {
			t.Error("barcode without a keyring")
		}
		if got := strs(ticket["ticket"].(map[string]any)["meta"].(map[string]any)["available_rendering_options"]); len(got) != 0 {
			t.Errorf("options: %v", got)
		}
		for _, p := range []string{"/v9/ticketing/passes/apple_wallet/" + tid + ".pkpass", "/v6/ticketing/passes/google_wallet/" + tid + ".json",
			"/v7/ticketing/passes/google_wallet/" + tid} {
			r := e.Must(503, apitest.Req{Method: "GET", Path: p})
			if m := r.Map(t); m["code"] != "wallet_not_configured" {
				t.Errorf("%s: %s", p, r.Body)
			}
		}
		if m := e.Must(503, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Map(t); m["code"] != "inspection_keys_not_configured" {
			t.Errorf("keys.json: %v", m)
		}
	})
	e := apitest.New(t, store.SQLite, apitest.Options{Configure: withWallets(t, true)})
	for _, p := range []string{"/v9/ticketing/passes/apple_wallet/farebox-ticket-00000000-0000-4000-8000-000000000000.pkpass",
		"/v9/ticketing/passes/google_wallet/farebox-ticket-00000000-0000-4000-8000-000000000000.json",
		"/v9/ticketing/passes/google_wallet/farebox-ticket-00000000-0000-4000-8000-000000000000"} {
		if m := e.Must(404, apitest.Req{Method: "GET", Path: p}).Map(t); m["code"] != "ticket_not_found" {
			t.Errorf("%s: %v", p, m)
		}
	}
	// A pass path without its suffix is not a route.
	e.Must(404, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/apple_wallet/x", NoValidate: true})
}

func strs(v any) []string {
	out := []string{}
	a, _ := v.([]any)
	for _, x := range a {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// googleJWT verifies a save link's JWT with the service account's key.
func googleJWT(t *testing.T, link string) (jwt.MapClaims, *jwt.Token) {
	t.Helper()
	const prefix = "https://pay.google.com/gp/v/save/"
	parts := strings.Split(link, "/save/")
	if !strings.HasPrefix(link, prefix) || len(parts) != 2 {
		t.Fatalf("save link %q", link)
	}
	claims := jwt.MapClaims{}
	tok, err := jwt.ParseWithClaims(parts[1], claims, func(tok *jwt.Token) (any, error) {
		return walletCreds.google.PublicKey(), nil
	}, jwt.WithValidMethods([]string{"RS256"}))
	if err != nil || !tok.Valid {
		t.Fatalf("JWT does not verify: %v", err)
	}
	if tok.Header["kid"] != walletCreds.google.PrivateKeyID || tok.Header["typ"] != "JWT" {
		t.Errorf("JWT header %v", tok.Header)
	}
	// alg none must be refused by a verifier.
	if _, err := jwt.Parse(noneToken(parts[1]), func(*jwt.Token) (any, error) { return walletCreds.google.PublicKey(), nil },
		jwt.WithValidMethods([]string{"RS256"})); err == nil || !errors.Is(err, jwt.ErrTokenSignatureInvalid) && !strings.Contains(err.Error(), "signing method") {
		t.Errorf("alg none accepted: %v", err)
	}
	return claims, tok
}

func noneToken(tok string) string {
	p := strings.Split(tok, ".")
	return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + p[1] + "."
}
