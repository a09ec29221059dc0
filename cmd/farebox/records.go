package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	recordsapp "github.com/farebox/farebox/internal/app/records"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/config"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/records"
	"github.com/farebox/farebox/internal/store"
)

// recordsOn is the records capability on s (the one place the commands
// and serve wire package records to the store).
func recordsOn(s *store.Store, prefix string) *recordsapp.Service {
	return recordsapp.New(store.NewView[recordsapp.Queries](s), clock.System{}, ident.Prefix(prefix))
}

const inspectorsHelp = `Usage: farebox inspectors add NAME | list | password NAME|ID | revoke NAME|ID

The inspectors and their inspection devices (docs/records.md). "add"
prints the device token once: the device posts its checks to
POST /v1/inspection/records.json with "Authorization: Bearer <token>";
only the token's SHA-256 is stored. "password" sets the password the
inspector signs in to the inspector app (/inspect, docs/inspect.md) with,
read from the first line of standard input (at least 12 characters; stored
as argon2id; the inspector's open app sessions end). "revoke" ends the
token, the password and every app session at once.`

// inspectorsCmd is `farebox inspectors add|list|password|revoke`.
func inspectorsCmd(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "add" && args[0] != "list" && args[0] != "revoke" && args[0] != "password") {
		fmt.Fprintln(stderr, inspectorsHelp)
		return errUsage
	}
	fs, db := newSubcommand("inspectors", args, getenv, stderr)
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if (args[0] == "list") != (len(pos) == 0) || len(pos) > 1 {
		fmt.Fprintln(stderr, inspectorsHelp)
		return errUsage
	}
	return db.withStore(ctx, func(s *store.Store) error {
		rs := recordsOn(s, db.prefix)
		switch args[0] {
		case "add":
			i, token, err := rs.AddInspector(ctx, pos[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "inspector %s (%s)\ndevice token (shown once; give it to the inspection device):\n%s\n", i.Name, i.ID, token)
		case "password":
			line, err := bufio.NewReader(stdin).ReadString('\n')
			if err != nil && line == "" {
				return fmt.Errorf("inspectors password: give the password on the first line of standard input")
			}
			if err := webusersOn(s, clock.System{}, db.prefix).SetInspectorPassword(ctx, pos[0], strings.TrimRight(line, "\r\n")); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "password set for inspector %s: it signs in at /inspect; its open app sessions have ended\n", pos[0])
		case "revoke":
			ok, err := rs.RevokeInspector(ctx, pos[0])
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("inspectors revoke: no active inspector %q", pos[0])
			}
			fmt.Fprintf(stdout, "revoked inspector %s: its device token is refused from now on\n", pos[0])
		default:
			is, err := rs.Inspectors(ctx)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tTOKEN\tCREATED\tSTATE")
			for _, i := range is {
				state := "active"
				if i.RevokedAt != nil {
					state = "revoked " + clock.Timestamp(*i.RevokedAt)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s…\t%s\t%s\n", i.ID, i.Name, i.TokenPrefix, clock.Timestamp(i.CreatedAt), state)
			}
			return tw.Flush()
		}
		return nil
	})
}

const recordsHelp = `Usage: farebox records export --day YYYY-MM-DD --recipient AGE_RECIPIENT [--kind all|issuance|inspection] [--output FILE]

Writes the day's (Europe/Berlin) issuance and inspection records for the
central reporting, pseudonymised and encrypted with age to the recipient
("age1…", or @FILE with one recipient a line; env FAREBOX_RECORDS_RECIPIENT),
to standard output unless --output (docs/records.md). The traveller's
pseudonym is HMAC-SHA256 under --pseudonym-key FILE (env
FAREBOX_PSEUDONYM_KEY), else under the key the database keeps.
"farebox serve --records-export-dir DIR" writes each previous day's
export into DIR by itself, once across instances.`

// recordsCmd is `farebox records export`.
func recordsCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(stderr, recordsHelp)
		return errUsage
	}
	fs, db := newSubcommand("records", args, getenv, stderr)
	day := fs.String("day", "", "the day to export, YYYY-MM-DD in Europe/Berlin (default: yesterday)")
	kind := fs.String("kind", recordsapp.KindAll, "issuance, inspection or all")
	recipient := fs.String("recipient", getenv("FAREBOX_RECORDS_RECIPIENT"), "age recipient \"age1…\" or @FILE (env FAREBOX_RECORDS_RECIPIENT)")
	keyFile := fs.String("pseudonym-key", getenv("FAREBOX_PSEUDONYM_KEY"), "file holding the pseudonym key (env FAREBOX_PSEUDONYM_KEY); empty: the database's")
	output := fs.String("output", "", "write to FILE instead of standard output")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 0 || *recipient == "" {
		fmt.Fprintln(stderr, recordsHelp)
		return errUsage
	}
	if *day == "" {
		*day = recordsapp.PreviousDay(time.Now())
	}
	rcpt, err := recipientText("--recipient", *recipient)
	if err != nil {
		return err
	}
	return db.withStore(ctx, func(s *store.Store) error {
		p, err := pseudonymKey(ctx, s, *keyFile)
		if err != nil {
			return err
		}
		req := recordsapp.ExportRequest{Day: *day, Kind: *kind, Recipients: rcpt, Pseudonyms: p}
		sum, err := exportTo(ctx, recordsOn(s, db.prefix), req, *output, stdout)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "records %s: %d issued tickets, %d inspections (pseudonym key %s)\n", sum.Day, sum.Issuance, sum.Inspections, p.KeyID)
		return nil
	})
}

