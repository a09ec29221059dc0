package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"encoding/json"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/blocklist"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
)

// TestBlocklistCommands (both engines): `farebox blocklist import` of a
// garbage file fails naming the problem and changes nothing; a list naming
// the served VDV ticket's organisation and number voids it (ticket JSON,
// then `farebox inspect --revocations` rejects its barcode with the
// reason); `farebox blocklist export` lists it under the same keys; a
// service with --blocklist-import fetches the source on its schedule from
// the stored cursor (since=0, then since=last_seq).
func TestBlocklistCommands(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		env, dataDir, apiKey, f := devProfileTrial(t, engine, "Blocklist GmbH", catalog.BarcodeVDV)
		dir := t.TempDir()
		setMonthly(f, func(p *catalog.Product) { p.BarcodeProductNumber = 9999 })
		b, _ := json.Marshal(f)
		cli(t, env, "catalog", "import", testtool.WriteFile(t, dir, "catalog.json", b))
		id, servedFile := servedDevBarcode(t, env, apiKey, dir, "VDV-KA barcodes: using a development PKI", vdv.IsBarcode, "VDV-KA static barcode")
		payload := testtool.Must(barcode.ParseInput(testtool.Must(os.ReadFile(servedFile))(t)))(t)
		trust, _, _, err := vdvTrust("", "", dataDir, false, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		v := testtool.Must(vdv.Verify(payload, trust, time.Now()))(t)
		number := strconv.FormatUint(uint64(v.Number), 10)

		var outb, errb bytes.Buffer
		err = run(context.Background(), []string{"blocklist", "import", testtool.WriteFile(t, dir, "garbage.json", []byte("{]")), "--source", "national"},
			envFrom(env), nil, &outb, &errb)
		if err == nil || !strings.Contains(err.Error(), "not a blocklist document") {
			t.Fatalf("garbage import: %v\n%s%s", err, outb.String(), errb.String())
		}
		list := `{"blocklist":{"format":"farebox-blocklist","version":1,"issuer":"Deutschlandtarifverbund","generated_at":"2026-06-15T10:00:00Z",` +
			`"since":0,"last_seq":12,"more":false,"vdv":[{"seq":12,"org":65000,"number":` + number + `,"instance":` + number +
			`,"target":"ticket","lock":"reject","reason":"Lastschrift zurückgegeben","valid_until":"2099-01-01T00:00:00Z"}],"uic":[]}}`
		out := cli(t, env, "blocklist", "import", testtool.WriteFile(t, dir, "national.json", []byte(list)), "--source", "national")
		testtool.Contains(t, out, "imported national: 1 entries, 1 name this service's tickets, 1 new, 1 tickets voided", "voided "+id)

		exported := cli(t, env, "blocklist", "export")
		l, err := blocklist.Parse([]byte(exported), nil)
		if err != nil || len(l.VDV) != 1 || l.VDV[0].Org != 65000 || l.VDV[0].Number != v.Number || !strings.Contains(l.VDV[0].Reason, "blocklist national: Lastschrift") {
			t.Errorf("export: %+v %v\n%s", l, err, exported)
		}

		// The scheduled import asks from its stored cursor.
		var mu sync.Mutex
		var asked []string
		source := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			asked = append(asked, r.URL.Query().Get("since"))
			mu.Unlock()
			_, _ = w.Write([]byte(strings.Replace(list, `"last_seq":12`, `"last_seq":13`, 1)))
		}))
		defer source.Close()
		senv := map[string]string{}
		for k, val := range env {
			senv[k] = val
		}
		senv["FAREBOX_BLOCKLIST_IMPORT"], senv["FAREBOX_BLOCKLIST_INTERVAL"], senv["FAREBOX_BLOCKLIST_SOURCE"] = source.URL+"/list.json", "1s", "national"
		in := startServe(t, senv)
		call := httpCaller(t, in.addr)
		if tk := string(call("PATCH", "/v9/ticketing/tickets/"+id+".json", "", "")); !strings.Contains(tk, `"valid":false`) ||
			!strings.Contains(tk, "revoked: blocklist national: Lastschrift zurückgegeben") {
			t.Errorf("ticket after the import: %.400s", tk)
		}
		feed := testtool.WriteFile(t, dir, "revocations.json", call("GET", "/v1/inspection/revocations.json", "", ""))
		began := time.Now()
		for {
			mu.Lock()
			n := len(asked)
			mu.Unlock()
			if n >= 2 || time.Since(began) > time.Minute {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := in.stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if len(asked) < 2 || asked[0] != "12" || asked[1] != "13" {
			t.Errorf("the scheduled import asked since=%v, want 12 (the CLI import's cursor) then 13", asked)
		}
		mu.Unlock()
		if !strings.Contains(in.logs.String(), "blocklist import scheduled") {
			t.Errorf("serve log:\n%s", in.logs.String())
		}
		out, err = inspectRun(env, nil, "--allow-test", "--revocations", feed, servedFile)
		if !errors.Is(err, errNotAcceptable) || !strings.Contains(out, "REJECTED: the ticket was revoked: blocklist national: Lastschrift zurückgegeben") {
			t.Errorf("inspect after the import: %v\n%s", err, out)
		}
	})
}
