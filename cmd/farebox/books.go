package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/invoicedoc"
)

// booksCmd is `farebox books verify` and `farebox books audit`
// (docs/books.md).
func booksCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const help = `Usage:
  farebox books verify                 check the invoice number series for gaps and stored files against their SHA-256
  farebox books audit --account ID [--environment live|test] [--object-id ID] [--limit N] [--starting-after ID]
                                       print an account's audit log, newest first, one JSON entry per line`
	if len(args) == 0 || (args[0] != "verify" && args[0] != "audit") {
		fmt.Fprintln(stderr, help)
		return errUsage
	}
	fs, db := newSubcommand("books", args, getenv, stderr)
	var acc, env, objectID, limit, after *string
	if args[0] == "audit" {
		acc = fs.String("account", "", "account id (required)")
		env = fs.String("environment", "live", "live or test")
		objectID = fs.String("object-id", "", "only the entries of this billable item")
		limit = fs.String("limit", "100", "entries per page (1–100)")
		after = fs.String("starting-after", "", "an entry id: print older entries")
	}
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	s, err := db.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	if len(pos) != 0 {
		fmt.Fprintln(stderr, help)
		return errUsage
	}
	bk := booksOn(s, db.prefix, invoicedoc.Seller{}, nil) // no receipt here: no letterhead, no links
	if args[0] == "verify" {
		return booksVerify(ctx, bk, stdout)
	}
	if *acc == "" || (*env != string(account.Live) && *env != string(account.Test)) {
		fmt.Fprintln(stderr, "farebox books audit: --account is required and --environment is live or test")
		return errUsage
	}
	req := books.AuditRequest{ListRequest: kit.ListRequest{Limit: *limit, StartingAfter: *after}}
	if *objectID != "" {
		req.ObjectID = objectID
	}
	page, err := bk.AuditLog(ctx, account.Principal{AccountID: *acc, Environment: account.Environment(*env)}, req)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for _, e := range page.Data {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	if page.HasMore && len(page.Data) > 0 {
		fmt.Fprintf(stderr, "more: --starting-after %s\n", page.Data[len(page.Data)-1].ID)
	}
	return nil
}

// booksVerify prints what it checked and every finding; a finding makes
// the command fail (exit 1).
func booksVerify(ctx context.Context, bk *books.Books, stdout io.Writer) error {
	rep, err := bk.Verify(ctx)
	if err != nil {
		return err
	}
	for _, f := range rep.Findings {
		fmt.Fprintf(stdout, "FINDING %s: %s\n", f.Kind, f.Text)
	}
	fmt.Fprintf(stdout, "checked %d numbers in %d series and %d stored files (%d stored before hashes were recorded, not checkable): %d findings\n",
		rep.Numbers, rep.Series, rep.Files, rep.Unhashed, len(rep.Findings))
	if len(rep.Findings) > 0 {
		return fmt.Errorf("books verify: %d findings", len(rep.Findings))
	}
	return nil
}