// exportTo writes the export to path ("" standard output; a file is
// written through a temporary file renamed into place, ExportFile).
func exportTo(ctx context.Context, rs *recordsapp.Service, req recordsapp.ExportRequest, path string, stdout io.Writer) (recordsapp.ExportSummary, error) {
	if path == "" {
		return rs.Export(ctx, req, stdout)
	}
	return rs.ExportFile(ctx, req, path)
}

// recipientText is the recipient flag's text: the recipient itself, or
// the file @FILE names; flag names the flag in the error.
func recipientText(flag, v string) (string, error) {
	if !strings.HasPrefix(v, "@") {
		return v, nil
	}
	b, err := os.ReadFile(v[1:])
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	return string(b), nil
}

// pseudonymSecret names the database's pseudonym key (service_secrets).
const pseudonymSecret = "records/pseudonym-key"

// pseudonymKey loads the seller's pseudonym key: from file (hex, base64 or
// raw, at least 32 bytes), else the database's, generated at first use and
// shared by every instance.
func pseudonymKey(ctx context.Context, s *store.Store, file string) (*records.Pseudonymizer, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--pseudonym-key: %w", err)
		}
		p, err := records.NewPseudonymizer(keyBytes(b))
		if err != nil {
			return nil, fmt.Errorf("--pseudonym-key %s: %w", file, err)
		}
		return p, nil
	}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	var v string
	err := s.Write(ctx, func(q store.Q) (err error) {
		v, err = q.EnsureSecret(ctx, pseudonymSecret, hex.EncodeToString(fresh), time.Now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return records.NewPseudonymizer(keyBytes([]byte(v)))
}

// keyBytes decodes a key file's text as hex or base64 when it is one,
// else takes its bytes as they are.
func keyBytes(b []byte) []byte {
	t := strings.TrimSpace(string(b))
	if k, err := hex.DecodeString(t); err == nil && len(k) >= records.MinKeyBytes {
		return k
	}
	if k, err := base64.StdEncoding.DecodeString(t); err == nil && len(k) >= records.MinKeyBytes {
		return k
	}
	return b
}

// recordsDailyInterval is how often serve's scheduled export looks which
// days it owes (one read of the newest day written; then, per day owed, a
// stat and a claim in the database while the day's file is missing here).
const recordsDailyInterval = time.Minute

// exportRecordsDaily starts serve's scheduled records export
// (--records-export-dir; docs/records.md "The scheduled export"): at start
// and every recordsDailyInterval, the previous day's file and the days
// before it that no instance wrote (--records-export-catch-up), each
// written once by one instance (recordsapp.ExportDue). A recipient, directory or
// pseudonym key that does not work is a start-up error naming its flag.
func exportRecordsDaily(ctx context.Context, bg *loops, cfg config.Config, st *store.Store, c clock.Clock, log *slog.Logger) error {
	if cfg.RecordsExportDir == "" {
		return nil
	}
	d, err := recordsDaily(ctx, cfg, st)
	if err != nil {
		return err
	}
	rs := recordsapp.New(store.NewView[recordsapp.Queries](st), c, ident.Prefix(cfg.IDPrefix))
	log.Info("records export scheduled", "dir", d.Dir, "pseudonym_key_id", d.Pseudonyms.KeyID)
	var missed string // the missed days last warned of
	run := func(ctx context.Context) {
		due, err := rs.ExportDue(ctx, d)
		for _, r := range due.Days {
			if r.Written {
				log.Info("records exported", "day", r.Day, "file", r.Path, "issuance", r.Summary.Issuance, "inspections", r.Summary.Inspections)
			}
		}
		if m := due.MissedFrom + "/" + due.MissedTo; due.MissedFrom != "" && m != missed {
			missed = m
			log.Warn("records export: days no instance wrote lie before the catch-up window; export them with records export --day",
				"from", due.MissedFrom, "to", due.MissedTo, "catch_up_days", d.CatchUp)
		}
		if err != nil && ctx.Err() == nil {
			day := ""
			if n := len(due.Days); n > 0 {
				day = due.Days[n-1].Day
			}
			log.Warn("records export failed; retried at the next run", "day", day, "error", err.Error())
		}
	}
	bg.run(func(ctx context.Context) {
		run(ctx)
		every(ctx, recordsDailyInterval, func() { run(ctx) })
	})
	return nil
}

// recordsDaily checks the scheduled export's settings and loads its key.
func recordsDaily(ctx context.Context, cfg config.Config, st *store.Store) (recordsapp.Daily, error) {
	d := recordsapp.Daily{Dir: cfg.RecordsExportDir, Lease: 10 * time.Minute, CatchUp: cfg.RecordsCatchUp}
	rcpt, err := recipientText("--records-recipient", cfg.RecordsRecipient)
	if err != nil {
		return d, err
	}
	if _, err := recordsapp.ParseRecipients(rcpt); err != nil {
		return d, fmt.Errorf("--records-recipient: not an age recipient (age1…, an SSH public key, or @FILE with one a line): %w", err)
	}
	d.Recipients = rcpt
	if fi, err := os.Stat(d.Dir); err != nil || !fi.IsDir() {
		return d, fmt.Errorf("--records-export-dir %s: not a directory", d.Dir)
	}
	probe, err := os.CreateTemp(d.Dir, ".records-*")
	if err != nil {
		return d, fmt.Errorf("--records-export-dir: %w", err)
	}
	probe.Close()
	os.Remove(probe.Name())
	if d.Pseudonyms, err = pseudonymKey(ctx, st, cfg.PseudonymKey); err != nil {
		return d, err
	}
	return d, nil
}
