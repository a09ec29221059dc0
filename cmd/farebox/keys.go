package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/app/inspection"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/credentials"
	"github.com/farebox/farebox/internal/store"
)

const keysUsage = `Usage: farebox keys list|rotate|prune|revoke|generate|import|public|destroy [flags]

  keys list                      the stored inspection keys: active, signing,
                                 how many valid tickets each signs and until when
  keys rotate [--environment live|test] [--publish-ahead 48h]
                                 add a key, published in keys.json at once, that
                                 signs new tickets and the revocation feed after
                                 --publish-ahead (default 48h, so devices syncing
                                 keys.json daily know it first; 0 after a
                                 compromise); tickets signed so far keep their
                                 key, which stays published until their last one
                                 ends; prunes unneeded keys
  keys prune                     delete keys no valid ticket needs any more
  keys revoke KID --reason TEXT  a compromised key: its valid tickets are signed
                                 anew with the active key (passes updated), the key
                                 enters the revocation feed and is deleted
  keys rotating-secret           print the secret (hex) from which the TOTP keys of
                                 dynamic tickets' Google Wallet rotating barcodes are
                                 derived; inspection devices need it (farebox inspect
                                 --rotating-secret FILE); keep it as secret as a key

Keys are where the service keeps them: --inspection-keys DIR or TOKEN-URI,
else the data dir (embedded), else the database. Running services re-read
them within seconds. Runbook: docs/operations.md, "Inspection key rotation".

One key in a hardware token (--key pkcs11:token=…;object=…?module-path=…&pin-source=…),
no database needed; each prints the key's public half (PEM):
  keys generate --key URI --type ed25519|ec-p256|rsa-1024|rsa-2048|rsa-3072|dsa-1024|dsa-2048
                                 make the key pair inside the token (never extractable)
  keys import --key URI --file KEY.pem
                                 move a key that exists outside (a registered UIC key, the
                                 VDV key, the Apple, APNs or Google key) into the token
  keys public --key URI          the public key, to check signatures outside farebox
  keys destroy --key URI         destroy the key pair (a leaked or retired key)
Runbook: docs/operations.md, "Keys in a hardware token".

Flags:
`

// keysCmd is `farebox keys …`.
func keysCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && tokenKeyCommands[args[0]] {
		return tokenKeysCmd(args, stdout, stderr)
	}
	if len(args) == 0 || !strings.Contains(" list rotate prune revoke rotating-secret ", " "+args[0]+" ") {
		fmt.Fprint(stderr, keysUsage)
		return errUsage
	}
	fs, db := newSubcommand("keys", args, getenv, stderr)
	keysCfg := fs.String("inspection-keys", getenv("FAREBOX_INSPECTION_KEYS"), "key directory, comma-separated key files or the pkcs11: URI of the token keeping them (env FAREBOX_INSPECTION_KEYS)")
	env := fs.String("environment", barcode.EnvLive, "rotate: the key range, live or test")
	reason := fs.String("reason", "", "revoke: why the key is revoked (shown to inspectors in the revocation feed)")
	asJSON := fs.Bool("json", false, "list: print JSON")
	ahead := fs.Duration("publish-ahead", inspection.KeyPublishAhead, "rotate: how long the new key is published before it signs (0: at once, after a compromise)")
	fs.Usage = func() { fmt.Fprint(stderr, keysUsage); fs.PrintDefaults() }
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if (args[0] == "revoke") != (len(pos) == 1) || len(pos) > 1 {
		fs.Usage()
		return errUsage
	}
	return db.withStore(ctx, func(st *store.Store) error {
		s := credentials.Settings{DataDir: db.dataDir, InspectionKeys: *keysCfg, Embedded: db.url == "" || strings.HasPrefix(db.url, "sqlite:")}
		a := inspection.New(store.NewView[inspection.Queries](st), clock.System{}, credentials.InspectionStore{Settings: s, Store: st}, nil)
		switch args[0] {
		case "rotating-secret":
			b, err := credentials.LoadRotatingSecret(ctx, st, true)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, hex.EncodeToString(b))
		case "list":
			keys, err := a.Keys(ctx)
			if err != nil {
				return err
			}
			if *asJSON {
				return json.NewEncoder(stdout).Encode(keys)
			}
			for _, k := range keys {
				state := "verifies only"
				switch {
				case k.Active:
					state = "ACTIVE: signs new tickets"
				case k.Signing:
					state = "signs the tickets stamped with it"
				}
				last := "-"
				if k.LastValidUntil != nil {
					last = k.LastValidUntil.Format(time.RFC3339)
				}
				if k.SignsFrom != nil && !k.Active && k.Signing {
					state = "published, signs from " + k.SignsFrom.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(stdout, "%-6d %-5s %-34s %6d valid tickets, last ends %s\n", k.Kid, k.Environment, state, k.Tickets, last)
			}
		case "rotate":
			r, err := a.Rotate(ctx, *env, *ahead)
			if err != nil {
				return err
			}
			if *ahead > 0 {
				fmt.Fprintf(stdout, "new %s inspection key %d is published now and signs new tickets and the revocation feed from %s; key %d signs until then; "+
					"%d valid tickets keep key %d (published until their last one ends)\n",
					*env, r.New.ID, r.SignsFrom.UTC().Format(time.RFC3339), r.Old, r.Stamped, r.Old)
			} else {
				fmt.Fprintf(stdout, "new %s inspection key %d signs new tickets; %d valid tickets keep key %d (published until their last one ends)\n",
					*env, r.New.ID, r.Stamped, r.Old)
			}
			if len(r.Pruned) > 0 {
				fmt.Fprintf(stdout, "pruned keys no valid ticket needs: %v\n", r.Pruned)
			}
		case "prune":
			pruned, err := a.Prune(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "pruned %d keys: %v\n", len(pruned), pruned)
		case "revoke":
			r, err := a.Revoke(ctx, pos[0], *reason)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "revoked inspection key %d: %d valid tickets are signed with key %d now (their passes are updated); "+
				"the key is in the revocation feed until %s%s\n", r.Kid, r.Resigned, r.Successor, r.FeedUntil.Format(time.RFC3339),
				map[bool]string{true: " and deleted from the key store", false: " (it was no longer stored)"}[r.Removed])
		}
		return nil
	})
}
