package httpapi_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/store"
)

// The books (docs/books.md): cancellation receipts, immutable issued
// documents, the audit log and farebox books verify's checks, each on both
// engines through the HTTP API and raw SQL.

// TestCancellationReceipt: the DELETE answers the Subscription with its
// receipt; a repeat answers the same receipt; GET .json and .pdf return it
// later; subscription.cancelled carries it; another account gets 404 and a
// subscription that is not cancelled 404 receipt_not_found.
func TestCancellationReceipt(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Now: time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)}, func(t *testing.T, e *apitest.Env) {
		_, subID, _ := monthlyCoupon(t, e)
		_, otherKey := e.NewAccount("Other", account.Live)
		path := "/v9/ticketing/subscriptions/" + subID
		// Not cancelled yet: no receipt; another account: no subscription.
		if m := e.Must(404, apitest.Req{Method: "GET", Path: path + "/cancellation_receipt.json", Key: e.LiveKey}).Map(t); m["code"] != "receipt_not_found" {
			t.Errorf("receipt before cancellation: %v", m)
		}
		e.Clock.Set(time.Date(2026, 6, 5, 8, 30, 0, 0, time.UTC))
		if m := e.Must(404, apitest.Req{Method: "DELETE", Path: path + ".json", Key: otherKey}).Map(t); m["code"] != "subscription_not_found" {
			t.Errorf("foreign DELETE: %v", m)
		}
		first := e.Must(200, apitest.Req{Method: "DELETE", Path: path + ".json", Key: e.LiveKey}).Map(t)
		// The existing fields are unchanged (client-contract.md): the
		// receipt is added beside them.
		get := e.Must(200, apitest.Req{Method: "GET", Path: path + ".json", Key: e.LiveKey}).Map(t)
		for k, v := range get {
			if str(first[k]) != str(v) {
				t.Errorf("DELETE answer field %s = %v, GET has %v", k, first[k], v)
			}
		}
		r, _ := first["cancellation_receipt"].(map[string]any)
		if r == nil || r["object"] != "cancellation_receipt" || r["subscription_id"] != subID || r["cancellation_type"] != "ordinary" ||
			r["received_at"] != "2026-06-05T08:30:00Z" || r["effective_end"] != "2026-06-30T21:59:59Z" || r["effective_end"] != first["ends_at"] ||
			r["product_id"] == "" || r["product_name"] == "" || !strings.HasPrefix(str(r["id"]), "farebox-receipt-") ||
			!strings.Contains(str(r["confirmation_text"]), "30.06.2026") || !strings.Contains(str(r["confirmation_text"]), "05.06.2026, 10:30 Uhr") ||
			r["receipt_pdf_url"] != e.URL+path+"/cancellation_receipt.pdf" {
			t.Fatalf("receipt: %v", r)
		}
		// Repeated cancellation, a month later: the same receipt, nothing changed.
		e.Clock.Advance(30 * 24 * time.Hour)
		again := e.Must(200, apitest.Req{Method: "DELETE", Path: path + ".json", Key: e.LiveKey}).Map(t)
		if a := again["cancellation_receipt"].(map[string]any); a["id"] != r["id"] || a["received_at"] != r["received_at"] {
			t.Errorf("second DELETE: receipt %v, first %v", a, r)
		}
		later := e.Must(200, apitest.Req{Method: "GET", Path: path + "/cancellation_receipt.json", Key: e.LiveKey}).Map(t)
		if later["id"] != r["id"] || later["effective_end"] != r["effective_end"] {
			t.Errorf("GET receipt %v, DELETE gave %v", later, r)
		}
		for _, suffix := range []string{".json", ".pdf"} {
			if m := e.Must(404, apitest.Req{Method: "GET", Path: path + "/cancellation_receipt" + suffix, Key: otherKey}).Map(t); m["code"] != "subscription_not_found" {
				t.Errorf("foreign receipt%s: %v", suffix, m)
			}
			e.Must(401, apitest.Req{Method: "GET", Path: path + "/cancellation_receipt" + suffix})
		}
		res := e.Must(200, apitest.Req{Method: "GET", Path: path + "/cancellation_receipt.pdf", Key: e.LiveKey})
		if res.Header.Get("Content-Type") != "application/pdf" || !strings.Contains(res.Header.Get("Content-Disposition"), str(r["id"])+".pdf") {
			t.Errorf("PDF headers: %v", res.Header)
		}
		text, att := pdfCheck(t, res.Body)
		for _, want := range []string{"Kündigungsbestätigung", str(r["id"]), subID, "ordentliche Kündigung", "05.06.2026, 10:30 Uhr", "30.06.2026", "§ 312k"} {
			if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
				t.Errorf("PDF text lacks %q:\n%s", want, text)
			}
		}
		if att != nil {
			t.Error("a receipt PDF carries a Factur-X attachment")
		}
		// The event carries the receipt, once.
		evs := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/events.json?type=subscription.cancelled", Key: e.LiveKey}).Map(t)["data"].([]any)
		if len(evs) != 1 {
			t.Fatalf("%d subscription.cancelled events", len(evs))
		}
		obj := evs[0].(map[string]any)["data"].(map[string]any)["object"].(map[string]any)
		if er := obj["cancellation_receipt"].(map[string]any); er["id"] != r["id"] || er["effective_end"] != r["effective_end"] || obj["ends_at"] != first["ends_at"] {
			t.Errorf("event object: %v", obj)
		}
		// The receipt row cannot be changed or deleted.
		for _, stmt := range []string{`UPDATE cancellation_receipts SET effective_end = received_at`, `DELETE FROM cancellation_receipts`} {
			if _, err := e.Store.DB().Exec(stmt); err == nil || !strings.Contains(err.Error(), "farebox books") {
				t.Errorf("%s: %v, want a refusal", stmt, err)
			}
		}
	})
}

