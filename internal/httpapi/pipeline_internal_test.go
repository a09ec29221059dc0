package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/usage"
)

type pipelineEnv struct {
	url   string
	store *store.Store
	key   string
	calls *int64
	mu    *sync.Mutex
}

// newPipelineEnv builds a server with extra routes that exercise the
// pipeline: a strict JSON POST that writes an account (so idempotency can be
// checked in the database), a lenient SDK-style POST, and a panicking handler.
func newPipelineEnv(t *testing.T, engine store.Engine) pipelineEnv {
	t.Helper()
	st := storetest.Open(t, engine)
	a := app.New(app.Options{Store: st, Clock: clock.NewFixed(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))})
	k, err := a.CreateAccount(context.Background(), "Pipeline", account.Live)
	if err != nil {
		t.Fatal(err)
	}
	ledger := st.NewLedger(store.LedgerCommitted, nil)
	s := New(Deps{App: a, Ledger: ledger, MaxBodyBytes: 1024})
	var calls int64
	var mu sync.Mutex
	type in struct {
		Name string `json:"name"`
		N    int    `json:"n"`
	}
	create := func(w http.ResponseWriter, r *http.Request) error {
		var body in
		if err := decode(r, &body); err != nil {
			return err
		}
		mu.Lock()
		calls++
		mu.Unlock()
		time.Sleep(20 * time.Millisecond) // widen the window for concurrent duplicates
		ck, err := a.CreateAccount(r.Context(), body.Name, account.Test)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, map[string]any{"account_id": ck.AccountID, "n": body.N})
		return nil
	}
	lenient := func(w http.ResponseWriter, r *http.Request) error {
		var body in
		if err := decodeOptional(r, &body); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, body)
		return nil
	}
	s.mux = http.NewServeMux()
	s.register(append(s.routes(),
		route{http.MethodPost, "/test/create.json", authPartner, billKey, create},
		route{http.MethodPost, "/test/{thing_id}/sdk.json", authCapability, billNobody, lenient},
		route{http.MethodGet, "/test/panic", authNone, billNobody, func(http.ResponseWriter, *http.Request) error { panic("boom") }},
	))
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); ledger.Close() })
	return pipelineEnv{url: ts.URL, store: st, key: k.Secret, calls: &calls, mu: &mu}
}

func (e pipelineEnv) post(t *testing.T, path, body string, h map[string]string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
	for k, v := range h {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: body is not a JSON object: %q", path, b)
	}
	return res.StatusCode, res.Header, m
}

func countAccounts(t *testing.T, st *store.Store) int {
	t.Helper()
	accs, err := st.Read().Accounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(accs)
}

