package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// engineEnv is the environment of a farebox process on engine: a fresh data
// dir (returned too), on PostgreSQL the test database in its own schema,
// plus the given key/value pairs.
func engineEnv(t *testing.T, engine store.Engine, kv ...string) (env map[string]string, dataDir string) {
	t.Helper()
	opts := storetest.Options(t, engine)
	dataDir = t.TempDir()
	seedDevKeys(t, dataDir)
	env = map[string]string{"FAREBOX_DATA_DIR": dataDir}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	if engine == store.Postgres {
		env["FAREBOX_DATABASE_URL"] = opts.URL + "&search_path=" + opts.Schema
	}
	return env, dataDir
}

// createAccount runs `farebox accounts create --create` and returns the new
// account's API key.
func createAccount(t *testing.T, env map[string]string, name string) string {
	t.Helper()
	var created struct {
		APIKey string `json:"api_key"`
	}
	_ = json.Unmarshal([]byte(cli(t, env, "accounts", "create", "--create", "--name", name, "--json")), &created)
	return created.APIKey
}

// exportCatalog is `farebox catalog export`, parsed.
func exportCatalog(t *testing.T, env map[string]string) *catalog.File {
	t.Helper()
	f, err := catalog.Parse([]byte(cli(t, env, "catalog", "export")))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// servedTicket is what the phone gets back for an activated ticket: its end
// and its inspection barcode, as text and as a PNG data URL.
type servedTicket struct {
	ValidUntil string `json:"valid_until"`
	Ticket     struct {
		Properties struct {
			Barcode struct{ Payload string } `json:"inspection_barcode"`
			PNG     string                   `json:"inspection_barcode_png"`
		} `json:"properties"`
	} `json:"ticket"`
}

// fetchTicket reads ticket id as the phone does (PATCH) and checks that its
// Apple Wallet pass is served as a zip.
func fetchTicket(t *testing.T, call func(method, path, key, body string) []byte, id string) servedTicket {
	t.Helper()
	var tk servedTicket
	_ = json.Unmarshal(call("PATCH", "/v9/ticketing/tickets/"+id+".json", "", ""), &tk)
	if pass := call("GET", "/v9/ticketing/passes/apple_wallet/"+id+".pkpass", "", ""); !bytes.HasPrefix(pass, []byte("PK")) {
		t.Errorf("pkpass is not a zip")
	}
	return tk
}

// png is the served barcode image, decoded from its data URL.
func (tk servedTicket) png(t *testing.T) []byte {
	t.Helper()
	const prefix = "data:image/png;base64,"
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(tk.Ticket.Properties.PNG, prefix))
	if err != nil || !strings.HasPrefix(tk.Ticket.Properties.PNG, prefix) {
		t.Fatalf("inspection_barcode_png %.40q: %v", tk.Ticket.Properties.PNG, err)
	}
	return b
}