// TestIssuedBooksAreImmutable: raw SQL cannot change or delete an issued
// invoice, cancellation, payment notice or stored file on either engine;
// the allowed transitions (files written once, cancelled_by set once to a
// cancellation referring to the invoice) still work through the API.
func TestIssuedBooksAreImmutable(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		items := orderSingles(t, e, key, 2)
		cust := newCustomer(t, e, key, []string{"Beispiel GmbH", "Hauptstraße 1", "10115 Berlin"}, nil)
		put(t, e, key, items[0], map[string]any{"customer_id": cust})
		inv := issue(t, e, key, items[0], cust, nil)
		other := issue(t, e, key, items[1], "", nil)
		notice := e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv.InvoiceID + "/payment_notice.json", Key: key}).Map(t)
		runJobs(t, e)
		get(t, e, inv.PDFURL, 200)
		db := e.Store.DB()
		refused := func(stmt string, args ...any) {
			t.Helper()
			_, err := db.Exec(stmt, args...)
			if err == nil || !strings.Contains(err.Error(), "farebox books") {
				t.Errorf("%s %v: %v, want the trigger's refusal", stmt, args, err)
			}
		}
		for _, id := range []string{inv.InvoiceID, str(notice["invoice_id"])} {
			refused(`UPDATE invoices SET gross_cents = 1 WHERE id = $1`, id)
			refused(`UPDATE invoices SET document = '{}' WHERE id = $1`, id)
			refused(`UPDATE invoices SET number = '2026-999999' WHERE id = $1`, id)
			refused(`UPDATE invoices SET customer_id = NULL WHERE id = $1`, id)
			refused(`DELETE FROM invoices WHERE id = $1`, id)
			refused(`UPDATE invoice_files SET body = $1 WHERE invoice_id = $2`, []byte("%PDF forged"), id)
			refused(`UPDATE invoice_files SET sha256 = '' WHERE invoice_id = $1`, id)
			refused(`DELETE FROM invoice_files WHERE invoice_id = $1`, id)
		}
		// cancelled_by: only to a cancellation that refers to the invoice.
		refused(`UPDATE invoices SET cancelled_by = $1 WHERE id = $2`, other.InvoiceID, inv.InvoiceID)
		refused(`UPDATE invoices SET cancelled_by = $1 WHERE id = $2`, "farebox-invoice-none", inv.InvoiceID)
		refused(`UPDATE invoices SET cancelled_by = $1 WHERE id = $2`, inv.InvoiceID, str(notice["invoice_id"]))
		var canc InvoiceJSON
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv.InvoiceID + "/cancel.json", Key: key}).JSON(t, &canc)
		runJobs(t, e)
		// One way: the reference cannot be cleared or moved, the
		// cancellation document is as fixed as the invoice.
		refused(`UPDATE invoices SET cancelled_by = NULL WHERE id = $1`, inv.InvoiceID)
		refused(`UPDATE invoices SET cancelled_by = $1 WHERE id = $2`, other.InvoiceID, inv.InvoiceID)
		refused(`UPDATE invoices SET refers_to = NULL WHERE id = $1`, canc.InvoiceID)
		refused(`DELETE FROM invoices WHERE id = $1`, canc.InvoiceID)
		refused(`DELETE FROM invoices`)
		if e.Store.Engine() == store.Postgres {
			refused(`TRUNCATE invoice_files`)
		}
		// A no-op update (the row lock of LockInvoice) is allowed.
		if _, err := db.Exec(`UPDATE invoices SET id = id WHERE id = $1`, inv.InvoiceID); err != nil {
			t.Errorf("no-op update: %v", err)
		}
		got := e.Must(200, apitest.Req{Method: "GET", Path: "/v5/ticketing/invoices/" + inv.InvoiceID + ".json", Key: key}).Map(t)
		if got["cancelled_by_invoice_id"] != canc.InvoiceID || got["invoice_number"] != inv.InvoiceNumber {
			t.Errorf("invoice after the attempts: %v", got)
		}
		rep, err := e.Books.Verify(context.Background(), books.VerifyOptions{})
		if err != nil || len(rep.Findings) != 0 || rep.Files < 3 || rep.Unhashed != 0 || rep.Numbers != 4 {
			t.Errorf("verify after the attempts: %+v %v", rep, err)
		}
	})
}

