package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/accounts"
	billingapp "github.com/farebox/farebox/internal/app/billing"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/idempotency"
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
	clk := clocktest.NewFixed(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	a := app.New(app.Options{Store: st, Clock: clk})
	keys := accounts.New(store.NewView[accounts.Queries](st), clk, "", 0)
	k, err := keys.CreateAccount(context.Background(), idempotency.Claim{}, "Pipeline", account.Live)
	if err != nil {
		t.Fatal(err)
	}
	ledger := st.NewLedger(store.LedgerCommitted, nil)
	s := New(Deps{App: a, Accounts: keys, Billing: billingapp.New(st.Read(), clk), Ledger: ledger, MaxBodyBytes: 1024})
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
		ck, err := keys.CreateAccount(r.Context(), idempotency.Claim{}, body.Name, account.Test)
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	for _, s := range []string{`{"name":"x","n":1}`, `{"name":`, `[]`, `null`, `{"n":1e400}`, "{\"name\":\"\xff\"}", `{"name":"x"} 1`,
		`{"name":"a","name":"b"}`, `{"NAME":"a"}`, `{"Name":"a","sub":{"a":["x"],"A":["y"]}}`, `{"sub":{"a":["x"]},"free":{"k":1,"k":2}}`,
		`{"name":"a","n\u0061me":"b"}`, `{"name":"\u017f","\u017fub":{}}`, `{"x":[{"a":1},{"a":1,"a":2}]}`} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	type target struct {
		Name string `json:"name"`
		N    int    `json:"n"`
		Sub  *struct {
			A []string `json:"a"`
		} `json:"sub"`
		Free map[string]any `json:"free"`
	}
	fields := []string{"name", "n", "sub", "free"}
	f.Fuzz(func(t *testing.T, body []byte, strict bool) {
		var v target
		err := decodeJSON(body, &v, strict)
		if err != nil {
			ae := apperrOf(err)
			if ae == nil || (ae.Kind != apperr.Invalid && ae.Kind != apperr.TooLarge) || ae.Msg == "" {
				t.Fatalf("decode error not a 400/413 apperr: %#v", err)
			}
			if strings.HasPrefix(ae.Msg, "duplicate key") && (ae.Code != CodeMalformedJSON || len(ae.Details) != 1 || ae.Details[0].Field == "") {
				t.Fatalf("duplicate key error without its pointer: %+v", ae)
			}
			return
		}
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
		// An accepted body has no duplicate key anywhere, and what was
		// decoded is what an exact-key reader (a gateway) sees.
		if p := firstDuplicate(body); p != "" {
			t.Fatalf("decodeJSON(%q) accepted the duplicate key %s", body, p)
		}
		var generic map[string]any
		if json.Unmarshal(body, &generic) != nil {
			return // null, or not an object: nothing keyed was taken
		}
		for k := range generic {
			known := slices.Contains(fields, k)
			if strict && !known {
				t.Fatalf("strict decodeJSON(%q) accepted the unknown key %q", body, k)
			}
			for _, fld := range fields {
				if !known && strings.EqualFold(k, fld) {
					t.Fatalf("decodeJSON(%q) accepted %q for the field %q", body, k, fld)
				}
			}
		}
		if s, ok := generic["name"].(string); ok && s != v.Name {
			t.Fatalf("decodeJSON(%q): name %q, an exact reader sees %q", body, v.Name, s)
		}
		if _, ok := generic["name"]; !ok && v.Name != "" {
			t.Fatalf("decodeJSON(%q) set name %q from another key", body, v.Name)
		}
		if sub, ok := generic["sub"].(map[string]any); ok && v.Sub != nil {
			if _, ok := sub["a"]; !ok && v.Sub.A != nil {
				t.Fatalf("decodeJSON(%q) set sub.a from another key", body)
			}
		}
	})
}

// firstDuplicate is the fuzz test's own, type-blind oracle: the JSON
// pointer of the first key repeated in one object of body, or "".
func firstDuplicate(body []byte) string {
	type frame struct {
		keys   map[string]bool
		object bool
		want   bool // an object awaiting a key
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		top := func() *frame {
			if len(stack) == 0 {
				return nil
			}
			return stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, &frame{keys: map[string]bool{}, object: true, want: true})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				if p := top(); p != nil && p.object {
					p.want = true
				}
			}
			continue
		}
		p := top()
		if p != nil && p.object && p.want {
			k := tok.(string)
			if p.keys[k] {
				return "dup " + k
			}
			p.keys[k], p.want = true, false
			continue
		}
		if p != nil && p.object {
			p.want = true
		}
	}
}

