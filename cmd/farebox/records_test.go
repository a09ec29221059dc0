package main

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	recordsapp "github.com/farebox/farebox/internal/app/records"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
)

// TestInspectorsInspectPostAndExport: the operator creates an inspector
// with the CLI, `farebox inspect --post` posts a real ticket's verdict to
// the running service with its token, and `farebox records export`
// writes the day's records encrypted to an age recipient; decrypted with
// the identity they hold the ticket's issuance record (with a pseudonym,
// not the name) and the posted check. A revoked inspector's post fails.
func TestInspectorsInspectPostAndExport(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		env, _ := engineEnv(t, engine, "FAREBOX_ADDR", "127.0.0.1:0")
		apiKey := createAccount(t, env, "Records GmbH")
		added := cli(t, env, "inspectors", "add", "Kontrolle Süd")
		token := strings.TrimSpace(added[strings.LastIndex(strings.TrimSpace(added), "\n")+1:])
		if !strings.HasPrefix(token, "fbi_") || !strings.Contains(added, "Kontrolle Süd") {
			t.Fatalf("inspectors add printed %q", added)
		}
		if list := cli(t, env, "inspectors", "list"); !strings.Contains(list, "Kontrolle Süd") || !strings.Contains(list, token[:10]+"…") ||
			strings.Contains(list, token) || !strings.Contains(list, "active") {
			t.Fatalf("inspectors list: %s", list)
		}
		in := startServe(t, env)
		call := httpCaller(t, in.addr)
		ticketID := activateMonthly(t, call, apiKey, `{"photo_id_lite":{"first_name":"Jürgen","last_name":"Müller","birth_date":"1980-02-29"}}`)
		payload := fetchTicket(t, call, ticketID).Ticket.Properties.Barcode.Payload
		url := "http://" + in.addr + "/v1/inspection/records.json"
		out, err := inspectRun(env, []byte(payload), "--allow-test", "--post", url, "--inspector-token", token, "--stop-id", "de:11000:900100001", "--position", "52.52,13.41", "-")
		if err != nil || !strings.Contains(out, "POSTED as inspection record") || !strings.Contains(out, "ACCEPTED") {
			t.Fatalf("inspect --post: %v\n%s", err, out)
		}
		cli(t, env, "inspectors", "revoke", "Kontrolle Süd")
		if out, err := inspectRun(env, []byte(payload), "--allow-test", "--post", url, "--inspector-token", token, "-"); err == nil || !strings.Contains(err.Error(), "inspector_revoked") {
			t.Fatalf("a revoked inspector posted: %v\n%s", err, out)
		}
		if err := in.stop(); err != nil {
			t.Fatal(err)
		}

		id, err := age.GenerateX25519Identity()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		keyFile := testtool.WriteFile(t, dir, "pseudonym.key", []byte(strings.Repeat("5a", 32)+"\n"))
		outFile := filepath.Join(dir, "records.age")
		day := time.Now().In(clock.Berlin).Format("2006-01-02")
		cli(t, env, "records", "export", "--day", day, "--recipient", id.Recipient().String(), "--pseudonym-key", keyFile, "--output", outFile)
		plain := openExport(t, outFile, id)
		if bytes.Contains(plain, []byte("Müller")) || bytes.Contains(plain, []byte("1980-02-29")) {
			t.Fatalf("the export names the traveller: %s", plain)
		}
		var doc struct {
			Issuance []struct {
				TicketID  string `json:"ticket_id"`
				Pseudonym string `json:"traveller_pseudonym"`
			} `json:"issuance"`
			Inspections []struct {
				TicketID string  `json:"ticket_id"`
				Lat      float64 `json:"lat"`
			} `json:"inspections"`
		}
		if err := json.Unmarshal(plain, &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Issuance) != 1 || doc.Issuance[0].TicketID != ticketID || !strings.HasPrefix(doc.Issuance[0].Pseudonym, "p1:") ||
			len(doc.Inspections) != 1 || doc.Inspections[0].TicketID != ticketID || doc.Inspections[0].Lat != 52.52 {
			t.Fatalf("export %s", plain)
		}
		var raw struct {
			Inspections []map[string]any `json:"inspections"`
		}
		_ = json.Unmarshal(plain, &raw)
		if raw.Inspections[0]["outcome"] != "test_ticket" && raw.Inspections[0]["outcome"] != "valid" || raw.Inspections[0]["stop_id"] != "de:11000:900100001" {
			t.Fatalf("inspection %v", raw.Inspections[0])
		}
		// Without a key file the database's key is made once and kept.
		keyID := func() string {
			cli(t, env, "records", "export", "--day", day, "--kind", "issuance", "--recipient", "@"+testtool.WriteFile(t, dir, "rcpt", []byte("# reporting\n"+id.Recipient().String()+"\n")), "--output", outFile)
			var d struct {
				KeyID    string           `json:"pseudonym_key_id"`
				Issuance []map[string]any `json:"issuance"`
				Inspect  []map[string]any `json:"inspections"`
			}
			_ = json.Unmarshal(openExport(t, outFile, id), &d)
			if len(d.Issuance) != 1 || len(d.Inspect) != 0 || d.KeyID == "" {
				t.Fatalf("--kind issuance exported %+v", d)
			}
			return d.KeyID
		}
		if a, b := keyID(), keyID(); a != b {
			t.Fatalf("the database's pseudonym key changed between exports: %s, %s", a, b)
		}
	})
}