// TestBooksVerifyFindsGapsAndTamperedFiles: a number taken without an
// invoice is a gap, a file changed behind the triggers' back (an
// administrator disabling them) is a hash mismatch and differs from the
// file its chain entry committed to (the other tamperings:
// internal/app/books TestVerifyFindsTampering).
func TestBooksVerifyFindsGapsAndTamperedFiles(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		items := orderSingles(t, e, key, 3)
		first := issue(t, e, key, items[0], "", nil)
		runJobs(t, e)
		get(t, e, first.PDFURL, 200)
		ctx := context.Background()
		if rep, err := e.Books.Verify(ctx, books.VerifyOptions{}); err != nil || len(rep.Findings) != 0 {
			t.Fatalf("clean books: %+v %v", rep, err)
		}
		// A consumed number without its invoice, then the next invoice.
		if _, err := e.Store.DB().Exec(`UPDATE invoice_counters SET last_value = last_value + 1`); err != nil {
			t.Fatal(err)
		}
		third := issue(t, e, key, items[1], "", nil)
		if !strings.HasSuffix(third.InvoiceNumber, "-000003") {
			t.Fatalf("third number %s", third.InvoiceNumber)
		}
		// A number consumed at the end of the series.
		if _, err := e.Store.DB().Exec(`UPDATE invoice_counters SET last_value = last_value + 2`); err != nil {
			t.Fatal(err)
		}
		tamper(t, e.Store, first.InvoiceID)
		rep, err := e.Books.Verify(ctx, books.VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		kinds := map[string]int{}
		for _, f := range rep.Findings {
			kinds[f.Kind]++
			texts = append(texts, f.Text)
		}
		all := strings.Join(texts, "\n")
		if kinds["number_gap"] != 2 || kinds["file_hash_mismatch"] != 1 || kinds["record_changed"] != 1 || len(rep.Findings) != 4 ||
			!strings.Contains(all, "number 2026-000002 is missing") || !strings.Contains(all, "numbers 2026-000004 to 2026-000005 are missing") ||
			!strings.Contains(all, "pdf file of "+first.InvoiceNumber) {
			t.Errorf("findings:\n%s", all)
		}
	})
}

// tamper changes a stored PDF as an administrator could: with the
// triggers off (SQLite: dropped; PostgreSQL: replica mode on one session).
func tamper(t *testing.T, s *store.Store, invoiceID string) {
	t.Helper()
	ctx := context.Background()
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stmts := []string{`DROP TRIGGER invoice_files_update`}
	if s.Engine() == store.Postgres {
		stmts = []string{`SET session_replication_role = replica`}
	}
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	res, err := conn.ExecContext(ctx, `UPDATE invoice_files SET body = $1 WHERE invoice_id = $2 AND format = 'pdf'`, []byte("%PDF-1.7 forged"), invoiceID)
	if n, _ := rowsAffected(res, err); n != 1 {
		t.Fatalf("tamper: %d rows, %v", n, err)
	}
	if s.Engine() == store.Postgres {
		_, _ = conn.ExecContext(ctx, `RESET session_replication_role`)
	}
}