// TestKeysExactAndUnique: the key rule of the one decoder, at every depth
// and inside values kept raw, with the offending key named by pointer.
func TestKeysExactAndUnique(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		strict     bool
		code       string
		field      string
	}{
		{"duplicate top-level", `{"product_ids":["A"],"product_ids":["B"]}`, true, CodeMalformedJSON, "/product_ids"},
		{"duplicate, lenient endpoint", `{"reactivation_key":"a","reactivation_key":"b"}`, false, CodeMalformedJSON, "/reactivation_key"},
		{"duplicate by escape", `{"product_ids":["A"],"product\u005fids":["B"]}`, true, CodeMalformedJSON, "/product_ids"},
		{"duplicate in a raw split entry", `{"split":[{"customer_id":"c","amount_in_cents":5000},{"customer_id":"d","amount_in_cents":5000,"amount_in_cents":190}]}`, true, CodeMalformedJSON, "/split/1/amount_in_cents"},
		{"duplicate in a raw medium", `{"identification_medium":{"photo_id_lite":{"first_name":"A","first_name":"B"}}}`, false, CodeMalformedJSON, "/identification_medium/photo_id_lite/first_name"},
		{"duplicate in an ignored key", `{"web_view":{"x":1,"x":2}}`, false, CodeMalformedJSON, "/web_view/x"},
		{"duplicate after many keys", `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k3":3}`, false, CodeMalformedJSON, "/k3"},
		{"upper case", `{"product_ids":["DAY"],"PRODUCT_IDS":["SINGLE"]}`, true, CodeUnknownField, "/PRODUCT_IDS"},
		{"mixed case alone", `{"Product_Ids":["SINGLE"]}`, true, CodeUnknownField, "/Product_Ids"},
		{"case on a lenient endpoint", `{"REACTIVATION_KEY":"k"}`, false, CodeUnknownField, "/REACTIVATION_KEY"},
		{"case by Unicode folding (long s)", `{"reactivation_key":"k","\u017fplit":[]}`, true, CodeUnknownField, "/\u017fplit"},
		{"unknown, strict", `{"product_ids":[],"coupon":1}`, true, CodeUnknownField, "/coupon"},
	}
	type req struct {
		ProductIDs           []string        `json:"product_ids"`
		Split                json.RawMessage `json:"split"`
		IdentificationMedium json.RawMessage `json:"identification_medium"`
		ReactivationKey      *string         `json:"reactivation_key"`
	}
	for _, c := range cases {
		var dst req
		ae := apperrOf(decodeJSON([]byte(c.body), &dst, c.strict))
		field := c.field
		if ae == nil || ae.Code != c.code || len(ae.Details) != 1 || ae.Details[0].Field != field || !strings.Contains(ae.Msg, field) {
			t.Errorf("%s: %+v; want %s at %s", c.name, ae, c.code, field)
		}
	}
	// What is accepted: exact keys once each; unknown keys on a lenient
	// endpoint; the same key in different objects.
	for _, body := range []string{`{"product_ids":["A"],"split":[{"a":1},{"a":1}]}`, `{"reactivation_key":"k","extra":{"reactivation_key":1}}`} {
		var dst req
		if err := decodeJSON([]byte(body), &dst, strings.Contains(body, "split")); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	// Deeper than encoding/json allows: the decoder's own error, no crash.
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	if ae := apperrOf(decodeJSON([]byte(`{"split":`+deep+`}`), new(req), true)); ae == nil || ae.Code != CodeMalformedJSON {
		t.Errorf("deep nesting: %+v", ae)
	}
}

// TestCheckStrings: the edge's text rule, with the field named by JSON
// pointer; well-formed escapes (a surrogate pair, an escaped backslash
// before u0000) are ordinary text.
func TestCheckStrings(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
		{`{"free":{"x":{"y":[1]}},"any":[{"x":1}],"customer":{"electronic_invoicing":{"x":1}},"Name":"n","list":[{},{"address_lines":[],"a/b":2}]}`, "/list/1/a~1b"},
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
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		f(t, newPipelineEnv(t, engine))
	})
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
