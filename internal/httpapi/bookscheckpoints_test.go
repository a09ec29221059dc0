package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/books"
)

// checkpointPage is GET /v1/books/checkpoints.json as a partner reads it.
type checkpointPage struct {
	Data []struct {
		ID          string `json:"id"`
		AccountID   string `json:"account_id"`
		Environment string `json:"environment"`
		TreeSize    int64  `json:"tree_size"`
		TreeHash    string `json:"tree_hash"`
		Counter     int64  `json:"counter"`
		KeyID       string `json:"key_id"`
	} `json:"data"`
	HasMore bool `json:"has_more"`
	Keys    []struct {
		KeyID     string `json:"key_id"`
		PublicKey string `json:"public_key"`
	} `json:"keys"`
}

// TestBooksCheckpointsAPI: a partner lists its chain's signed checkpoints
// with the key that signed them, page by page; another account and the
// other environment see only their own; proofs of inclusion and
// consistency verify offline against the listed checkpoints exactly as
// the API answered them (books.ReadExport and VerifyExport, what farebox
// books verify --offline runs), and a changed byte is a finding; bad
// input is a 400 naming the parameter, a keyless call a 401, and nothing
// is a 5xx. Both engines.
func TestBooksCheckpointsAPI(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		signer, err := books.FileSigner(filepath.Join(t.TempDir(), books.KeyFile), true)
		if err != nil {
			t.Fatal(err)
		}
		sign := func() {
			t.Helper()
			if _, err := e.Books.Checkpoint(ctx, signer); err != nil {
				t.Fatal(err)
			}
			e.Clock.Advance(time.Minute)
		}
		invoice := func(k, itemID, cust string) InvoiceJSON {
			t.Helper()
			put(t, e, k, itemID, map[string]any{"customer_id": cust})
			return issue(t, e, k, itemID, cust, nil)
		}
		key := e.LiveKey
		cust := newCustomer(t, e, key, []string{"شركة المثال", "Hauptstraße 1", "10115 Berlin 🚆"}, nil)
		items := orderSingles(t, e, key, 2)
		first := invoice(key, items[0], cust)
		sign()
		e.Clock.Advance(time.Second)
		invoice(key, items[1], cust)
		sign()
		otherAcc, otherKey := e.NewAccount("Other", account.Live)
		other := orderSingles(t, e, otherKey, 1)
		otherInv := invoice(otherKey, other[0], newCustomer(t, e, otherKey, []string{"Other GmbH"}, nil))
		sign()
		testItems := orderSingles(t, e, e.TestKey, 1)
		invoice(e.TestKey, testItems[0], newCustomer(t, e, e.TestKey, []string{"Test GmbH"}, nil))
		sign()

		list := func(k, query string) (checkpointPage, []byte) {
			t.Helper()
			var p checkpointPage
			r := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/books/checkpoints.json" + query, Key: k})
			r.JSON(t, &p)
			return p, r.Body
		}
		all, raw := list(key, "")
		if len(all.Data) != 2 || all.HasMore || all.Data[0].TreeSize <= all.Data[1].TreeSize || len(all.Keys) != 1 ||
			all.Keys[0].KeyID != signer.KeyID() || all.Data[0].TreeHash == "" {
			t.Fatalf("the account's checkpoints: %s", raw)
		}
		for _, c := range all.Data {
			if c.AccountID != e.AccountID || c.Environment != "live" || c.ID != fmt.Sprintf("%s.%d", c.KeyID, c.Counter) {
				t.Errorf("checkpoint %+v", c)
			}
		}
		if p, _ := list(key, "?limit=1"); len(p.Data) != 1 || !p.HasMore || p.Data[0].ID != all.Data[0].ID {
			t.Errorf("first page of one: %+v", p)
		}
		if p, _ := list(key, "?limit=1&starting_after="+all.Data[0].ID); len(p.Data) != 1 || p.HasMore || p.Data[0].ID != all.Data[1].ID {
			t.Errorf("after the newest: %+v", p)
		}
		if p, _ := list(key, "?ending_before="+all.Data[1].ID); len(p.Data) != 1 || p.HasMore || p.Data[0].ID != all.Data[0].ID {
			t.Errorf("before the oldest: %+v", p)
		}
		theirs, _ := list(otherKey, "")
		if len(theirs.Data) != 1 || theirs.Data[0].AccountID != otherAcc {
			t.Errorf("the other account's checkpoints: %+v", theirs)
		}
		if p, _ := list(e.TestKey, ""); len(p.Data) != 1 || p.Data[0].Environment != "test" || p.Data[0].AccountID != e.AccountID {
			t.Errorf("the test environment's checkpoints: %+v", p)
		}

		// Proofs against the listed checkpoints, checked offline.
		older, newer := all.Data[1], all.Data[0]
		incl := e.Must(200, apitest.Req{Method: "GET", Key: key,
			Path: fmt.Sprintf("/v1/books/proofs/inclusion.json?record_id=%s&tree_size=%d", first.InvoiceID, older.TreeSize)}).Body
		cons := e.Must(200, apitest.Req{Method: "GET", Key: key,
			Path: fmt.Sprintf("/v1/books/proofs/consistency.json?first=%d&second=%d", older.TreeSize, newer.TreeSize)}).Body
		file := bytes.Join([][]byte{raw, incl, cons}, []byte("\n"))
		x, err := books.ReadExport(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		if rep := books.VerifyExport(x); len(rep.Findings) != 0 || rep.Checkpoints != 2 || rep.Proofs != 2 {
			t.Errorf("the export does not verify: %+v", rep)
		}
		forged := bytes.Replace(file, []byte(`"tree_size":`+fmt.Sprint(older.TreeSize)), []byte(`"tree_size":`+fmt.Sprint(older.TreeSize-1)), 1)
		if x, err := books.ReadExport(bytes.NewReader(forged)); err != nil || len(books.VerifyExport(x).Findings) == 0 {
			t.Errorf("a changed tree size verifies: %v", err)
		}

		type bad struct {
			path, field string
			k           string
			status      int
		}
		cp, inc, con := "/v1/books/checkpoints.json", "/v1/books/proofs/inclusion.json", "/v1/books/proofs/consistency.json"
		rec := "?record_id=" + first.InvoiceID
		for _, b := range []bad{
			{cp + "?limit=0", "limit", key, 400}, {cp + "?limit=abc", "limit", key, 400}, {cp + "?limit=101", "limit", key, 400},
			{cp + "?starting_after=" + theirs.Data[0].ID, "starting_after", key, 400},
			{cp + "?starting_after=" + url.QueryEscape("🚆.1"), "starting_after", key, 400},
			{cp + "?ending_before=x", "ending_before", key, 400}, {cp + "?ending_before=" + signer.KeyID() + ".-1", "ending_before", key, 400},
			{cp + "?starting_after=" + all.Data[0].ID + "&ending_before=" + all.Data[1].ID, "ending_before", key, 400},
			{cp + "?created[gte]=yesterday", "created[gte]", key, 400}, {cp + "?cursor=1", "cursor", key, 400},
			{cp, "", "", 401}, {inc + rec + "&tree_size=1", "", "", 401}, {con + "?first=1&second=1", "", "", 401},
			{inc + rec, "tree_size", key, 400}, {inc + rec + "&tree_size=0", "tree_size", key, 400},
			{inc + rec + "&tree_size=abc", "tree_size", key, 400}, {inc + rec + "&tree_size=99999999999999999999", "tree_size", key, 400},
			{inc + rec + "&tree_size=9223372036854775807", "tree_size", key, 400}, {inc + rec + "&tree_size=+1", "tree_size", key, 400},
			{inc + "?tree_size=1", "record_id", key, 400}, {inc + rec + "&tree_size=1&kind=ticket", "kind", key, 400},
			{inc + rec + "&tree_size=1&seq=1", "seq", key, 400},
			{inc + "?record_id=" + otherInv.InvoiceID + "&tree_size=1", "", key, 404},
			{inc + rec + "&tree_size=1", "", otherKey, 404}, {inc + rec + "&tree_size=1", "", e.TestKey, 404},
			{inc + "?record_id=" + url.QueryEscape("فاتورة 🚆") + "&tree_size=1", "", key, 404},
			{con + "?first=2&second=1", "first", key, 400}, {con + "?first=0&second=1", "first", key, 400},
			{con + "?first=1", "second", key, 400}, {con + "?first=1&second=9223372036854775807", "second", key, 400},
			{con + "?first=1&second=2&second=3", "second", key, 400},
		} {
			r := e.Do(apitest.Req{Method: "GET", Path: b.path, Key: b.k})
			if r.Status != b.status {
				t.Errorf("GET %s: %d, want %d: %s", b.path, r.Status, b.status, r.Body)
				continue
			}
			if b.field == "" {
				continue
			}
			var body struct {
				Details []struct{ Field string } `json:"details"`
			}
			r.JSON(t, &body)
			if len(body.Details) == 0 || body.Details[0].Field != b.field {
				t.Errorf("GET %s: details %s, want the field %s", b.path, r.Body, b.field)
			}
		}
		// The tree of the record's own position proves it; a smaller one
		// is a 400 naming tree_size, not a wrong proof.
		r := e.Do(apitest.Req{Method: "GET", Key: key, Path: inc + "?kind=invoice&record_id=" + first.InvoiceID + "&tree_size=1"})
		if r.Status != 200 && !(r.Status == 400 && strings.Contains(string(r.Body), "entered the chain as entry")) {
			t.Errorf("a tree before or at the record: %d %s", r.Status, r.Body)
		}
	})
}