func openExport(t *testing.T, file string, id age.Identity) []byte {
	t.Helper()
	r := testtool.Must(age.Decrypt(bytes.NewReader(testtool.Must(os.ReadFile(file))(t)), id))(t)
	return testtool.Must(io.ReadAll(r))(t)
}

// TestServeRecordsExportDaily: serve with --records-export-dir writes the
// previous day's records file at start, encrypted to --records-recipient
// (the day's logic and the claim are TestRecordsDailyExport's, driven by
// the service clock); a recipient that is none, a missing one and a
// directory that is not one stop serve at start with the flag named.
func TestServeRecordsExportDaily(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		env, _ := engineEnv(t, engine, "FAREBOX_ADDR", "127.0.0.1:0")
		dir := t.TempDir()
		id, err := age.GenerateX25519Identity()
		if err != nil {
			t.Fatal(err)
		}
		with := func(kv ...string) map[string]string {
			e := maps.Clone(env)
			for i := 0; i+1 < len(kv); i += 2 {
				e[kv[i]] = kv[i+1]
			}
			return e
		}
		serveStops(t, "a recipient that is none", with("FAREBOX_RECORDS_EXPORT_DIR", dir, "FAREBOX_RECORDS_RECIPIENT", "age1nope"),
			"--records-recipient", "not an age recipient")
		serveStops(t, "no recipient", with("FAREBOX_RECORDS_EXPORT_DIR", dir), "--records-recipient: required with --records-export-dir")
		serveStops(t, "a missing recipient file", with("FAREBOX_RECORDS_EXPORT_DIR", dir, "FAREBOX_RECORDS_RECIPIENT", "@"+filepath.Join(dir, "none")), "--records-recipient")
		serveStops(t, "a missing directory", with("FAREBOX_RECORDS_EXPORT_DIR", filepath.Join(dir, "none"), "FAREBOX_RECORDS_RECIPIENT", id.Recipient().String()),
			"--records-export-dir")
		in := startServe(t, with("FAREBOX_RECORDS_EXPORT_DIR", dir, "FAREBOX_RECORDS_RECIPIENT", id.Recipient().String()))
		day := recordsapp.PreviousDay(time.Now())
		file := filepath.Join(dir, recordsapp.ExportFileName(day))
		for !strings.Contains(in.logs.String(), "records exported") {
			if strings.Contains(in.logs.String(), "records export failed") {
				t.Fatalf("serve: %s", in.logs)
			}
			time.Sleep(20 * time.Millisecond) // the first run follows the start at once
		}
		if err := in.stop(); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Day      string `json:"day"`
			Issuance []any  `json:"issuance"`
		}
		if err := json.Unmarshal(openExport(t, file, id), &doc); err != nil || doc.Day != day || doc.Issuance == nil {
			t.Fatalf("%s: %v %+v", file, err, doc)
		}
	})
}
