package main

import (
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/smallstep/pkcs7"

	"github.com/farebox/farebox/internal/keyref/tokentest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/wallet/apple"
)

// TestServeApplePassKeyInToken builds and verifies a pass through the
// token: the built binary runs with --apple-pass-key a `pkcs11:` URI (the
// pass certificate's key imported into SoftHSM2, never in a file), serves
// the .pkpass of an activated ticket, and its detached PKCS#7 signature
// over manifest.json verifies against the certificate and, with openssl,
// up to the root; the manifest's hashes match the files. The token, not
// the database, holds the key, so one engine (SQLite) is enough.
func TestServeApplePassKeyInToken(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Binary)
	tk := tokentest.New(t)
	c, err := apple.GenerateDevelopment("pass.com.example.tickets", "ABCDE12345", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ref := tk.Import(t, "apple-pass", c.Key)
	dir := t.TempDir()
	certPEM := func(name string, der []byte) string {
		return testtool.WriteFile(t, dir, name, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	}
	env, _ := engineEnv(t, store.SQLite, "FAREBOX_APPLE_PASS_CERT", certPEM("pass.pem", c.Certificate.Raw),
		"FAREBOX_APPLE_PASS_KEY", ref, "FAREBOX_APPLE_WWDR_CERT", certPEM("wwdr.pem", c.WWDR.Raw), "SOFTHSM2_CONF", tk.Conf)
	apiKey := createAccount(t, env, "Pass Token GmbH")
	srv := startChild(t, env)
	defer srv.term()
	if strings.Contains(srv.logs.String(), "pin-value="+tk.PIN) {
		t.Errorf("the log shows the PIN:\n%s", srv.logs.String())
	}
	call := httpCaller(t, srv.addr)
	id := activateMonthly(t, call, apiKey, `{"photo_id_lite":{"first_name":"Ζωή","last_name":"محمد","birth_date":"1990-01-31"}}`)
	files := testtool.Pkpass(t, call("GET", "/v9/ticketing/passes/apple_wallet/"+id+".pkpass", "", ""))
	if err := testtool.PkpassManifest(files); err != nil {
		t.Fatal(err)
	}
	var pj struct{ PassTypeIdentifier, TeamIdentifier, SerialNumber string }
	if err := json.Unmarshal(files["pass.json"], &pj); err != nil || pj.PassTypeIdentifier != "pass.com.example.tickets" ||
		pj.TeamIdentifier != "ABCDE12345" || pj.SerialNumber != id {
		t.Fatalf("pass.json is not the ticket's pass of the configured certificate: %+v %v", pj, err)
	}
	if out, err := testtool.VerifyCMS(t, files["signature"], files["manifest.json"], c.Root.Raw); err != nil || !strings.Contains(out, "Verification successful") {
		t.Fatalf("openssl cms -verify: %v\n%s", err, out)
	}
	p7, err := pkcs7.Parse(files["signature"])
	if err != nil {
		t.Fatal(err)
	}
	p7.Content = files["manifest.json"]
	if err := p7.Verify(); err != nil {
		t.Fatalf("the signature over manifest.json: %v", err)
	}
	if signer := p7.GetOnlySigner(); signer == nil || !signer.Equal(c.Certificate) {
		t.Fatal("the pass is not signed by the configured certificate")
	}
	// A changed manifest no longer verifies: the check above is real.
	p7.Content = append([]byte(" "), files["manifest.json"]...)
	if err := p7.Verify(); err == nil {
		t.Fatal("a changed manifest.json verifies")
	}
}
