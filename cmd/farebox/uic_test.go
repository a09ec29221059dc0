package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/barcodetest"
	"github.com/farebox/farebox/internal/barcode/uic"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
)

// TestUICProfileEndToEnd: the operator switches the monthly tickets to the
// uic-918-3-uflex profile (catalog import); the service, with no UIC key
// configured, makes a development key and says so; an activated ticket's
// ticket.properties barcode and PNG are a UIC 918.3 container, which
// `farebox inspect` verifies (a specimen: accepted only with --allow-test)
// and KDE Itinerary reads from the served PNG, on both engines.
func TestUICProfileEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		env, dataDir, apiKey, f := devProfileTrial(t, engine, "UIC GmbH", catalog.BarcodeUIC)
		setMonthly(f, func(p *catalog.Product) { p.BarcodeProductNumber = 9999 })
		dir := t.TempDir()
		b, _ := json.Marshal(f)
		if out := cli(t, env, "catalog", "import", testtool.WriteFile(t, dir, "catalog.json", b)); !strings.Contains(out, "imported") {
			t.Fatalf("catalog import: %s", out)
		}
		_, servedFile := servedDevBarcode(t, env, apiKey, dir, "UIC 918.3 barcodes: using a development key", uic.IsContainer,
			"GENUINE: UIC 918.3 container 01 with U_FLEX (FCB 1.3), company 9999, key 99999 (farebox DEVELOPMENT key")
		// Without the development key the signer is unknown.
		keyDir := filepath.Join(dataDir, "keys", "uic")
		if err := os.Rename(keyDir, keyDir+".away"); err != nil {
			t.Fatal(err)
		}
		out, err := inspectRun(env, nil, "--allow-test", servedFile)
		if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "NOT GENUINE: it is signed with an unknown key (company 9999, key 99999)") {
			t.Errorf("inspect without the key: %v\n%s", err, out)
		}
		res := barcodetest.Kitinerary(t, servedFile)
		if len(res) != 1 || res[0].Name != "Deutschlandticket" || res[0].UnderName.GivenName != "Jürgen" ||
			res[0].UnderName.FamilyName != "Müller" || res[0].IssuedBy.Identifier != "uic:9999" || res[0].ValidFrom == "" {
			t.Errorf("KDE Itinerary read %+v", res)
		}
	})
}

// devProfileTrial prepares the end-to-end test of a development barcode
// profile on engine: a trial (live keys with development barcode keys need
// the flag) and its data directory, an account named company (its API
// key), and the exported catalog with the monthly tickets switched to
// profile (there must be some).
func devProfileTrial(t *testing.T, engine store.Engine, company, profile string) (env map[string]string, dataDir, apiKey string, f *catalog.File) {
	t.Helper()
	env, dataDir = engineEnv(t, engine, "FAREBOX_ADDR", "127.0.0.1:0", "FAREBOX_ALLOW_DEVELOPMENT_BARCODE_KEYS", "true")
	apiKey = createAccount(t, env, company)
	f = exportCatalog(t, env)
	if setMonthly(f, func(p *catalog.Product) { p.BarcodeProfile = profile }) == 0 {
		t.Fatal("the catalog has no monthly product")
	}
	return env, dataDir, apiKey, f
}

// setMonthly applies set to each monthly product of f and returns how many
// it changed.
func setMonthly(f *catalog.File, set func(p *catalog.Product)) int {
	n := 0
	for i := range f.Products {
		if f.Products[i].TicketType == catalog.TicketMonth {
			set(&f.Products[i])
			n++
		}
	}
	return n
}

// servedDevBarcode runs `farebox serve` with env (a development barcode
// profile on the monthly ticket, whose startup log says logLine) and
// activates a monthly ticket of apiKey. The ticket's barcode must be one
// of the profile (is), the served PNG must decode back to it, and `farebox
// inspect` must refuse it as a test ticket and accept it with
// --allow-test, the report naming each of want and the passenger, product
// and ticket. It returns the ticket id and the PNG's file in dir.
func servedDevBarcode(t *testing.T, env map[string]string, apiKey, dir, logLine string, is func([]byte) bool, want ...string) (id, servedFile string) {
	t.Helper()
	in := startServe(t, env)
	if !strings.Contains(in.logs.String(), logLine) {
		t.Errorf("startup log does not say %q:\n%s", logLine, in.logs.String())
	}
	call := httpCaller(t, in.addr)
	id = activateMonthly(t, call, apiKey, `{"photo_id_lite":{"first_name":"Jürgen","last_name":"Müller","birth_date":"1980-02-29"}}`)
	ticket := fetchTicket(t, call, id)
	payload, err := barcode.FromText(ticket.Ticket.Properties.Barcode.Payload)
	if err != nil || !is(payload) {
		t.Fatalf("ticket barcode is not of the profile: %v % .20X", err, payload)
	}
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
	served := ticket.png(t)
	servedFile = testtool.WriteFile(t, dir, "served.png", served)
	// The served PNG decodes back to the very barcode.
	if got, err := barcode.DecodeImage(served); err != nil || !bytes.Equal(got, payload) {
		t.Errorf("served PNG decodes to %d bytes (%v), want the %d-byte barcode", len(got), err, len(payload))
	}
	out, err := inspectRun(env, nil, servedFile)
	if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "TEST TICKET") || !strings.Contains(out, "REJECTED: a test ticket") {
		t.Errorf("test ticket without --allow-test: %v\n%s", err, out)
	}
	out, err = inspectRun(env, nil, "--allow-test", servedFile)
	if err != nil {
		t.Errorf("inspect --allow-test: %v", err)
	}
	testtool.Contains(t, out, append(want, "VALID NOW", "Passenger:   Jürgen Müller", "Born:        1980-02-29",
		"Product:     Deutschlandticket (9999)", "Area:        Deutschland", "Ticket:      "+id, "ACCEPTED")...)
	return id, servedFile
}
