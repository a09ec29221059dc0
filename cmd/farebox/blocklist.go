package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/uic"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/blocklist"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/config"
	"github.com/farebox/farebox/internal/store"
)

const blocklistUsage = `Usage:
  farebox blocklist export [--since N] [--limit N] [--output FILE]
  farebox blocklist import FILE|URL --source NAME [--keys keys.json]

export writes the signed VDV-KA and UIC 918.3 blocklist of the service's
revoked and restored-away tickets after feed position N (the body of GET
/v1/inspection/blocklist.json); import reads an external blocklist in
that format and voids the farebox tickets it names (docs/blocklist.md).
`

// blocklistCmd is `farebox blocklist export|import`.
func blocklistCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "export" && args[0] != "import") {
		fmt.Fprint(stderr, blocklistUsage)
		return errUsage
	}
	fs, db := newSubcommand("blocklist", args, getenv, stderr)
	uicSpec := fs.String("uic-issuer", getenv("FAREBOX_UIC_ISSUER"), "the service's UIC signer RICS:KEYID:KEYFILE (env FAREBOX_UIC_ISSUER; only RICS is read)")
	vdvSpec := fs.String("vdv-issuer", getenv("FAREBOX_VDV_ISSUER"), "the service's VDV-KA signer ORG:PRODUCTORG:KEYFILE:CERTFILE (env FAREBOX_VDV_ISSUER; only ORG is read)")
	fs.Usage = func() { fmt.Fprint(stderr, blocklistUsage); fs.PrintDefaults() }
	if args[0] == "export" {
		return blocklistExport(ctx, fs, db, args[1:], *uicSpec, *vdvSpec, getenv, stdout)
	}
	source := fs.String("source", "", "name of the list (a-z, 0-9, . _ -): keys its entries and appears in the voided tickets' reason")
	keys := fs.String("keys", "", "keys.json of the list's issuer: its signature must verify (without it the signature is not checked)")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return errUsage
	}
	data, err := readSource(ctx, pos[0])
	if err != nil {
		return err
	}
	l, err := parseBlocklist(data, *keys)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	a, s, err := db.openApp(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	r, err := a.ImportBlocklist(ctx, *source, l, blocklistIssuer(*uicSpec, *vdvSpec))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "imported %s: %d entries, %d name this service's tickets, %d new, %d tickets voided\n", r.Source, r.Entries, r.Ours, r.Added, len(r.Voided))
	for _, id := range r.Voided {
		fmt.Fprintln(stdout, "voided", id)
	}
	return nil
}

// blocklistExport is `farebox blocklist export`.
func blocklistExport(ctx context.Context, fs *flag.FlagSet, db *dbFlags, args []string, uicSpec, vdvSpec string, getenv func(string) string, stdout io.Writer) error {
	since := fs.Int64("since", 0, "feed position to start after (the last_seq of the previous export)")
	limit := fs.Int("limit", wallets.BlocklistPage, "entries at most (1 to 10000)")
	output := fs.String("output", "", "write to this file instead of standard output")
	keysCfg := fs.String("inspection-keys", getenv("FAREBOX_INSPECTION_KEYS"), "key directory or comma-separated key files that sign the list (env FAREBOX_INSPECTION_KEYS)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		fs.Usage()
		return errUsage
	}
	kr, err := inspectKeyring(ctx, *db, "", *keysCfg)
	if err != nil {
		return err
	}
	return db.withStore(ctx, func(s *store.Store) error {
		iss := blocklistIssuer(uicSpec, vdvSpec)
		w := wallets.New(store.NewView[wallets.Queries](s), clock.System{}, nil, wallets.Options{Inspection: kr,
			UIC: func() (*uic.Issuer, error) { return &uic.Issuer{RICS: iss.UICRICS}, nil },
			VDV: func() (*vdv.Issuer, error) { return &vdv.Issuer{Org: iss.VDVOrg}, nil }})
		l, err := w.Blocklist(ctx, *since, *limit)
		if err != nil {
			return err
		}
		body, err := json.Marshal(l)
		if err != nil {
			return err
		}
		body = append(body, '\n')
		if *output != "" {
			return os.WriteFile(*output, body, 0o644)
		}
		_, err = stdout.Write(body)
		return err
	})
}

