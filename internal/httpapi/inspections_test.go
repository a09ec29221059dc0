package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"filippo.io/age"

	"github.com/farebox/farebox/internal/apitest"
	recordsapp "github.com/farebox/farebox/internal/app/records"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/records"
	"github.com/farebox/farebox/internal/testtool"
)

const recordsPath = "/v1/inspection/records.json"

// check is one inspection record as a device posts it.
func check(id, outcome string) map[string]any {
	return map[string]any{"record_id": id, "ticket_id": "farebox-ticket-14c1fb78-74c8-44f4-8bde-2b2104beacbb",
		"barcode_sha256": strings.Repeat("ab", 32), "outcome": outcome, "checked_at": "2026-06-15T09:58:12Z",
		"device_time": "2026-06-15T10:00:03+02:00", "place": map[string]any{"lat": 52.5251, "lon": 13.3694, "stop_id": "de:11000:900003201"}}
}

func batch(checks ...map[string]any) map[string]any { return map[string]any{"records": checks} }

func inspector(t testing.TB, e *apitest.Env, name string) string {
	t.Helper()
	_, token, err := e.Records.AddInspector(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func inspectionRows(t testing.TB, e *apitest.Env) int {
	t.Helper()
	n, err := e.Store.Read().CountRows(context.Background(), "inspection_records")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wantError checks an error answer's status, code and named field.
func wantRefusal(t *testing.T, r *apitest.Resp, status int, code, field string) {
	t.Helper()
	m := r.Map(t)
	if r.Status != status || m["code"] != code {
		t.Fatalf("want %d %s, got %d %s", status, code, r.Status, r.Body)
	}
	if field != "" {
		d, _ := m["details"].([]any)
		if len(d) == 0 || d[0].(map[string]any)["field"] != field {
			t.Fatalf("want the field %s named, got %s", field, r.Body)
		}
	}
}

func TestInspectionRecordsPost(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		token := inspector(t, e, "Kontrolle 7")
		post := func(body any, hdr map[string]string) *apitest.Resp {
			return e.Do(apitest.Req{Method: "POST", Path: recordsPath, Key: token, Body: body, Header: hdr})
		}
		good := batch(check("rec-1", "valid"), map[string]any{"record_id": "rec-2", "outcome": "unreadable", "checked_at": "2026-06-15T09:59:00Z"})
		first := post(good, nil)
		var a recordsapp.BatchResponse
		if first.Status != 200 {
			t.Fatalf("good batch: %d %s", first.Status, first.Body)
		}
		first.JSON(t, &a)
		if a.Object != "inspection_batch" || a.Received != 2 || a.Created != 2 || a.Duplicates != 0 || len(a.Records) != 2 ||
			a.Records[0].RecordID != "rec-1" || a.Records[1].RecordID != "rec-2" || a.Records[0].Duplicate ||
			!strings.HasPrefix(a.Records[0].ID, "farebox-inspection-") || a.Records[0].ID == a.Records[1].ID {
			t.Fatalf("good batch answered %s", first.Body)
		}
		// The same batch again (the answer was lost): stored once, same ids.
		var b recordsapp.BatchResponse
		e.Must(200, apitest.Req{Method: "POST", Path: recordsPath, Key: token, Body: good}).JSON(t, &b)
		if b.Created != 0 || b.Duplicates != 2 || b.Records[0].ID != a.Records[0].ID || b.Records[1].ID != a.Records[1].ID || !b.Records[1].Duplicate {
			t.Fatalf("repeat answered %+v, first %+v", b, a)
		}
		// A repeat inside a bigger batch: only the new check is stored.
		var c recordsapp.BatchResponse
		e.Must(200, apitest.Req{Method: "POST", Path: recordsPath, Key: token, Body: batch(check("rec-1", "valid"), check("rec-3", "revoked"))}).JSON(t, &c)
		if c.Created != 1 || c.Duplicates != 1 || inspectionRows(t, e) != 3 {
			t.Fatalf("mixed batch answered %+v with %d rows", c, inspectionRows(t, e))
		}
		// The Idempotency-Key replays the whole answer.
		k := map[string]string{"Idempotency-Key": "batch-4"}
		r1, r2 := post(batch(check("rec-4", "expired")), k), post(batch(check("rec-4", "expired")), k)
		if r1.Status != 200 || r2.Status != 200 || !bytes.Equal(r1.Body, r2.Body) || r2.Header.Get("Idempotency-Replayed") != "true" {
			t.Fatalf("idempotent replay: %d %s / %d %s %v", r1.Status, r1.Body, r2.Status, r2.Body, r2.Header)
		}
		before := inspectionRows(t, e)
		bad := []struct {
			body          any
			status        int
			code, field   string
			contentLength int
		}{
			{batch(check("x1", "valid"), check("x2", "lost")), 400, recordsapp.CodeUnknownOutcome, "/records/1/outcome", 0},
			{batch(check("x1", "")), 400, recordsapp.CodeUnknownOutcome, "/records/0/outcome", 0},
			{batch(), 400, recordsapp.CodeInvalidInspectionRecord, "/records", 0},
			{batch(check("", "valid")), 400, recordsapp.CodeInvalidInspectionRecord, "/records/0/record_id", 0},
			{batch(check("x1", "valid"), check("x1", "valid")), 400, recordsapp.CodeInvalidInspectionRecord, "/records/1/record_id", 0},
			{batch(withField(check("x1", "valid"), "checked_at", "yesterday")), 400, recordsapp.CodeInvalidInspectionRecord, "/records/0/checked_at", 0},
			{batch(withField(check("x1", "valid"), "checked_at", "2026-06-15T11:00:00Z")), 400, recordsapp.CodeInvalidInspectionRecord, "/records/0/checked_at", 0},
			{batch(withField(check("x1", "valid"), "barcode_sha256", "ABC")), 400, recordsapp.CodeInvalidInspectionRecord, "/records/0/barcode_sha256", 0},
			{batch(withField(check("x1", "valid"), "place", map[string]any{"lat": 91, "lon": 0})), 400, recordsapp.CodeInvalidInspectionRecord, "/records/0/place/lat", 0},
			{batch(withField(check("x1", "valid"), "place", map[string]any{"lat": 50})), 400, recordsapp.CodeInvalidInspectionRecord, "/records/0/place", 0},
			{batch(map[string]any{"record_id": "x1", "outcome": "valid", "checked_at": "2026-06-15T09:00:00Z"}), 400, recordsapp.CodeInvalidInspectionRecord, "/records/0/ticket_id", 0},
			{batch(withField(check("x1", "valid"), "name", "Max")), 400, "unknown_field", "/records/0/name", 0},
			{manyChecks(records.MaxBatch + 1), 413, recordsapp.CodeInspectionBatchTooLarge, "/records", 0},
			{`{"records":[` + strings.Repeat(" ", 70<<10) + `]}`, 413, "body_too_large", "", 0},
		}
		for i, c := range bad {
			r := post(c.body, map[string]string{"Idempotency-Key": fmt.Sprintf("bad-%d", i)})
			wantRefusal(t, r, c.status, c.code, c.field)
		}
		if n := inspectionRows(t, e); n != before {
			t.Fatalf("refused batches wrote %d rows", n-before)
		}
		// The largest batch passes.
		var big recordsapp.BatchResponse
		e.Must(200, apitest.Req{Method: "POST", Path: recordsPath, Key: token, Body: manyChecks(records.MaxBatch)}).JSON(t, &big)
		if big.Created != records.MaxBatch {
			t.Fatalf("largest batch created %d", big.Created)
		}
		// Who may post: a device token, not a partner's key; a revoked device not.
		wantRefusal(t, e.Do(apitest.Req{Method: "POST", Path: recordsPath, Body: good}), 401, "invalid_authorization_header", "")
		wantRefusal(t, e.Do(apitest.Req{Method: "POST", Path: recordsPath, Key: e.LiveKey, Body: good}), 401, recordsapp.CodeInvalidInspectorToken, "")
		wantRefusal(t, e.Do(apitest.Req{Method: "POST", Path: recordsPath, Key: token + "x", Body: good}), 401, recordsapp.CodeInvalidInspectorToken, "")
		if ok, err := e.Records.RevokeInspector(context.Background(), "Kontrolle 7"); !ok || err != nil {
			t.Fatal(ok, err)
		}
		wantRefusal(t, post(batch(check("rec-9", "valid")), nil), 401, recordsapp.CodeInspectorRevoked, "")
		if _, _, err := e.Records.AddInspector(context.Background(), "Kontrolle 7"); err == nil {
			t.Fatal("a second inspector of the same name was created")
		}
	})
}

func withField(m map[string]any, k string, v any) map[string]any {
	m[k] = v
	return m
}

func manyChecks(n int) map[string]any {
	cs := make([]map[string]any, n)
	for i := range cs {
		cs[i] = map[string]any{"record_id": fmt.Sprintf("b%d", i), "ticket_id": "t", "outcome": "valid", "checked_at": "2026-06-15T09:00:00Z"}
	}
	return batch(cs...)
}

func TestInspectionRecordsRateLimit(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{Configure: func(d *httpapi.Deps) {
		d.InspectorLimit = &httpapi.RateLimits{Rate: 0.01, Burst: 2}
	}}, func(t *testing.T, e *apitest.Env) {
		one, other := inspector(t, e, "A"), inspector(t, e, "B")
		for i := 0; i < 2; i++ {
			e.Must(200, apitest.Req{Method: "POST", Path: recordsPath, Key: one, Body: batch(check(fmt.Sprint(i), "valid"))})
		}
		r := e.Do(apitest.Req{Method: "POST", Path: recordsPath, Key: one, Body: batch(check("2", "valid"))})
		wantRefusal(t, r, 429, "rate_limited", "")
		if r.Header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
		// Another device has its own budget.
		e.Must(200, apitest.Req{Method: "POST", Path: recordsPath, Key: other, Body: batch(check("2", "valid"))})
		if n := inspectionRows(t, e); n != 3 {
			t.Fatalf("%d rows, want 3", n)
		}
	})
}

