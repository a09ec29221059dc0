package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
)

// TestRetentionCommand drives `farebox retention` against a served
// database on both engines: a ticket whose validity ended 200 days ago is
// counted by --dry-run (changing nothing) and erased by the run; the
// ticket still answers in its shape with neutral values; settings below
// the legal minimum are refused by the command and by serve at start.
func TestRetentionCommand(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		env, dataDir := engineEnv(t, engine)
		apiKey := createAccount(t, env, "Retention GmbH")
		in := startServe(t, env)
		call := httpCaller(t, in.addr)
		tid := activateMonthly(t, call, apiKey, `{"photo_id_lite":{"first_name":"Jürgen","last_name":"Müller","birth_date":"1980-02-29"}}`)

		// The ticket's validity ended 200 days ago.
		s, err := store.Open(context.Background(), store.Options{URL: env["FAREBOX_DATABASE_URL"], DataDir: dataDir, MaxConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-200 * 24 * time.Hour).UTC().Truncate(time.Second)
		q := `UPDATE tickets SET valid_from = ?, valid_until = ? WHERE id = ?`
		if engine == store.Postgres {
			q = `UPDATE tickets SET valid_from = $1, valid_until = $2 WHERE id = $3`
		}
		if _, err := s.DB().ExecContext(context.Background(), q, old.Add(-30*24*time.Hour), old, tid); err != nil {
			t.Fatal(err)
		}
		s.Close()

		dry := cli(t, env, "retention", "--dry-run")
		testtool.Contains(t, dry, "(dry run)", "identification period 183 days", "tickets (medium, postcode)", old.Format(time.RFC3339))
		if !strings.Contains(string(call("PATCH", "/v9/ticketing/tickets/"+tid+".json", "", "")), "Jürgen") {
			t.Fatal("the dry run changed the ticket")
		}
		out := cli(t, env, "retention")
		if !strings.Contains(out, "identification   tickets (medium, postcode)            1          1") {
			t.Errorf("run output:\n%s", out)
		}
		body := string(call("PATCH", "/v9/ticketing/tickets/"+tid+".json", "", ""))
		if strings.Contains(body, "Jürgen") || strings.Contains(body, "1980-02-29") || !strings.Contains(body, `"first_name":"erased"`) {
			t.Errorf("ticket after the run: %.300s", body)
		}

		// Below the legal minimum: refused, naming the setting.
		var errb bytes.Buffer
		err = run(context.Background(), []string{"retention", "--retention-identification", "10d"}, envFrom(env), nil, io.Discard, &errb)
		if err == nil || !strings.Contains(err.Error(), "--retention-identification: 10 days is shorter than the legal minimum of 30 days") {
			t.Errorf("10d: %v", err)
		}
		e2 := maps.Clone(env)
		e2["FAREBOX_RETENTION_BILLING_RECORDS"] = "5y"
		serveStops(t, "serve with 5y", e2, "--retention-billing-records: 5 years is shorter than the legal minimum of 8 years")
	})
}
