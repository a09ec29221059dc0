package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestBooksCommands: `farebox books verify` reports clean books with exit
// 0 and a gap with exit 1 naming it; `farebox books audit` prints an
// account's audit log; on both engines (SQLite only under -short: the
// store's conformance suite runs the books on both there).
func TestBooksCommands(t *testing.T) {
	t.Parallel()
	for _, engine := range storetest.Engines {
		t.Run(string(engine), func(t *testing.T) {
			env, s := migratedEnv(t, engine)
			e := apitest.NewOnStore(t, s, apitest.Options{})
			var o struct {
				Coupons []struct {
					BillableItemID string `json:"billable_item_id"`
				} `json:"coupons"`
			}
			var prods []struct {
				ID         string `json:"id"`
				TicketType string `json:"ticket_type"`
			}
			e.Must(200, apitest.Req{Method: "GET", Path: "/v2/products/search_by_city_name.json?city_name=Berlin", Key: e.LiveKey}).JSON(t, &prods)
			e.Must(201, apitest.Req{Method: "POST", Path: "/v6/ticketing/orders.json", Key: e.LiveKey,
				Body: map[string]any{"product_ids": []string{prods[0].ID}}}).JSON(t, &o)
			item := o.Coupons[0].BillableItemID
			coll := e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collections.json", Key: e.LiveKey}).Map(t)["id"].(string)
			e.Must(200, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collection/" + coll + "/billable_items.json", Key: e.LiveKey,
				Body: map[string]any{"billable_item_ids": []string{item}}})
			e.Clock.Advance(time.Second) // entries of one instant are ordered by their random ids
			e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_item/" + item + "/invoice.json", Key: e.LiveKey})
			if _, err := e.App.Jobs.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			out := cli(t, env, "books", "verify")
			if !strings.Contains(out, "checked 1 numbers in 1 series and 1 stored files") || !strings.HasSuffix(out, "0 findings\n") {
				t.Errorf("clean verify: %s", out)
			}
			// A signed checkpoint, exported and given back to verify.
			env["FAREBOX_BOOKS_KEY"] = filepath.Join(t.TempDir(), "books-ed25519.pem")
			signed := cli(t, env, "books", "checkpoint")
			var cp map[string]any
			if err := json.Unmarshal([]byte(signed), &cp); err != nil || cp["object"] != "books_checkpoint" || cp["account_id"] != e.AccountID ||
				cp["tree_size"] != 4.0 || cp["counter"] != 1.0 || strings.Count(signed, "\n") != 1 {
				t.Errorf("books checkpoint: %s %v", signed, err)
			}
			if again := cli(t, env, "books", "checkpoint"); again != "" {
				t.Errorf("a checkpoint of an unchanged chain: %s", again)
			}
			exported := cli(t, env, "books", "checkpoints")
			file := filepath.Join(t.TempDir(), "checkpoints.jsonl")
			if err := os.WriteFile(file, []byte(exported), 0o600); err != nil || exported != signed {
				t.Fatalf("books checkpoints: %s %v", exported, err)
			}
			if out := cli(t, env, "books", "verify", "--checkpoints", file); !strings.HasSuffix(out, "4 entries in 1 chains (0 records from before the chain, 0 with erased personal fields) and 1 checkpoints: 0 findings\n") {
				t.Errorf("verify with the exported checkpoints: %s", out)
			}
			// What a partner holds: the API's page of checkpoints and a
			// proof of its invoice, as answered, verify with and without
			// the database; a changed signature does not.
			page := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/books/checkpoints.json", Key: e.LiveKey}).Body
			var invoices struct {
				Data []struct {
					InvoiceID string `json:"invoice_id"`
				} `json:"data"`
			}
			e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/invoices.json", Key: e.LiveKey}).JSON(t, &invoices)
			proof := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/books/proofs/inclusion.json?tree_size=4&record_id=" + invoices.Data[0].InvoiceID,
				Key: e.LiveKey}).Body
			held := filepath.Join(t.TempDir(), "held.json")
			if err := os.WriteFile(held, append(append(page, '\n'), proof...), 0o600); err != nil {
				t.Fatal(err)
			}
			if out := cli(t, env, "books", "verify", "--checkpoints", held); !strings.HasSuffix(out, "and 1 checkpoints: 0 findings\n") {
				t.Errorf("verify with the API's page: %s", out)
			}
			if out := cli(t, env, "books", "verify", "--offline", "--checkpoints", held); out != "checked 1 checkpoints with 1 keys and 1 proofs: 0 findings\n" {
				t.Errorf("verify --offline: %s", out)
			}
			var cpPage map[string]any
			if err := json.Unmarshal(page, &cpPage); err != nil {
				t.Fatal(err)
			}
			sig := cpPage["data"].([]any)[0].(map[string]any)["signature"].(string)
			forged := strings.Replace(string(page), sig, "A"+sig[1:], 1)
			if sig[0] == 'A' {
				forged = strings.Replace(string(page), sig, "B"+sig[1:], 1)
			}
			if err := os.WriteFile(held, []byte(forged), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"books", "verify", "--offline", "--checkpoints", held}, envFrom(env), nil, &stdout, &stderr)
			if exitCode(err) != 1 || !strings.Contains(stdout.String(), "FINDING checkpoint_bad_signature: checkpoint "+cpPage["data"].([]any)[0].(map[string]any)["id"].(string)) {
				t.Errorf("verify --offline of a forged signature: %v\n%s%s", err, stdout.String(), stderr.String())
			}
			stdout.Reset()
			if err := run(context.Background(), []string{"books", "verify", "--offline"}, envFrom(env), nil, &stdout, &stderr); exitCode(err) != 2 {
				t.Errorf("verify --offline without a file: %v", err)
			}
			lines := strings.Split(strings.TrimSpace(cli(t, env, "books", "audit", "--account", e.AccountID)), "\n")
			if len(lines) != 2 {
				t.Fatalf("audit: %q", lines)
			}
			var newest map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &newest); err != nil || newest["action"] != "invoiced" || newest["object_id"] != item {
				t.Errorf("audit entry %s: %v", lines[0], err)
			}
			// The books key rotated: the grown chain is signed with key B,
			// and verify with B checks A's checkpoint with the public key
			// books_keys recorded for A, and says so.
			keyA := cp["key_id"].(string)
			e.Must(201, apitest.Req{Method: "POST", Path: "/v6/ticketing/orders.json", Key: e.LiveKey,
				Body: map[string]any{"product_ids": []string{prods[0].ID}}}).JSON(t, &o)
			e.Clock.Advance(time.Second)
			e.Must(200, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collection/" + coll + "/billable_items.json", Key: e.LiveKey,
				Body: map[string]any{"billable_item_ids": []string{o.Coupons[0].BillableItemID}}})
			env["FAREBOX_BOOKS_KEY"] = filepath.Join(t.TempDir(), "books-b.pem")
			var cpB map[string]any
			if err := json.Unmarshal([]byte(cli(t, env, "books", "checkpoint")), &cpB); err != nil || cpB["key_id"] == keyA || cpB["counter"] != 1.0 {
				t.Fatalf("checkpoint with the new key: %v %v", cpB, err)
			}
			if out := cli(t, env, "books", "verify", "--checkpoints", file); !strings.HasPrefix(out, "KEY "+keyA+": checked with the public key the database records") ||
				!strings.HasSuffix(out, "and 2 checkpoints: 0 findings\n") {
				t.Errorf("verify after the rotation: %s", out)
			}
			if _, err := s.DB().Exec(`UPDATE invoice_counters SET last_value = last_value + 1`); err != nil {
				t.Fatal(err)
			}
			stdout.Reset()
			stderr.Reset()
			err = run(context.Background(), []string{"books", "verify"}, envFrom(env), nil, &stdout, &stderr)
			if err == nil || exitCode(err) != 1 || !strings.Contains(stdout.String(), "FINDING number_gap: series 2026: number 2026-000002 is missing") ||
				!strings.Contains(stdout.String(), "1 findings") {
				t.Errorf("verify with a gap: %v\n%s%s", err, stdout.String(), stderr.String())
			}
			stderr.Reset()
			if err := run(context.Background(), []string{"books", "audit"}, envFrom(env), nil, &stdout, &stderr); exitCode(err) != 2 {
				t.Errorf("audit without --account: %v", err)
			}
		})
	}
}