// Two devices' connections post the same batch at once (a retry racing
// the first attempt): each check is stored once, and every answer names
// the same stored ids.
func TestInspectionRecordsConcurrentTwins(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		token := inspector(t, e, "Twin")
		body := batch(check("t-1", "valid"), check("t-2", "copied"), check("t-3", "replaced"))
		const n = 6
		answers := make([]recordsapp.BatchResponse, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r := e.Do(apitest.Req{Method: "POST", Path: recordsPath, Key: token, Body: body})
				if r.Status != 200 {
					t.Errorf("twin %d: %d %s", i, r.Status, r.Body)
					return
				}
				_ = json.Unmarshal(r.Body, &answers[i])
			}(i)
		}
		wg.Wait()
		created := 0
		for _, a := range answers {
			created += a.Created
			for j, rec := range a.Records {
				if rec.ID != answers[0].Records[j].ID {
					t.Fatalf("twins answered different ids: %+v / %+v", a, answers[0])
				}
			}
		}
		if created != 3 || inspectionRows(t, e) != 3 {
			t.Fatalf("created %d in the answers, %d rows; want 3", created, inspectionRows(t, e))
		}
	})
}

// FuzzInspectionRecords sends arbitrary bodies to the endpoint: no input
// causes a 5xx or a panic, and a refused batch stores nothing.
func FuzzInspectionRecords(f *testing.F) {
	seeds := []string{`{"records":[{"record_id":"a","outcome":"valid","ticket_id":"t","checked_at":"2026-06-15T09:00:00Z"}]}`,
		`{"records":[]}`, `{}`, `[]`, `null`, `{"records":[{"record_id":"a","outcome":"valid","barcode_sha256":"` + strings.Repeat("0", 64) + `","checked_at":"2026-06-15T09:00:00Z","place":{"lat":1e400}}]}`,
		`{"records":[{"record_id":"\u0000","outcome":"valid"}]}`, `{"records":[{"record_id":"a","outcome":"valid","checked_at":"2026-06-15T09:00:00Z","device_time":"0000-01-01T00:00:00Z","ticket_id":"t"}]}`,
		`{"records":[{"record_id":"a","outcome":"unreadable","checked_at":"2026-06-15T09:00:00+0200","place":{"lat":-90,"lon":180,"stop_id":" "}}]}`,
		`{"records":{"record_id":"a"}}`, "{\"records\":[{\"record_id\":\"\xff\"}]}", `{"records":[{"RECORD_ID":"a"}]}`}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	e := apitest.New(f, apitest.FuzzEngine(f), apitest.Options{Configure: func(d *httpapi.Deps) {
		d.InspectorLimit = &httpapi.RateLimits{} // no limit: the fuzzer posts fast
	}})
	token := inspector(f, e, "Fuzz")
	f.Fuzz(func(t *testing.T, body []byte) {
		e.T = t
		before := inspectionRows(t, e)
		r := e.Do(apitest.Req{Method: "POST", Path: recordsPath, Key: token, Body: body, NoValidate: true})
		if r.Status >= 500 {
			t.Fatalf("%q: %d %s", body, r.Status, r.Body)
		}
		if r.Status >= 400 {
			if m := r.Map(t); m["message"] == nil || m["code"] == nil {
				t.Fatalf("error without message/code: %s", r.Body)
			}
			if after := inspectionRows(t, e); after != before {
				t.Fatalf("%q refused with %d but stored %d rows", body, r.Status, after-before)
			}
		}
	})
}

