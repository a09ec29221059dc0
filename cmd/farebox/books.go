package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/config"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/store"
)

// booksCmd is `farebox books verify|checkpoint|checkpoints|audit`
// (docs/books.md).
func booksCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const help = `Usage:
  farebox books verify [--checkpoints FILE]
                                       check the number series, the stored files, every chain of the books, its records and
                                       checkpoints (the stored ones and those in FILE: lines of farebox books checkpoints,
                                       pages of GET /v1/books/checkpoints.json); a KEY line names each books key known only
                                       from the database (books_keys): compare it with the public key you hold
  farebox books verify --offline --checkpoints FILE
                                       without the database: check FILE's checkpoints against the keys in it and the proofs
                                       in it (GET /v1/books/proofs/inclusion.json, …/consistency.json) against its checkpoints
  farebox books checkpoint             sign a checkpoint of every chain that grew now, print them as JSON lines
  farebox books checkpoints            print every stored checkpoint, one JSON object per line
  farebox books audit --account ID [--environment live|test] [--object-id ID] [--limit N] [--starting-after ID]
                                       print an account's audit log, newest first, one JSON entry per line`
	if len(args) == 0 || !slices.Contains([]string{"verify", "audit", "checkpoint", "checkpoints"}, args[0]) {
		fmt.Fprintln(stderr, help)
		return errUsage
	}
	fs, db := newSubcommand("books", args, getenv, stderr)
	var acc, env, objectID, limit, after, cpFile *string
	var offline *bool
	key := fs.String("books-key", getenv("FAREBOX_BOOKS_KEY"), "the books key: its file, or the pkcs11: URI of a key in a token (env FAREBOX_BOOKS_KEY); empty: books-ed25519.pem in --data-dir")
	switch args[0] {
	case "audit":
		acc = fs.String("account", "", "account id (required)")
		env = fs.String("environment", "live", "live or test")
		objectID = fs.String("object-id", "", "only the entries of this billable item")
		limit = fs.String("limit", "100", "entries per page (1–100)")
		after = fs.String("starting-after", "", "an entry id: print older entries")
	case "verify":
		cpFile = fs.String("checkpoints", "", "a file of checkpoints held outside the database (JSON values: checkpoint lines, API pages, proofs)")
		offline = fs.Bool("offline", false, "check --checkpoints FILE alone, without the database")
	}
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if offline != nil && *offline {
		if *cpFile == "" || len(pos) != 0 {
			fmt.Fprintln(stderr, help)
			return errUsage
		}
		return booksVerifyOffline(*cpFile, stdout)
	}
	return db.withStore(ctx, func(s *store.Store) error {
		if len(pos) != 0 {
			fmt.Fprintln(stderr, help)
			return errUsage
		}
		bk := booksOn(s, db.prefix, invoicedoc.Seller{}, nil, nil) // no receipt here: no letterhead, no links, no renderer
		keyPath := booksKeyPath(*key, db.dataDir)
		switch args[0] {
		case "verify":
			return booksVerify(ctx, bk, keyPath, *cpFile, stdout)
		case "checkpoint":
			signer, err := books.KeySigner(keyPath, true)
			if err != nil {
				return err
			}
			cps, err := bk.Checkpoint(ctx, signer)
			return printLines(stdout, cps, err)
		case "checkpoints":
			cps, err := bk.Checkpoints(ctx)
			return printLines(stdout, cps, err)
		}
		return booksAudit(ctx, bk, stdout, stderr, *acc, *env, *objectID, *limit, *after)
	})
}

// booksAudit prints a page of an account's audit log.
func booksAudit(ctx context.Context, bk *books.Books, stdout, stderr io.Writer, acc, env, objectID, limit, after string) error {
	if acc == "" || (env != string(account.Live) && env != string(account.Test)) {
		fmt.Fprintln(stderr, "farebox books audit: --account is required and --environment is live or test")
		return errUsage
	}
	req := books.AuditRequest{ListRequest: kit.ListRequest{Limit: limit, StartingAfter: after}}
	if objectID != "" {
		req.ObjectID = &objectID
	}
	page, err := bk.AuditLog(ctx, account.Principal{AccountID: acc, Environment: account.Environment(env)}, req)
	if err != nil {
		return err
	}
	if err := printLines(stdout, page.Data, nil); err != nil {
		return err
	}
	if page.HasMore && len(page.Data) > 0 {
		fmt.Fprintf(stderr, "more: --starting-after %s\n", page.Data[len(page.Data)-1].ID)
	}
	return nil
}