func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// TestAuditLog: each kind of change of a billable item writes an audit
// entry naming the API key; the partner lists them with cursors, another
// account sees none, and the log cannot be changed.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		items := orderSingles(t, e, key, 1)
		id := items[0]
		cust := newCustomer(t, e, key, []string{"Beispiel GmbH", "Hauptstraße 1", "10115 Berlin"}, nil)
		put(t, e, key, id, map[string]any{"customer_id": cust})
		e.Clock.Advance(time.Second)
		coll := e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collections.json", Key: key}).Map(t)["id"].(string)
		e.Must(200, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collection/" + coll + "/billable_items.json", Key: key,
			Body: map[string]any{"billable_item_ids": []string{id}}})
		e.Clock.Advance(time.Second)
		inv := issue(t, e, key, id, cust, nil)
		e.Clock.Advance(time.Second)
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv.InvoiceID + "/cancel.json", Key: key})
		// A refused change writes nothing.
		e.Must(422, apitest.Req{Method: "PUT", Path: "/v5/ticketing/billable_item/" + id + ".json", Key: key, Body: map[string]any{"customer_id": "farebox-customer-none"}})

		all := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/audit_log.json?object_id=" + id, Key: key}).Map(t)["data"].([]any)
		want := []string{"invoice_cancelled", "invoiced", "added_to_collection", "assignment_changed"}
		if len(all) != len(want) {
			t.Fatalf("%d entries: %v", len(all), all)
		}
		actor := ""
		for i, x := range all {
			m := x.(map[string]any)
			a := m["actor"].(map[string]any)
			if m["action"] != want[i] || m["object_id"] != id || a["type"] != "api_key" || str(a["id"]) == "" || m["environment"] != "live" {
				t.Errorf("entry %d: %v", i, m)
			}
			if actor != "" && a["id"] != actor {
				t.Errorf("entry %d actor %v, others %s", i, a["id"], actor)
			}
			actor = str(a["id"])
		}
		d := all[3].(map[string]any)["detail"].(map[string]any)
		if d["before"].(map[string]any)["customer_id"] != nil || d["after"].(map[string]any)["customer_id"] != cust {
			t.Errorf("assignment detail: %v", d)
		}
		if d := all[1].(map[string]any)["detail"].(map[string]any); d["invoice_number"] != inv.InvoiceNumber || d["customer_id"] != cust {
			t.Errorf("invoiced detail: %v", d)
		}
		if d := all[0].(map[string]any)["detail"].(map[string]any); d["invoice_id"] != inv.InvoiceID || str(d["cancellation_number"]) == "" {
			t.Errorf("cancelled detail: %v", d)
		}
		// Cursor pages of two.
		p1 := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/audit_log.json?limit=2", Key: key}).Map(t)
		last := p1["data"].([]any)[1].(map[string]any)["id"].(string)
		p2 := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/audit_log.json?limit=2&starting_after=" + last, Key: key}).Map(t)
		if p1["has_more"] != true || len(p2["data"].([]any)) != 2 || p2["has_more"] != false ||
			p2["data"].([]any)[0].(map[string]any)["action"] != "added_to_collection" {
			t.Errorf("pages: %v / %v", p1, p2)
		}
		// Another account and the test environment see nothing; a
		// foreign cursor is a 400 naming it.
		_, otherKey := e.NewAccount("Other", account.Live)
		if d := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/audit_log.json", Key: otherKey}).Map(t)["data"].([]any); len(d) != 0 {
			t.Errorf("other account sees %v", d)
		}
		if d := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/audit_log.json", Key: e.TestKey}).Map(t)["data"].([]any); len(d) != 0 {
			t.Errorf("test environment sees %v", d)
		}
		if m := e.Must(400, apitest.Req{Method: "GET", Path: "/v9/ticketing/audit_log.json?starting_after=" + last, Key: otherKey}).Map(t); m["code"] != "invalid_parameter" {
			t.Errorf("foreign cursor: %v", m)
		}
		e.Must(400, apitest.Req{Method: "GET", Path: "/v9/ticketing/audit_log.json?limit=101", Key: key})
		e.Must(400, apitest.Req{Method: "GET", Path: "/v9/ticketing/audit_log.json?actor=x", Key: key})
		e.Must(401, apitest.Req{Method: "GET", Path: "/v9/ticketing/audit_log.json"})
		for _, stmt := range []string{`UPDATE audit_log SET actor_id = 'someone else'`, `DELETE FROM audit_log`} {
			if _, err := e.Store.DB().Exec(stmt); err == nil || !strings.Contains(err.Error(), "farebox books") {
				t.Errorf("%s: %v, want a refusal", stmt, err)
			}
		}
	})
}