// blocklistIssuer reads the service's issuer numbers from the barcode
// signer settings (the development ones without them).
func blocklistIssuer(uicSpec, vdvSpec string) app.BlocklistIssuer {
	iss := app.BlocklistIssuer{UICRICS: uic.DevRICS, VDVOrg: vdv.DevOrg}
	if n, err := strconv.Atoi(strings.SplitN(uicSpec, ":", 2)[0]); err == nil && uicSpec != "" {
		iss.UICRICS = n
	}
	if n, err := strconv.Atoi(strings.SplitN(vdvSpec, ":", 2)[0]); err == nil && vdvSpec != "" {
		iss.VDVOrg = n
	}
	return iss
}

// parseBlocklist parses data, checking its signature with the keys.json
// file keys when given.
func parseBlocklist(data []byte, keys string) (*blocklist.List, error) {
	var kr *barcode.Keyring
	if keys != "" {
		b, err := os.ReadFile(keys)
		if err != nil {
			return nil, err
		}
		if kr, err = barcode.ParseKeySet(b); err != nil {
			return nil, fmt.Errorf("--keys %s: %w", keys, err)
		}
	}
	return blocklist.Parse(data, kr)
}

// importBlocklists imports cfg.BlocklistImport every cfg.BlocklistInterval
// from the source's stored cursor, page after page while the list says
// more follows (docs/blocklist.md).
func importBlocklists(bg *loops, cfg config.Config, a *app.App, log *slog.Logger) {
	if cfg.BlocklistImport == "" {
		return
	}
	iss := blocklistIssuer(cfg.UICIssuer, cfg.VDVIssuer)
	log.Info("blocklist import scheduled", "url", cfg.BlocklistImport, "every", cfg.BlocklistInterval.String(), "source", cfg.BlocklistSource,
		"signature_checked", cfg.BlocklistKeys != "")
	bg.every(cfg.BlocklistInterval, func(ctx context.Context) {
		for range 100 { // pages per run at most
			more, err := importBlocklistPage(ctx, cfg, a, iss, log)
			if err != nil && ctx.Err() == nil {
				log.Warn("blocklist import failed; nothing of the page was imported", "source", cfg.BlocklistSource, "error", err.Error())
			}
			if err != nil || !more {
				return
			}
		}
	})
}

// importBlocklistPage fetches and imports the page after the stored
// cursor; more says another page follows.
func importBlocklistPage(ctx context.Context, cfg config.Config, a *app.App, iss app.BlocklistIssuer, log *slog.Logger) (bool, error) {
	since, err := a.BlocklistCursor(ctx, cfg.BlocklistSource)
	if err != nil {
		return false, err
	}
	u, err := url.Parse(cfg.BlocklistImport)
	if err != nil {
		return false, err
	}
	q := u.Query()
	q.Set("since", strconv.FormatInt(since, 10))
	u.RawQuery = q.Encode()
	data, err := fetchBounded(ctx, u.String(), blocklist.MaxBytes)
	if err != nil {
		return false, err
	}
	l, err := parseBlocklist(data, cfg.BlocklistKeys)
	if err != nil {
		return false, err
	}
	r, err := a.ImportBlocklist(ctx, cfg.BlocklistSource, l, iss)
	if err != nil {
		return false, err
	}
	if r.Added > 0 || len(r.Voided) > 0 {
		log.Info("blocklist imported", "source", r.Source, "entries", r.Entries, "ours", r.Ours, "new", r.Added, "voided", len(r.Voided), "last_seq", r.LastSeq)
	}
	return r.More && r.LastSeq > since, nil
}

// fetchBounded GETs u (one minute at most) and refuses a body over max
// bytes instead of cutting it.
func fetchBounded(ctx context.Context, u string, max int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, res.Status)
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, max+1))
	if err == nil && int64(len(data)) > max {
		return nil, errors.New("GET " + u + ": the blocklist is larger than " + strconv.FormatInt(max, 10) + " bytes")
	}
	return data, err
}
