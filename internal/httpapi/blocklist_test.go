package httpapi_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/uic"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/blocklist"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/wallet/apple/apnstest"
)

// deviceList is an exported blocklist as an inspection device reads it,
// knowing only the documented format (docs/blocklist.md): the JSON read
// generically, the signature checked with the public keys of keys.json.
type deviceList struct {
	lastSeq int64
	more    bool
	vdv     map[string]map[string]any // "org/number" → entry
	uic     map[string]map[string]any // "rics/ticket_number" → entry
}

// readDeviceList verifies and reads body with keysJSON (the bytes of
// GET /v1/inspection/keys.json), without any of farebox's types.
func readDeviceList(body, keysJSON []byte) (*deviceList, error) {
	var env struct {
		Blocklist json.RawMessage `json:"blocklist"`
		Signature struct{ Kid, Alg, Sig string }
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, err
	}
	var ks struct {
		Keys []struct {
			Kid         string `json:"kid"`
			PublicKey   string `json:"public_key"`
			Environment string `json:"environment"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(keysJSON, &ks); err != nil {
		return nil, err
	}
	verified := false
	for _, k := range ks.Keys {
		pub, _ := base64.RawURLEncoding.DecodeString(k.PublicKey)
		sig, _ := base64.RawURLEncoding.DecodeString(env.Signature.Sig)
		if k.Kid == env.Signature.Kid && k.Environment == "live" && env.Signature.Alg == "Ed25519" && len(pub) == ed25519.PublicKeySize &&
			ed25519.Verify(pub, append([]byte("farebox blocklist\x00"), env.Blocklist...), sig) {
			verified = true
		}
	}
	if !verified {
		return nil, fmt.Errorf("signature by key %q does not verify", env.Signature.Kid)
	}
	var l map[string]any
	d := json.NewDecoder(bytes.NewReader(env.Blocklist))
	d.UseNumber()
	if err := d.Decode(&l); err != nil {
		return nil, err
	}
	if l["format"] != "farebox-blocklist" || l["version"] != json.Number("1") {
		return nil, fmt.Errorf("format %v version %v", l["format"], l["version"])
	}
	out := &deviceList{vdv: map[string]map[string]any{}, uic: map[string]map[string]any{}}
	out.lastSeq, _ = l["last_seq"].(json.Number).Int64()
	out.more, _ = l["more"].(bool)
	for _, e := range l["vdv"].([]any) {
		m := e.(map[string]any)
		out.vdv[fmt.Sprint(m["org"])+"/"+fmt.Sprint(m["number"])] = m
	}
	for _, e := range l["uic"].([]any) {
		m := e.(map[string]any)
		out.uic[fmt.Sprint(m["rics"])+"/"+fmt.Sprint(m["ticket_number"])] = m
	}
	return out, nil
}

// uicKeyOf is the company and ticket key a UIC reader takes from the
// U_HEAD record of container b ("rics/ticket_number").
func uicKeyOf(t *testing.T, b []byte) string {
	t.Helper()
	c, err := uic.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Records {
		if r.Tag == "U_HEAD" && len(r.Data) >= 24 {
			rics, _ := strconv.Atoi(string(r.Data[:4]))
			return strconv.Itoa(rics) + "/" + strings.TrimSpace(string(r.Data[4:24]))
		}
	}
	t.Fatal("no U_HEAD record")
	return ""
}

// vdvKeyOf is the organisation and Berechtigungsnummer a VDV reader takes
// from barcode b's verified header ("org/number").
func vdvKeyOf(t *testing.T, b []byte, pki *vdv.DevPKI, now time.Time) string {
	t.Helper()
	tr := &vdv.Trust{}
	if _, err := tr.AddRoot(pki.Root, true); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.AddCA(pki.CA, now); err != nil {
		t.Fatal(err)
	}
	v, err := vdv.Verify(b, tr, now)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(v.Org) + "/" + strconv.FormatUint(uint64(v.Number), 10)
}

// profileCatalog gives day tickets the UIC 918.3 profile and monthly
// tickets the VDV-KA one.
func profileCatalog(t *testing.T, e *apitest.Env) map[string]string {
	t.Helper()
	ids := productIDs(t, e)
	f := e.Products.Catalog().File()
	for i := range f.Products {
		switch f.Products[i].ID {
		case ids["day/adult"]:
			f.Products[i].BarcodeProfile, f.Products[i].BarcodeProductNumber = catalog.BarcodeUIC, 4711
		case ids["month/adult"]:
			f.Products[i].BarcodeProfile, f.Products[i].BarcodeProductNumber = catalog.BarcodeVDV, 9999
		}
	}
	if err := e.Products.Import(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	return ids
}

// profileTickets orders and activates a farebox, a UIC and a VDV ticket;
// it returns the order and the ticket ids by profile.
func profileTickets(t *testing.T, e *apitest.Env, ids map[string]string) (orderResp, map[string]string) {
	t.Helper()
	o := order(t, e, e.LiveKey, ids["single/adult"], ids["day/adult"], ids["month/adult"])
	m := medium("Jürgen", "Müller-Lüdenscheidt", "1990-02-28")
	return o, map[string]string{
		catalog.BarcodeFarebox: mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), map[string]any{"identification_medium": m, "activation_start_datetime": "2026-06-15T12:00:00+02:00"}),
		catalog.BarcodeUIC:     mustActivate(t, e, "v9", str(o.Coupons[1]["id"]), map[string]any{"identification_medium": m, "activation_start_datetime": "2026-06-15T10:30:00Z"}),
		catalog.BarcodeVDV: mustActivate(t, e, "v9", str(o.Coupons[2]["id"]), map[string]any{"identification_medium": m,
			"tariff_settings": map[string]any{"german_postal_code": "01067"}, "activation_start_datetime": "2026-06-01T00:00:00+0200"}),
	}
}

// TestBlocklistExport (both engines): a restored-away UIC 918.3 ticket and
// a restored-away VDV-KA ticket are found in GET
// /v1/inspection/blocklist.json by a reader that knows only the list
// format, under the keys the ticket barcodes themselves carry (U_HEAD
// company and ticket key; VDV organisation and Berechtigungsnummer); the
// replacement tickets and a revoked farebox-profile ticket are not in
// either list; the list is signed (a changed byte fails), incremental
// (since, limit, more) and refuses bad parameters.
func TestBlocklistExport(t *testing.T) {
	_, pki := profileWalletIssuers(t)
	apitest.ForEachEngine(t, apitest.Options{Configure: withWalletOptions(profileWalletOptions(t, true))}, func(t *testing.T, e *apitest.Env) {
		keys := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body
		get := func(query string) (*deviceList, []byte) {
			t.Helper()
			body := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/blocklist.json" + query}).Body
			l, err := readDeviceList(body, keys)
			if err != nil {
				t.Fatalf("blocklist%s: %v\n%s", query, err, body)
			}
			return l, body
		}
		if l, _ := get(""); len(l.vdv)+len(l.uic) != 0 || l.lastSeq != 0 || l.more {
			t.Fatalf("empty service: %+v", l)
		}
		ids := profileCatalog(t, e)
		o, tids := profileTickets(t, e, ids)
		barcodes := map[string][]byte{}
		for p, id := range tids {
			barcodes[p] = ticketPayload(t, e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + id + ".json"}).Map(t))
		}
		if _, err := e.App.RevokeTicket(t.Context(), idempotency.Claim{}, tids[catalog.BarcodeFarebox], "Fahrgeld erstattet"); err != nil {
			t.Fatal(err)
		}
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders/" + o.OrderID + "/restore.json", Key: e.LiveKey,
			Body: map[string]any{"restore_secret": o.RestoreSecret, "coupon_ids": []string{str(o.Coupons[1]["id"]), str(o.Coupons[2]["id"])}}})
		l, body := get("")
		uicKey, vdvKey := uicKeyOf(t, barcodes[catalog.BarcodeUIC]), vdvKeyOf(t, barcodes[catalog.BarcodeVDV], pki, e.Clock.Now())
		if len(l.uic) != 1 || len(l.vdv) != 1 || l.uic[uicKey] == nil || l.vdv[vdvKey] == nil || l.lastSeq != 3 || l.more {
			t.Fatalf("want the UIC ticket %s and the VDV ticket %s, last_seq 3:\n%s", uicKey, vdvKey, body)
		}
		if v := l.vdv[vdvKey]; v["target"] != "ticket" || v["lock"] != "reject" || !strings.HasPrefix(str(v["reason"]), "restored: ") ||
			fmt.Sprint(v["instance"]) != strings.Split(vdvKey, "/")[1] {
			t.Errorf("VDV entry %v", v)
		}
		if u := l.uic[uicKey]; u["reference"] != tids[catalog.BarcodeUIC] || !strings.HasPrefix(str(u["reason"]), "restored: ") {
			t.Errorf("UIC entry %v", u)
		}
		// A changed byte fails the signature.
		tampered := bytes.Replace(body, []byte(`"lock":"reject"`), []byte(`"lock":"rejekt"`), 1)
		if _, err := readDeviceList(tampered, keys); err == nil {
			t.Error("a changed list verified")
		}
		// Incremental: nothing after last_seq; one entry per page with limit=1.
		if l, _ := get("?since=3"); len(l.uic)+len(l.vdv) != 0 || l.lastSeq != 3 || l.more {
			t.Errorf("since=3: %+v", l)
		}
		p1, _ := get("?since=0&limit=1") // seq 1 is the farebox ticket: in no list
		if len(p1.uic)+len(p1.vdv) != 0 || p1.lastSeq != 1 || !p1.more {
			t.Errorf("page 1: %+v", p1)
		}
		p2, _ := get("?since=1&limit=1")
		p3, _ := get("?since=2&limit=1")
		if len(p2.uic)+len(p2.vdv) != 1 || p2.lastSeq != 2 || !p2.more || len(p3.uic)+len(p3.vdv) != 1 || p3.lastSeq != 3 || p3.more {
			t.Errorf("pages 2 and 3: %+v %+v", p2, p3)
		}
		for _, q := range []string{"?since=-1", "?since=x", "?limit=0", "?limit=10001", "?limit=-5"} {
			r := e.Must(400, apitest.Req{Method: "GET", Path: "/v1/inspection/blocklist.json" + q})
			if !strings.Contains(string(r.Body), "invalid_parameter") {
				t.Errorf("%s: %s", q, r.Body)
			}
		}
	})
}

// sourceList is an external blocklist document signed with priv under key
// id kid, written by hand in the documented format.
func sourceList(t testing.TB, priv ed25519.PrivateKey, kid string, body string) []byte {
	t.Helper()
	sig := ed25519.Sign(priv, append([]byte("farebox blocklist\x00"), body...))
	return []byte(`{"blocklist":` + body + `,"signature":{"kid":"` + kid + `","alg":"Ed25519","sig":"` + base64.RawURLEncoding.EncodeToString(sig) + `"}}`)
}

// sourceKeys is the keys.json of a list source with key kid.
func sourceKeys(t testing.TB, pub ed25519.PublicKey, kid string) *barcode.Keyring {
	t.Helper()
	kr, err := barcode.ParseKeySet([]byte(`{"keys":[{"kid":"` + kid + `","alg":"Ed25519","public_key":"` +
		base64.RawURLEncoding.EncodeToString(pub) + `","active":true,"environment":"live"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// listBody is a blocklist body with the given entries' JSON.
func listBody(lastSeq int, vdvEntries, uicEntries string) string {
	return `{"format":"farebox-blocklist","version":1,"issuer":"Deutschlandtarifverbund","generated_at":"2026-06-15T10:00:00Z",` +
		`"since":0,"last_seq":` + strconv.Itoa(lastSeq) + `,"more":false,"vdv":[` + vdvEntries + `],"uic":[` + uicEntries + `]}`
}

// TestBlocklistImport (both engines): an external list naming the
// service's VDV ticket (organisation and Berechtigungsnummer from its
// barcode) and UIC ticket (RICS and U_HEAD ticket key) voids both: the
// ticket JSON says invalid with the reason, the pass on the phone is
// pushed through the local APNs and served voided, and `farebox inspect`
// with the revocation feed rejects the VDV barcode with the reason.
// Garbage, oversized, malformed, unsigned and wrongly signed lists are
// refused with their code and change nothing; importing the same list
// again changes nothing.
func TestBlocklistImport(t *testing.T) {
	uicIss, pki := profileWalletIssuers(t)
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		srv := apnstest.New(t, testPassType)
		e := apitest.New(t, engine, apitest.Options{Workers: 1, Configure: withAppleUpdatesOf(t, srv, profileWalletOptions(t, true))})
		ctx := t.Context()
		ids := profileCatalog(t, e)
		_, tids := profileTickets(t, e, ids)
		vdvID, uicID := tids[catalog.BarcodeVDV], tids[catalog.BarcodeUIC]
		vdvBarcode := ticketPayload(t, e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + vdvID + ".json"}).Map(t))
		uicBarcode := ticketPayload(t, e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + uicID + ".json"}).Map(t))
		phone := registerOnPhone(t, e, srv, vdvID)
		vdvOrg, vdvNumber, _ := strings.Cut(vdvKeyOf(t, vdvBarcode, pki, e.Clock.Now()), "/")
		uicRICS, uicNumber, _ := strings.Cut(uicKeyOf(t, uicBarcode), "/")
		iss := app.BlocklistIssuer{VDVOrg: pki.Issuer.Org, UICRICS: uicIss.RICS}

		pub, priv, _ := ed25519.GenerateKey(nil)
		keys := sourceKeys(t, pub, "7")
		entries := `{"seq":5,"org":` + vdvOrg + `,"number":` + vdvNumber + `,"instance":` + vdvNumber + `,"target":"ticket","lock":"reject","reason":"Lastschrift zurückgegeben","valid_until":"2026-07-31T21:59:59Z"},` +
			`{"seq":6,"org":6310,"number":` + vdvNumber + `,"instance":1,"target":"ticket","lock":"reject","reason":"another seller's ticket","valid_until":"2026-07-31T21:59:59Z"}`
		uicEntries := `{"seq":7,"rics":` + uicRICS + `,"ticket_number":"` + uicNumber + `","reason":"Fahrgeld erstattet","valid_until":"2026-07-31T21:59:59Z"}`
		good := sourceList(t, priv, "7", listBody(7, entries, uicEntries))

		// Refusals: each names its problem and nothing changes.
		_, otherPriv, _ := ed25519.GenerateKey(nil)
		huge := append([]byte(`{"blocklist":{"x":"`), bytes.Repeat([]byte("a"), blocklist.MaxBytes)...)
		for name, c := range map[string]struct {
			doc  []byte
			keys *barcode.Keyring
			code string
		}{
			"garbage":         {[]byte("\x00\xffnot json"), nil, blocklist.CodeInvalidBlocklist},
			"oversized":       {huge, nil, blocklist.CodeBlocklistTooLarge},
			"bad number":      {sourceList(t, priv, "7", listBody(1, strings.Replace(entries, `"number":`+vdvNumber, `"number":0`, 1), "")), nil, blocklist.CodeInvalidBlocklist},
			"unknown field":   {sourceList(t, priv, "7", strings.Replace(listBody(1, "", ""), `"more"`, `"moar":1,"more"`, 1)), nil, blocklist.CodeInvalidBlocklist},
			"wrong version":   {sourceList(t, priv, "7", strings.Replace(listBody(1, "", ""), `"version":1`, `"version":2`, 1)), nil, blocklist.CodeInvalidBlocklist},
			"bad lock":        {sourceList(t, priv, "7", listBody(1, strings.Replace(entries, `"reject"`, `"maybe"`, 1), "")), nil, blocklist.CodeInvalidBlocklist},
			"other signer":    {sourceList(t, otherPriv, "7", listBody(7, entries, uicEntries)), keys, blocklist.CodeBlocklistSignature},
			"unsigned":        {[]byte(`{"blocklist":` + listBody(7, entries, uicEntries) + `}`), keys, blocklist.CodeBlocklistSignature},
			"changed a byte":  {bytes.Replace(good, []byte("zurückgegeben"), []byte("zurueckgegeben"), 1), keys, blocklist.CodeBlocklistSignature},
			"data after list": {append(append([]byte{}, good...), []byte(` {}`)...), nil, blocklist.CodeInvalidBlocklist},
		} {
			_, err := blocklist.Parse(c.doc, c.keys)
			if ae := apperr.As(err); ae == nil || ae.Code != c.code || !strings.HasPrefix(ae.Msg, "blocklist") {
				t.Errorf("%s: %v, want %s", name, err, c.code)
			}
		}
		if l, err := blocklist.Parse(good, keys); err != nil {
			t.Fatal(err)
		} else if _, err := e.App.ImportBlocklist(ctx, "Not A Name!", l, iss); apperr.As(err) == nil || apperr.As(err).Code != blocklist.CodeInvalidBlocklist {
			t.Errorf("bad source name: %v", err)
		}
		for _, table := range []string{"blocklist_entries", "blocklist_sources", "revocations"} {
			if n, _ := e.Store.Read().CountRows(ctx, table); n != 0 {
				t.Fatalf("%d rows in %s after refusals", n, table)
			}
		}
		if tk := ticket(t, e, vdvID); tk["valid"] != true || len(srv.Pushes()) != 0 {
			t.Fatalf("after refusals: valid=%v, %d pushes", tk["valid"], len(srv.Pushes()))
		}

		l, err := blocklist.Parse(good, keys)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.App.ImportBlocklist(ctx, "national", l, iss)
		if err != nil {
			t.Fatal(err)
		}
		if r.Entries != 3 || r.Ours != 2 || r.Added != 2 || len(r.Voided) != 2 || r.LastSeq != 7 {
			t.Errorf("import: %+v", r)
		}
		for id, reason := range map[string]string{vdvID: "revoked: blocklist national: Lastschrift zurückgegeben", uicID: "revoked: blocklist national: Fahrgeld erstattet"} {
			tk := ticket(t, e, id)
			rev, _ := properties(tk)["revocation"].(map[string]any)
			if tk["valid"] != false || tk["revocation_reason"] != reason || rev["kind"] != "revoked" {
				t.Errorf("ticket %s: valid=%v reason=%v revocation=%v", id, tk["valid"], tk["revocation_reason"], rev)
			}
		}
		waitFor(t, "the push after the import", func() bool { return pushesTo(srv, pushToken1, 200) == 1 })
		v, _ := passFiles(t, e.Must(200, apitest.Req{Method: "GET", Path: "/wallet/apple/v1/passes/" + testPassType + "/" + vdvID, Header: phone.auth}).Body)
		if !v.Voided {
			t.Error("the pass on the phone is not voided after the import")
		}
		// Inspection with the revocation feed rejects the VDV barcode with the reason.
		kr, err := barcode.ParseKeySet(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body)
		if err != nil {
			t.Fatal(err)
		}
		feed, err := barcode.VerifyFeed(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/revocations.json"}).Body, kr)
		if err != nil {
			t.Fatal(err)
		}
		tr := &vdv.Trust{}
		if _, err := tr.AddRoot(pki.Root, true); err != nil {
			t.Fatal(err)
		}
		if _, err := tr.AddCA(pki.CA, e.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		rep := vdv.Inspect(vdvBarcode, tr, e.Clock.Now())
		feed.Check(&rep)
		if rep.Revoked == nil || rep.Revoked.Reason != "blocklist national: Lastschrift zurückgegeben" || rep.Acceptable(true) {
			t.Errorf("inspection: revoked %+v, acceptable %v", rep.Revoked, rep.Acceptable(true))
		}
		// The same list again: nothing new, no pass update queued.
		jobsBefore, _ := e.Store.Read().CountRows(ctx, "jobs")
		if r, err := e.App.ImportBlocklist(ctx, "national", l, iss); err != nil || r.Added != 0 || len(r.Voided) != 0 {
			t.Errorf("second import: %+v %v", r, err)
		}
		if c, err := e.App.BlocklistCursor(ctx, "national"); err != nil || c != 7 {
			t.Errorf("cursor %d %v", c, err)
		}
		stored, err := e.Store.Read().BlocklistEntries(ctx, "national")
		if err != nil || len(stored) != 2 {
			t.Fatalf("stored entries %+v %v", stored, err)
		}
		for _, s := range stored {
			if (s.Scheme == "vdv" && s.TicketID != vdvID) || (s.Scheme == "uic" && s.TicketID != uicID) {
				t.Errorf("entry %+v", s)
			}
		}
		if n, _ := e.Store.Read().CountRows(ctx, "jobs"); n > jobsBefore {
			t.Errorf("the second import queued %d jobs", n-jobsBefore)
		}
	})
}

// TestBlocklistImportToPush10000 measures, on both engines, the time from
// a 10,000-entry list appearing at its source (an HTTP server) to the
// voided pass's push at the local APNs: fetch, parse and verify, import
// (every entry names this service's VDV organisation; one names the
// ticket whose pass is on the phone), the job runner's pass update and
// push. The scheduled import adds up to one --blocklist-interval (30 s by
// default) before the fetch. Full suite only (load-shaped).
func TestBlocklistImportToPush10000(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Load)
	uicIss, pki := profileWalletIssuers(t)
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		srv := apnstest.New(t, testPassType)
		e := apitest.New(t, engine, apitest.Options{Workers: 1, Configure: withAppleUpdatesOf(t, srv, profileWalletOptions(t, true))})
		ids := profileCatalog(t, e)
		_, tids := profileTickets(t, e, ids)
		vdvID := tids[catalog.BarcodeVDV]
		vdvBarcode := ticketPayload(t, e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + vdvID + ".json"}).Map(t))
		registerOnPhone(t, e, srv, vdvID)
		org, number, _ := strings.Cut(vdvKeyOf(t, vdvBarcode, pki, e.Clock.Now()), "/")
		n, _ := strconv.Atoi(number)
		pub, priv, _ := ed25519.GenerateKey(nil)
		var entries []string
		for i := range 10000 {
			num := 1_000_000 + i // numbers no ticket holds
			if i == 5000 {
				num = n
			}
			entries = append(entries, `{"seq":`+strconv.Itoa(i+1)+`,"org":`+org+`,"number":`+strconv.Itoa(num)+`,"instance":`+strconv.Itoa(num)+
				`,"target":"ticket","lock":"reject","reason":"Lastschrift zurückgegeben","valid_until":"2026-07-31T21:59:59Z"}`)
		}
		doc := sourceList(t, priv, "7", listBody(10000, strings.Join(entries, ","), ""))
		source := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(doc) }))
		defer source.Close()
		keys := sourceKeys(t, pub, "7")

		began := time.Now()
		res, err := http.Get(source.URL + "/blocklist.json?since=0")
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		l, err := blocklist.Parse(data, keys)
		if err != nil {
			t.Fatal(err)
		}
		parsed := time.Since(began)
		r, err := e.App.ImportBlocklist(t.Context(), "national", l, app.BlocklistIssuer{VDVOrg: pki.Issuer.Org, UICRICS: uicIss.RICS})
		if err != nil || r.Added != 10000 || len(r.Voided) != 1 || r.Voided[0] != vdvID {
			t.Fatalf("import %+v (voided %v), %v", r.Entries, r.Voided, err)
		}
		imported := time.Since(began)
		waitFor(t, "the push after the import", func() bool { return pushesTo(srv, pushToken1, 200) == 1 })
		t.Logf("%s: %d bytes; fetch+parse+verify %v, import %v, pass pushed %v after the list appeared",
			engine, len(data), parsed.Round(time.Millisecond), (imported - parsed).Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	})
}
