package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/wallet/apple/apnstest"
)

// TestServeAppleUpdatesSettings: each bad APNs setting stops `serve` with
// the flag named.
func TestServeAppleUpdatesSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := testtool.WriteFile(t, dir, "garbage.p8", []byte("not a key"))
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"key without id", map[string]string{"FAREBOX_PUBLIC_URL": "https://tickets.example.com", "FAREBOX_APNS_KEY": garbage}, "--apns-key-id: required"},
		{"plain http endpoint", map[string]string{"FAREBOX_APNS_ENDPOINT": "http://api.push.apple.com"}, "--apns-endpoint: must be an https URL"},
		{"missing key file", map[string]string{"FAREBOX_PUBLIC_URL": "https://tickets.example.com", "FAREBOX_APNS_KEY": filepath.Join(dir, "nope.p8"),
			"FAREBOX_APNS_KEY_ID": "ABC123DEFG"}, "--apns-key"},
		{"not a .p8", map[string]string{"FAREBOX_PUBLIC_URL": "https://tickets.example.com", "FAREBOX_APNS_KEY": garbage,
			"FAREBOX_APNS_KEY_ID": "ABC123DEFG"}, "--apns-key: APNs key: no PEM block"},
	} {
		serveStops(t, c.name, c.env, c.want)
	}
}

// TestServeAppleUpdates: with --public-url and an APNs key, `serve` logs
// where it pushes, its passes carry webServiceURL and a token, and a
// device registers through the web service of the running instance.
func TestServeAppleUpdates(t *testing.T) {
	t.Parallel()
	srv := apnstest.New(t, "pass.org.farebox.development")
	key := filepath.Join(t.TempDir(), "AuthKey_ABC123DEFG.p8")
	if err := os.WriteFile(key, srv.P8, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FAREBOX_DATA_DIR": t.TempDir(), "FAREBOX_PUBLIC_URL": "https://tickets.example.com",
		"FAREBOX_APNS_KEY": key, "FAREBOX_APNS_KEY_ID": "ABC123DEFG", "FAREBOX_APNS_ENDPOINT": srv.URL}
	var created struct {
		APIKey string `json:"api_key"`
	}
	_ = json.Unmarshal([]byte(cli(t, env, "accounts", "create", "--create", "--name", "Push GmbH", "--json")), &created)
	in := startServe(t, env)
	if logs := in.logs.String(); !strings.Contains(logs, "pushing through APNs") || !strings.Contains(logs, "pass.org.farebox.development") {
		t.Errorf("startup log: %s", logs)
	}
	call := httpCaller(t, in.addr)
	tid := activateMonthly(t, call, created.APIKey, `{"photo_id_lite":{"first_name":"Max","last_name":"Mustermann","birth_date":"1990-01-01"}}`)
	pass := call("GET", "/v9/ticketing/passes/apple_wallet/"+tid+".pkpass", "", "")
	zr, err := zip.NewReader(bytes.NewReader(pass), int64(len(pass)))
	if err != nil {
		t.Fatal(err)
	}
	var pj struct {
		WebServiceURL, AuthenticationToken, SerialNumber, PassTypeIdentifier string
	}
	for _, f := range zr.File {
		if f.Name == "pass.json" {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			_ = json.Unmarshal(b, &pj)
		}
	}
	if pj.WebServiceURL != "https://tickets.example.com/wallet/apple" || len(pj.AuthenticationToken) < 16 || pj.SerialNumber != tid {
		t.Fatalf("pass.json %+v", pj)
	}
	req, _ := http.NewRequest("POST", in.url()+"/wallet/apple/v1/devices/phone-1/registrations/"+pj.PassTypeIdentifier+"/"+tid,
		strings.NewReader(`{"pushToken":"a1b2c3d4e5f60718293a4b5c6d7e8f90"}`))
	req.Header.Set("Authorization", "ApplePass "+pj.AuthenticationToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Errorf("registration: %d", res.StatusCode)
	}
}