func TestBadInputChangesNothing(t *testing.T) {
	forEachPipelineEngine(t, func(t *testing.T, e pipelineEnv) {
		auth := e.jsonHeaders("")
		cases := []struct {
			name, body string
			header     map[string]string
			status     int
			code       string
		}{
			{"malformed", `{"name":`, auth, 400, "malformed_json"},
			{"syntax", `{"name" "x"}`, auth, 400, "malformed_json"},
			{"wrong type", `{"name": 5}`, auth, 400, "wrong_type"},
			{"unknown field", `{"name":"x","extra":1}`, auth, 400, "unknown_field"},
			{"two values", `{"name":"x"} {}`, auth, 400, "malformed_json"},
			{"empty body", ``, auth, 400, "body_required"},
			{"not json", `name=x`, map[string]string{"Authorization": "Bearer " + e.key, "Content-Type": "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"},
			{"too large", `{"name":"` + strings.Repeat("x", 2000) + `"}`, auth, 413, "body_too_large"},
			{"no key", `{"name":"x"}`, map[string]string{"Content-Type": "application/json"}, 401, "api_key_missing"},
			{"basic auth", `{"name":"x"}`, map[string]string{"Authorization": "Basic abc"}, 401, "invalid_authorization_header"},
			{"unknown key", `{"name":"x"}`, map[string]string{"Authorization": "Bearer fbx_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, 401, "invalid_api_key"},
			{"malformed key", `{"name":"x"}`, map[string]string{"Authorization": "Bearer nope"}, 401, "invalid_api_key"},
		}
		before := countAccounts(t, e.store)
		for _, c := range cases {
			status, h, body := e.post(t, "/test/create.json", c.body, c.header)
			if status != c.status || body["code"] != c.code {
				t.Errorf("%s: %d %v, want %d %s", c.name, status, body, c.status, c.code)
			}
			if msg, ok := body["message"].(string); !ok || msg == "" {
				t.Errorf("%s: message missing in %v", c.name, body)
			}
			if _, ok := body["details"].([]any); !ok {
				t.Errorf("%s: details is not an array in %v", c.name, body)
			}
			if body["request_id"] != h.Get("X-Request-Id") {
				t.Errorf("%s: request_id %v != header %q", c.name, body["request_id"], h.Get("X-Request-Id"))
			}
			if status == 401 && h.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: 401 without WWW-Authenticate", c.name)
			}
		}
		status, _, body := e.post(t, "/test/create.json?api_key="+e.key, `{"name":"x"}`, map[string]string{"Content-Type": "application/json"})
		if status != 401 || body["code"] != "api_key_in_query_not_allowed" {
			t.Errorf("key in query on partner endpoint: %d %v", status, body)
		}
		if _, _, body := e.post(t, "/test/create.json", `{"name": 5}`, auth); body["details"].([]any)[0].(map[string]any)["field"] != "/name" {
			t.Errorf("wrong type does not name the field: %v", body)
		}
		if got := countAccounts(t, e.store); got != before {
			t.Errorf("bad requests wrote %d accounts", got-before)
		}
		// SDK-facing endpoints ignore unknown fields and accept a charset.
		status, _, body = e.post(t, "/test/abc/sdk.json", `{"name":"x","identification_medium":{}}`,
			map[string]string{"Content-Type": "application/json; charset=utf-8"})
		if status != 200 || body["name"] != "x" {
			t.Errorf("lenient endpoint: %d %v", status, body)
		}
		// A path wildcard with a suffix must carry it.
		if status, _, _ := e.post(t, "/test/abc/sdk.jsonx", `{}`, nil); status != 404 {
			t.Errorf("suffix mismatch answered %d", status)
		}
	})
}

func TestIdempotency(t *testing.T) {
	forEachPipelineEngine(t, func(t *testing.T, e pipelineEnv) {
		h := e.jsonHeaders("order-42")
		before := countAccounts(t, e.store)
		s1, h1, b1 := e.post(t, "/test/create.json", `{"name":"A","n":1}`, h)
		s2, h2, b2 := e.post(t, "/test/create.json", `{"name":"A","n":1}`, h)
		if s1 != 201 || s2 != 201 || b1["account_id"] != b2["account_id"] {
			t.Fatalf("replay differs: %d %v / %d %v", s1, b1, s2, b2)
		}
		if h1.Get("Idempotency-Replayed") != "false" || h2.Get("Idempotency-Replayed") != "true" {
			t.Errorf("Idempotency-Replayed headers: %q, %q", h1.Get("Idempotency-Replayed"), h2.Get("Idempotency-Replayed"))
		}
		if got := countAccounts(t, e.store); got != before+1 {
			t.Errorf("%d accounts created, want 1", got-before)
		}
		// Replays are not billed.
		rows := usageRows(t, e.store, h2.Get("X-Request-Id"))
		if len(rows) != 1 || rows[0].Counted || rows[0].Reason != usage.ReasonReplay {
			t.Errorf("replay ledger rows: %+v", rows)
		}
		s3, _, b3 := e.post(t, "/test/create.json", `{"name":"B","n":1}`, h)
		if s3 != 422 || b3["code"] != "idempotency_key_reused" {
			t.Errorf("reuse with another body: %d %v", s3, b3)
		}
		// Errors are replayed too: the first outcome stands.
		h["Idempotency-Key"] = "bad-1"
		s4, _, _ := e.post(t, "/test/create.json", `{"name":""}`, h)
		s5, h5, _ := e.post(t, "/test/create.json", `{"name":""}`, h)
		if s4 != 400 || s5 != 400 || h5.Get("Idempotency-Replayed") != "true" {
			t.Errorf("error replay: %d %d %q", s4, s5, h5.Get("Idempotency-Replayed"))
		}
		h["Idempotency-Key"] = strings.Repeat("k", 256)
		if s, _, b := e.post(t, "/test/create.json", `{"name":"C"}`, h); s != 400 || b["code"] != "invalid_idempotency_key" {
			t.Errorf("long key: %d %v", s, b)
		}
	})
}

func TestIdempotencyConcurrent(t *testing.T) {
	forEachPipelineEngine(t, func(t *testing.T, e pipelineEnv) {
		h := e.jsonHeaders("same")
		before := countAccounts(t, e.store)
		var wg sync.WaitGroup
		statuses := make([]int, 10)
		for i := range statuses {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				statuses[i], _, _ = e.post(t, "/test/create.json", `{"name":"A"}`, h)
			}(i)
		}
		wg.Wait()
		created := 0
		for _, s := range statuses {
			switch s {
			case 201:
				created++
			case 409:
			default:
				t.Errorf("unexpected status %d", s)
			}
		}
		if got := countAccounts(t, e.store); got != before+1 || *e.calls != 1 {
			t.Errorf("concurrent duplicates: %d accounts, handler ran %d times; want 1, 1", got-before, *e.calls)
		}
		if created < 1 {
			t.Errorf("no request got 201: %v", statuses)
		}
	})
}

func TestPanicIsJSON500(t *testing.T) {
	e := newPipelineEnv(t, store.SQLite)
	res, err := http.Get(e.url + "/test/panic")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil || res.StatusCode != 500 || m["message"] != "internal error" || m["code"] != "internal_error" {
		t.Fatalf("panic: %d %v %v", res.StatusCode, m, err)
	}
	if res2, err := http.Get(e.url + "/healthz"); err != nil || res2.StatusCode != 200 {
		t.Fatalf("server not healthy after panic: %v", err)
	}
}

func usageRows(t *testing.T, st *store.Store, id string) []usage.Event {
	t.Helper()
	rows, err := st.Read().UsageByRequest(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"name":"x","n":1}`, `{"name":`, `[]`, `null`, `{"n":1e400}`, "{\"name\":\"\xff\"}", `{"name":"x"} 1`} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, strict bool) {
		var v struct {
			Name string `json:"name"`
			N    int    `json:"n"`
			Sub  *struct {
				A []string `json:"a"`
			} `json:"sub"`
		}
		err := decodeJSON(body, &v, strict)
		if err == nil {
			// Accepted text is exactly what was sent: never a NUL, never a
			// U+FFFD the client did not send (encoding/json substitutes it for
			// invalid UTF-8 and unpaired surrogates).
			texts := []string{v.Name}
			if v.Sub != nil {
				texts = append(texts, v.Sub.A...)
			}
			sent := bytes.Count(body, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(body), []byte(`\ufffd`))
			for _, s := range texts {
				if strings.IndexByte(s, 0) >= 0 || strings.Count(s, "\uFFFD") > sent {
					t.Fatalf("decodeJSON(%q) accepted %q", body, s)
				}
			}
			return
		}
		ae := apperrOf(err)
		if ae == nil || (ae.Kind != apperr.Invalid && ae.Kind != apperr.TooLarge) || ae.Msg == "" {
			t.Fatalf("decode error not a 400/413 apperr: %#v", err)
		}
	})
}

// TestCheckStrings: the edge's text rule, with the field named by JSON
// pointer; well-formed escapes (a surrogate pair, an escaped backslash
// before u0000) are ordinary text.
func TestCheckStrings(t *testing.T) {
	cases := []struct{ body, field string }{
		{`{"a":"x"}`, ""},
		{`{"a":"M\u00fcller \ud83d\ude8c \\u0000"}`, ""},
		{"{\"a\":\"\xef\xbf\xbd\"}", ""}, // U+FFFD sent as such
		{`{"a":"\u0000"}`, "/a"},
		{`{"a":["x",{"b":"\u0000"}]}`, "/a/1/b"},
		{`{"a/b~c":"\u0000"}`, "/a~1b~0c"},
		{"{\"a\":\"\xff\"}", "/a"},
		{"{\"a\":\"\xc0\x80\"}", "/a"},     // overlong NUL
		{"{\"a\":\"\xed\xa0\x80\"}", "/a"}, // UTF-8-encoded surrogate
		{`{"a":"\ud83d"}`, "/a"},           // high surrogate alone
		{`{"a":"\ud83dx"}`, "/a"},          // high surrogate, then text
		{`{"a":"\ud83d\u0041"}`, "/a"},     // high surrogate, then no low one
		{`{"a":"\ude8c\ud83d"}`, "/a"},     // reversed pair
		{`["ok","\u0000"]`, "/1"},
		{`"\u0000"`, ""},
		{`{"a":{"b\u0000":1}}`, "/a/b\x00"},
		{`{"a":1,"b":[true,null,{"c":[[],{}]}],"d":"\u0000"}`, "/d"},
	}
	for _, c := range cases {
		err := checkStrings([]byte(c.body))
		if c.body == `"\u0000"` {
			if ae := apperrOf(err); ae == nil || ae.Details[0].Field != "" {
				t.Errorf("%s: %v", c.body, err)
			}
			continue
		}
		if c.field == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", c.body, err)
			}
			continue
		}
		ae := apperrOf(err)
		if ae == nil || ae.Kind != apperr.Invalid || ae.Code != "invalid_string" || len(ae.Details) != 1 || ae.Details[0].Field != c.field {
			t.Errorf("%s: %v; want invalid_string at %q", c.body, err, c.field)
		}
	}
}

// TestUnknownFieldNamedWhereItIs: a strict decode names an unknown key by
// its full JSON pointer at any depth (encoding/json names only the key).
func TestUnknownFieldNamedWhereItIs(t *testing.T) {
	type inner struct {
		A []string        `json:"address_lines"`
		E json.RawMessage `json:"electronic_invoicing"`
	}
	var dst struct {
		Customer *inner         `json:"customer"`
		List     []inner        `json:"list"`
		Free     map[string]any `json:"free"`
		Any      any            `json:"any"`
		Skip     string         `json:"-"`
		Name     string
	}
	cases := []struct{ body, field string }{
		{`{"customer":{"address_lines":["A"],"x":1}}`, "/customer/x"},
		{`{"free":{"x":{"y":[1]}},"any":[{"x":1}],"customer":{"electronic_invoicing":{"x":1}},"NAME":"n","list":[{},{"address_lines":[],"a/b":2}]}`, "/list/1/a~1b"},
		{`{"extra":1}`, "/extra"},
		{`{"-":1}`, "/-"},
	}
	for _, c := range cases {
		ae := apperrOf(decodeJSON([]byte(c.body), &dst, true))
		if ae == nil || ae.Code != "unknown_field" || len(ae.Details) != 1 || ae.Details[0].Field != c.field || !strings.Contains(ae.Msg, c.field) {
			t.Errorf("%s: %+v; want unknown_field at %s", c.body, ae, c.field)
		}
	}
}

// forEachPipelineEngine runs f, in parallel, on a fresh pipeline for each
// storage engine.
func forEachPipelineEngine(t *testing.T, f func(t *testing.T, e pipelineEnv)) {
	for _, engine := range storetest.Engines {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			f(t, newPipelineEnv(t, engine))
		})
	}
}

// jsonHeaders are the headers of an authorised JSON request, with the
// Idempotency-Key when idemKey is not empty.
func (e pipelineEnv) jsonHeaders(idemKey string) map[string]string {
	h := map[string]string{"Authorization": "Bearer " + e.key, "Content-Type": "application/json"}
	if idemKey != "" {
		h["Idempotency-Key"] = idemKey
	}
	return h
}