// printLines prints each value as one JSON line, unless err.
func printLines[T any](w io.Writer, vs []T, err error) error {
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}

// booksVerify prints what it checked and every finding; a finding makes
// the command fail (exit 1). The books key (if there is one) checks the
// checkpoints' signatures, those of other keys (rotated out) are checked
// with the public key books_keys records and listed as KEY lines; cpFile
// adds checkpoints held outside.
func booksVerify(ctx context.Context, bk *books.Books, keyPath, cpFile string, stdout io.Writer) error {
	var o books.VerifyOptions
	if signer, err := books.KeySigner(keyPath, false); err == nil {
		o.Key = signer.Public()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if cpFile != "" {
		x, err := readExport(cpFile)
		if err != nil {
			return err
		}
		o.Checkpoints = x.Checkpoints
	}
	rep, err := bk.Verify(ctx, o)
	if err != nil {
		return err
	}
	for _, f := range rep.Findings {
		fmt.Fprintf(stdout, "FINDING %s: %s\n", f.Kind, f.Text)
	}
	for _, id := range rep.KeysFromDatabase {
		fmt.Fprintf(stdout, "KEY %s: checked with the public key the database records (books_keys); compare it with the one you hold\n", id)
	}
	fmt.Fprintf(stdout, "checked %d numbers in %d series and %d stored files (%d stored before hashes were recorded, not checkable), "+
		"%d entries in %d chains (%d records from before the chain, %d with erased personal fields) and %d checkpoints: %d findings\n",
		rep.Numbers, rep.Series, rep.Files, rep.Unhashed, rep.Entries, rep.Chains, rep.BeforeChain, rep.Erased, rep.Checkpoints, len(rep.Findings))
	if len(rep.Findings) > 0 {
		return fmt.Errorf("books verify: %d findings", len(rep.Findings))
	}
	return nil
}

// readExport reads a file held outside the database: checkpoints as
// farebox books checkpoints prints them, pages of GET
// /v1/books/checkpoints.json and proofs (books.ReadExport).
func readExport(path string) (books.Export, error) {
	f, err := os.Open(path)
	if err != nil {
		return books.Export{}, err
	}
	defer f.Close()
	x, err := books.ReadExport(f)
	if err != nil {
		return x, fmt.Errorf("%s: %w", path, err)
	}
	return x, nil
}

// booksVerifyOffline checks an export without the database, as a
// partner or tax adviser would: one FINDING line per finding and a
// summary; a finding makes the command fail (exit 1).
func booksVerifyOffline(path string, stdout io.Writer) error {
	x, err := readExport(path)
	if err != nil {
		return err
	}
	rep := books.VerifyExport(x)
	for _, f := range rep.Findings {
		fmt.Fprintf(stdout, "FINDING %s: %s\n", f.Kind, f.Text)
	}
	fmt.Fprintf(stdout, "checked %d checkpoints with %d keys and %d proofs: %d findings\n", rep.Checkpoints, len(x.Keys), rep.Proofs, len(rep.Findings))
	if len(rep.Findings) > 0 {
		return fmt.Errorf("books verify: %d findings", len(rep.Findings))
	}
	return nil
}

// booksKeyPath is the books key's file: --books-key, or books-ed25519.pem
// in the data directory.
func booksKeyPath(key, dataDir string) string {
	if key != "" {
		return key
	}
	return filepath.Join(dataDir, books.KeyFile)
}

// checkpointBooks signs a checkpoint of every chain that grew every
// --books-checkpoint-interval (docs/books.md), with the books key (created
// on the first start). A key that cannot be read is a start-up error.
func checkpointBooks(bg *loops, cfg config.Config, bk *books.Books, log *slog.Logger) error {
	if cfg.BooksCheckpointInterval <= 0 {
		return nil
	}
	signer, err := books.KeySigner(booksKeyPath(cfg.BooksKey, cfg.DataDir), true)
	if err != nil {
		return err
	}
	bg.every(cfg.BooksCheckpointInterval, func(ctx context.Context) {
		cps, err := bk.Checkpoint(ctx, signer)
		if len(cps) > 0 {
			log.Debug("books checkpoints signed", "count", len(cps))
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("books checkpoint failed", "error", err.Error())
		}
	})
	return nil
}