// The daily export: the day's issued tickets and received checks,
// pseudonymised, encrypted to the recipient; decrypted with its identity
// every field is there and no name is.
func TestRecordsExport(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		o := order(t, e, e.LiveKey, ids["single/adult"], ids["single/adult"], ids["single/adult"])
		tickets := []string{
			mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), map[string]any{"identification_medium": medium("Max", "Müller", "1990-01-01")}),
			mustActivate(t, e, "v9", str(o.Coupons[1]["id"]), map[string]any{"identification_medium": medium("  MAX ", "MÜLLER", "1990-01-01")}),
			mustActivate(t, e, "v9", str(o.Coupons[2]["id"]), map[string]any{"identification_medium": medium("Max", "Müller", "1990-01-02")}),
		}
		test := order(t, e, e.TestKey, ids["single/adult"])
		mustActivate(t, e, "v9", str(test.Coupons[0]["id"]), map[string]any{"identification_medium": medium("Test", "Only", "1990-01-01")})
		token := inspector(t, e, "Export")
		var posted recordsapp.BatchResponse
		e.Must(200, apitest.Req{Method: "POST", Path: recordsPath, Key: token,
			Body: batch(withField(check("e-1", "valid"), "ticket_id", tickets[0]), map[string]any{"record_id": "e-2", "outcome": "unreadable", "checked_at": "2026-06-15T09:59:00Z"},
				withField(check("e-3", "data_too_old"), "ticket_id", tickets[1]))}).JSON(t, &posted)

		id, p := exportKeys(t)
		var sealed bytes.Buffer
		sum, err := e.Records.Export(context.Background(), recordsapp.ExportRequest{Day: "2026-06-15", Recipients: id.Recipient().String(), Pseudonyms: p}, &sealed)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Issuance != 3 || sum.Inspections != 3 || bytes.Contains(sealed.Bytes(), []byte("farebox-ticket")) {
			t.Fatalf("summary %+v (or the export is not encrypted)", sum)
		}
		plain := decrypt(t, sealed.Bytes(), id)
		for _, secret := range []string{"Müller", "MÜLLER", "1990-01-01", "Kontrolle"} {
			if bytes.Contains(plain, []byte(secret)) {
				t.Fatalf("the export holds %q", secret)
			}
		}
		var raw map[string]any
		if err := json.Unmarshal(plain, &raw); err != nil {
			t.Fatal(err)
		}
		if raw["format"] != recordsapp.ExportFormat || raw["day"] != "2026-06-15" || raw["time_zone"] != "Europe/Berlin" || raw["pseudonym_key_id"] != p.KeyID ||
			len(raw["issuance"].([]any)) != 3 || len(raw["inspections"].([]any)) != 3 {
			t.Fatalf("export %s", plain)
		}
		if raw["from"] != "2026-06-14T22:00:00Z" || raw["until"] != "2026-06-15T22:00:00Z" || raw["generated_at"] != "2026-06-15T10:00:00Z" {
			t.Fatalf("day bounds %v %v %v", raw["from"], raw["until"], raw["generated_at"])
		}
		byTicket := map[string]map[string]any{} // issued in the same second: ordered by id
		for _, r := range raw["issuance"].([]any) {
			byTicket[str(r.(map[string]any)["ticket_id"])] = r.(map[string]any)
		}
		for i, want := range tickets {
			r := byTicket[want]
			if r == nil || r["seller_account_id"] != e.AccountID || r["product_id"] != ids["single/adult"] ||
				r["product_name"] == "" || r["ticket_type"] != "single" || r["customer_type"] != "adult" || r["barcode_profile"] != "farebox" ||
				r["issued_at"] != "2026-06-15T10:00:00Z" || r["valid_from"] == nil || r["valid_until"] == nil || r["invalidated_at"] != nil {
				t.Fatalf("issuance record %d: %v", i, r)
			}
		}
		pseud := func(i int) string { return str(byTicket[tickets[i]]["traveller_pseudonym"]) }
		if !strings.HasPrefix(pseud(0), "p1:") || pseud(0) != pseud(1) || pseud(0) == pseud(2) {
			t.Fatalf("pseudonyms %q %q %q: want the first two alike (same traveller), the third apart", pseud(0), pseud(1), pseud(2))
		}
		other, _ := records.NewPseudonymizer(bytes.Repeat([]byte{8}, 32))
		if m, _ := json.Marshal(medium("Max", "Müller", "1990-01-01")); other.Of(m) == pseud(0) || p.Of(m) != pseud(0) {
			t.Fatal("the pseudonym does not depend on the key alone")
		}
		in := map[string]map[string]any{} // received in the same second: ordered by id
		for _, r := range raw["inspections"].([]any) {
			in[str(r.(map[string]any)["record_id"])] = r.(map[string]any)
		}
		first, second := in["e-1"], in["e-2"]
		// A check the app refused for old data (docs/inspect.md) is exported as such.
		if in["e-3"]["outcome"] != "data_too_old" || in["e-3"]["ticket_id"] != tickets[1] {
			t.Fatalf("the data_too_old check: %v", in["e-3"])
		}
		want := map[string]any{"id": posted.Records[0].ID, "record_id": "e-1", "ticket_id": tickets[0], "barcode_sha256": strings.Repeat("ab", 32),
			"outcome": "valid", "checked_at": "2026-06-15T09:58:12Z", "device_time": "2026-06-15T08:00:03Z", "received_at": "2026-06-15T10:00:00Z",
			"lat": 52.5251, "lon": 13.3694, "stop_id": "de:11000:900003201"}
		for k, v := range want {
			if first[k] != v {
				t.Fatalf("inspection %s = %v, want %v (%v)", k, first[k], v, first)
			}
		}
		if !strings.HasPrefix(str(first["inspector_id"]), "farebox-inspector-") || second["outcome"] != "unreadable" || second["ticket_id"] != nil ||
			second["lat"] != nil || second["device_time"] != nil {
			t.Fatalf("inspections %v", in)
		}
		// The kinds, and a day without records.
		only, err := e.Records.ExportDocument(context.Background(), recordsapp.ExportRequest{Day: "2026-06-15", Kind: "inspection", Pseudonyms: p})
		if err != nil || len(only.Issuance) != 0 || len(only.Inspections) != 3 {
			t.Fatalf("kind inspection: %v %+v", err, only)
		}
		empty, err := e.Records.ExportDocument(context.Background(), recordsapp.ExportRequest{Day: "2026-06-16", Pseudonyms: p})
		if err != nil || len(empty.Issuance) != 0 || len(empty.Inspections) != 0 {
			t.Fatalf("next day: %v %+v", err, empty)
		}
		for _, bad := range []recordsapp.ExportRequest{{Day: "2026-13-01", Pseudonyms: p}, {Day: "2026-06-15", Kind: "sales", Pseudonyms: p}} {
			if _, err := e.Records.Export(context.Background(), bad, io.Discard); err == nil {
				t.Fatalf("%+v exported", bad)
			}
		}
		if _, err := e.Records.Export(context.Background(), recordsapp.ExportRequest{Day: "2026-06-15", Recipients: "age1nope", Pseudonyms: p}, io.Discard); err == nil {
			t.Fatal("a bad recipient exported")
		}
	})
}

// exportKeys are a reporting system's age identity and a seller's
// pseudonym key (seven repeated).
func exportKeys(t *testing.T) (*age.X25519Identity, *records.Pseudonymizer) {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	p, err := records.NewPseudonymizer(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return id, p
}

func decrypt(t *testing.T, sealed []byte, id age.Identity) []byte {
	t.Helper()
	r := testtool.Must(age.Decrypt(bytes.NewReader(sealed), id))(t)
	return testtool.Must(io.ReadAll(r))(t)
}
