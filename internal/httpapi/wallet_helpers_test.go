package httpapi_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/inspection"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/credentials"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/wallet/google"
)

// walletCreds are generated once per test binary (RSA key generation is slow).
var walletCreds struct {
	once   sync.Once
	apple  apple.Credentials
	google *google.ServiceAccount
	err    error
}

const testOrigin = "https://shop.example.com"

// walletKeyring is a fixed inspection keyring: live key 1, test key 32769.
func walletKeyring(t testing.TB) *barcode.Keyring {
	t.Helper()
	live, err := barcode.KeyFromSeed(1, bytes.Repeat([]byte{0x11}, 32))
	if err != nil {
		t.Fatal(err)
	}
	test, err := barcode.KeyFromSeed(barcode.TestKeyIDBase+1, bytes.Repeat([]byte{0x22}, 32))
	if err != nil {
		t.Fatal(err)
	}
	kr, err := barcode.NewKeyring(live, test)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// withWallets configures the inspection keyring and development wallet
// credentials; advertise lists the development wallets as rendering options.
func withWallets(t testing.TB, advertise bool) func(d *httpapi.Deps) {
	t.Helper()
	return withWalletOptions(walletOptions(t, advertise))
}

// withWalletOptions configures the wallets o.
func withWalletOptions(o wallets.Options) func(d *httpapi.Deps) {
	return func(d *httpapi.Deps) { d.Wallets = apitest.Wallets(d, o) }
}

// walletOptions are the wallets of withWallets.
func walletOptions(t testing.TB, advertise bool) wallets.Options {
	t.Helper()
	walletCreds.once.Do(func() {
		walletCreds.apple, walletCreds.err = apple.GenerateDevelopment("pass.org.farebox.test", "FAREBOXTST", time.Now())
		if walletCreds.err != nil {
			return
		}
		var sa []byte
		if sa, walletCreds.err = google.GenerateDevServiceAccount(); walletCreds.err == nil {
			walletCreds.google, walletCreds.err = google.ParseServiceAccount(sa)
		}
	})
	if walletCreds.err != nil {
		t.Fatal(walletCreds.err)
	}
	b, err := apple.NewBuilder(apple.Config{PassTypeID: "pass.org.farebox.test", TeamID: "FAREBOXTST", Credentials: walletCreds.apple})
	if err != nil {
		t.Fatal(err)
	}
	g, err := google.NewIssuer(google.Config{IssuerID: "3388000000022000001", Origins: []string{testOrigin}, Account: walletCreds.google})
	if err != nil {
		t.Fatal(err)
	}
	return wallets.Options{Inspection: walletKeyring(t), Apple: b, Google: g, AdvertiseDevelopmentWallets: advertise}
}

// activatedTicket orders the monthly product with key, activates it for
// Max Mustermann and returns the order, the ticket id and the ticket JSON.
func activatedTicket(t *testing.T, e *apitest.Env, key string) (order map[string]any, ticketID string, ticket map[string]any) {
	t.Helper()
	ids := productIDs(t, e)
	order = e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: key,
		Body: map[string]any{"product_ids": []string{ids["month/adult"]}}}).Map(t)
	coupon := order["coupons"].([]any)[0].(map[string]any)["id"].(string)
	body := `{"identification_medium":` + maxMedium + `,"tariff_settings":{"german_postal_code":"12345"},"activation_start_datetime":"2026-06-01T00:00:00+0200"}`
	ticketID = e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/coupons/" + coupon + "/activate.json", Body: body}).Map(t)["ticket_id"].(string)
	ticket = e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + ticketID + ".json"}).Map(t)
	e.MustMatch("ticket", mustJSON(t, ticket), apitest.SDKTicket)
	return order, ticketID, ticket
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// properties returns ticket.ticket.properties.
func properties(ticket map[string]any) map[string]any {
	return ticket["ticket"].(map[string]any)["properties"].(map[string]any)
}

// ticketPayload reads the signed payload from ticket.properties.
func ticketPayload(t *testing.T, ticket map[string]any) []byte {
	t.Helper()
	bc, ok := properties(ticket)["inspection_barcode"].(map[string]any)
	if !ok || bc["format"] != "aztec" || bc["encoding"] != "base64url" {
		t.Fatalf("inspection_barcode: %v", properties(ticket)["inspection_barcode"])
	}
	p, err := barcode.FromText(bc["payload"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// unzipPass reads a .pkpass the way Wallet does (testtool.Pkpass).
func unzipPass(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	return testtool.Pkpass(t, data)
}

// checkManifest compares manifest.json with the files, both ways.
func checkManifest(t *testing.T, files map[string][]byte) {
	t.Helper()
	if err := testtool.PkpassManifest(files); err != nil {
		t.Error(err)
	}
}

// opensslVerify runs `openssl cms -verify` over manifest.json against root.
func opensslVerify(t *testing.T, files map[string][]byte, rootDER []byte) {
	t.Helper()
	out, err := testtool.VerifyCMS(t, files["signature"], files["manifest.json"], rootDER)
	if err != nil || !strings.Contains(out, "Verification successful") {
		t.Fatalf("openssl cms -verify: %v\n%s", err, out)
	}
}

// inspectionKeys are the key use cases (`farebox keys`) over e's database
// and the keys of s.
func inspectionKeys(e *apitest.Env, s credentials.Settings) *inspection.Service {
	return inspection.New(store.NewView[inspection.Queries](e.Store), e.Clock, credentials.InspectionStore{Settings: s, Store: e.Store}, e.App.Jobs.Notify)
}
