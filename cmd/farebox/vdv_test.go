package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/barcodetest"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/config"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
)

// TestVDVProfileEndToEnd: the operator switches the monthly tickets to the
// vdv-ka-static profile; the service, with no VDV certificates configured,
// makes a development PKI and says so; an activated ticket's barcode and
// PNG are a VDV-KA static barcode, which `farebox inspect` verifies along
// the development chain (a test ticket: accepted only with --allow-test),
// refuses without the chain, and rejects once the ticket is revoked; KDE
// Itinerary recognises it as VDV and stops at the CA it does not know. Both
// engines.
func TestVDVProfileEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		env, dataDir, apiKey, f := devProfileTrial(t, engine, "VDV GmbH", catalog.BarcodeVDV)
		dir := t.TempDir()
		b, _ := json.Marshal(f)
		// Without a product number the catalog is refused, naming the field.
		var outb, errb bytes.Buffer
		err := run(context.Background(), []string{"catalog", "import", testtool.WriteFile(t, dir, "nonumber.json", b)}, envFrom(env), nil, &outb, &errb)
		if err == nil || !strings.Contains(err.Error()+errb.String()+outb.String(), "barcode_product_number") {
			t.Fatalf("catalog without product number: %v\n%s%s", err, outb.String(), errb.String())
		}
		setMonthly(f, func(p *catalog.Product) { p.BarcodeProductNumber = 9999 })
		b, _ = json.Marshal(f)
		if out := cli(t, env, "catalog", "import", testtool.WriteFile(t, dir, "catalog.json", b)); !strings.Contains(out, "imported") {
			t.Fatalf("catalog import: %s", out)
		}
		id, servedFile := servedDevBarcode(t, env, apiKey, dir, "VDV-KA barcodes: using a development PKI", vdv.IsBarcode,
			"VDV-KA static barcode 1.3.01, organisation 65000, certificate XX FBO", "(farebox DEVELOPMENT PKI")
		// KDE Itinerary reads it as VDV up to the CA lookup.
		res, log := barcodetest.KitineraryLog(t, servedFile)
		car := strings.ToUpper(hex.EncodeToString(vdv.DevCARef[:]))
		if len(res) != 0 || !strings.Contains(strings.ToUpper(log), "COULD NOT FIND CA CERTIFICATE \""+car+"\"") {
			t.Errorf("KDE Itinerary: %+v\n%s", res, log)
		}
		// Revoked: the revocation feed names the farebox ticket id the barcode carries.
		if got := cli(t, env, "tickets", "revoke", id, "--reason", "Fahrgeld erstattet"); !strings.Contains(got, "revoked "+id) {
			t.Errorf("tickets revoke: %q", got)
		}
		// The CLI (no catalog loaded) queued no Google object job: a
		// VDV ticket has no Google pass (docs/wallet.md §4).
		st, err := store.Open(context.Background(), store.Options{URL: env["FAREBOX_DATABASE_URL"], DataDir: dataDir, MaxConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		gjobs, err := st.Read().Jobs(context.Background(), passes.JobGoogleObject)
		_ = st.Close()
		if err != nil || len(gjobs) != 0 {
			t.Errorf("Google object jobs after revoking a VDV ticket: %+v (%v)", gjobs, err)
		}
		in := startServe(t, env)
		feed := testtool.WriteFile(t, dir, "revocations.json", httpCaller(t, in.addr)("GET", "/v1/inspection/revocations.json", "", ""))
		if err := in.stop(); err != nil {
			t.Fatal(err)
		}
		out, err := inspectRun(env, nil, "--allow-test", "--revocations", feed, servedFile)
		if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "REVOKED: Fahrgeld erstattet") {
			t.Errorf("revoked: %v\n%s", err, out)
		}
		// Without the development PKI the CA is not trusted.
		keyDir := filepath.Join(dataDir, "keys", "vdv")
		if err := os.Rename(keyDir, keyDir+".away"); err != nil {
			t.Fatal(err)
		}
		out, err = inspectRun(env, nil, "--allow-test", servedFile)
		if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "NOT GENUINE: VDV-KA barcode: VDV certificate chain not trusted: the CA XX FBC") {
			t.Errorf("inspect without the chain: %v\n%s", err, out)
		}
	})
}

// TestVDVConfiguredIssuer: with --vdv-issuer, --vdv-root and --vdv-ca the
// service signs as the operator's organisation (no test flag), a wrong
// chain stops the start, and `farebox inspect` with the same root and CA
// accepts a live ticket without --allow-test and refuses it without them.
func TestVDVConfiguredIssuer(t *testing.T) {
	t.Parallel()
	now := time.Now()
	p, err := vdv.GenerateDevPKI(nil, now) // stands in for VDV-issued material
	if err != nil {
		t.Fatal(err)
	}
	other, err := vdv.GenerateDevPKI(nil, now)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w := func(name string, b []byte) string { return testtool.WriteFile(t, dir, name, b) }
	root, ca, otherCA := w("root.cvc", p.Root), w("ca.cvc", p.CA), w("other-ca.cvc", other.CA)
	key := w("org.pem", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(p.Issuer.Key)}))
	cert := w("org.cvc", p.Issuer.Cert)
	cfg := config.Config{DataDir: t.TempDir(), VDVIssuer: "6310:3000:" + key + ":" + cert, VDVRoot: root, VDVCAs: ca}
	iss, created, err := loadVDVIssuer(cfg, now)
	if err != nil || created || iss.Development || iss.Org != 6310 || iss.ProductOrg != 3000 {
		t.Fatalf("configured issuer: %+v %v %v", iss, created, err)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "keys", "vdv")); !os.IsNotExist(err) {
		t.Errorf("a development PKI was made although an issuer is configured: %v", err)
	}
	bad := cfg
	bad.VDVCAs = otherCA // a CA the root did not sign: the start fails naming the file
	if _, _, err := loadVDVIssuer(bad, now); err == nil || !strings.Contains(err.Error(), otherCA) {
		t.Errorf("a CA the root did not sign: %v", err)
	}
	bad = cfg
	bad.VDVIssuer = "6310:3000:" + key + ":" + w("other-org.cvc", other.Issuer.Cert)
	if _, _, err := loadVDVIssuer(bad, now); err == nil || !strings.Contains(err.Error(), "organisation certificate") {
		t.Errorf("an organisation certificate of another CA: %v", err)
	}
	c := barcode.Claims{TicketID: "farebox-ticket-configured", ProductName: "Deutschlandticket",
		ValidFrom: now.Add(-time.Hour).Truncate(time.Second), ValidUntil: now.Add(time.Hour).Truncate(time.Second),
		FirstName: "Erika", LastName: "Mustermann", BirthDate: "1964-08-12", Environment: barcode.EnvLive}
	b, err := vdv.Issue(c, vdv.Product{Number: 9999, Area: "Deutschland"}, iss, now)
	if err != nil {
		t.Fatal(err)
	}
	file := w("ticket.bin", b)
	env := map[string]string{"FAREBOX_DATA_DIR": cfg.DataDir}
	out, err := inspectRun(env, nil, "--vdv-root", root, "--vdv-ca", ca, file)
	if err != nil || !strings.Contains(out, "organisation 6310") || strings.Contains(out, "DEVELOPMENT") || !strings.Contains(out, "ACCEPTED") {
		t.Errorf("inspect with the chain: %v\n%s", err, out)
	}
	out, err = inspectRun(env, nil, file)
	if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "not trusted") {
		t.Errorf("inspect without the chain: %v\n%s", err, out)
	}
}
