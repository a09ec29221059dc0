package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/app/webhooks"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
)

const webhooksHelp = `Usage: farebox webhooks <command> --account ACCOUNT_ID --environment live|test [flags] [ENDPOINT_ID]

Commands (docs/webhooks.md; each prints the API's JSON):
  create     --url URL --events TYPE,TYPE|* [--description TEXT]
  list
  get        ENDPOINT_ID
  update     [--url URL] [--events …] [--description TEXT] ENDPOINT_ID
  disable    ENDPOINT_ID
  enable     ENDPOINT_ID
  rotate     [--overlap DURATION] ENDPOINT_ID   (the old secret signs too for the overlap, default 24h)
  delete     ENDPOINT_ID
  attempts   [--limit N] ENDPOINT_ID            (the delivery log, newest first)
  redeliver  --event EVENT_ID ENDPOINT_ID
`

// webhooksCmd is `farebox webhooks …`: the operations of the webhook
// endpoint API for an account, run by the operator on the database.
func webhooksCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmds := map[string]int{"create": 0, "list": 0, "get": 1, "update": 1, "disable": 1, "enable": 1, "rotate": 1, "delete": 1, "attempts": 1, "redeliver": 1}
	if len(args) == 0 {
		fmt.Fprint(stderr, webhooksHelp)
		return errUsage
	}
	npos, ok := cmds[args[0]]
	if !ok {
		fmt.Fprint(stderr, webhooksHelp)
		return errUsage
	}
	fs, db := newSubcommand("webhooks", args, getenv, stderr)
	acc := fs.String("account", "", "account id")
	env := fs.String("environment", "", "live or test")
	url := fs.String("url", "", "endpoint URL")
	events := fs.String("events", "", "comma-separated event types, or * for all")
	desc := fs.String("description", "", "description")
	overlap := fs.Duration("overlap", 0, "rotate: how long the old secret signs too (default 24h)")
	limit := fs.Int("limit", 10, "attempts: entries per page (1-100)")
	ev := fs.String("event", "", "redeliver: the event id")
	allow, _ := strconv.ParseBool(getenv("FAREBOX_WEBHOOK_ALLOW_PRIVATE"))
	fs.BoolVar(&allow, "webhook-allow-private", allow, "as farebox serve --webhook-allow-private (env FAREBOX_WEBHOOK_ALLOW_PRIVATE)")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != npos || *acc == "" || (*env != string(account.Live) && *env != string(account.Test)) {
		fmt.Fprint(stderr, webhooksHelp)
		return errUsage
	}
	return db.withStore(ctx, func(st *store.Store) error {
		if _, err := st.Read().Account(ctx, *acc); err != nil {
			return err
		}
		a := app.New(app.Options{Store: st, Clock: clock.System{}, IDPrefix: db.prefix})
		_, hooks := webhooksOn(st, clock.System{}, db.prefix, a, webhooks.Options{AllowPrivate: allow})
		p := account.Principal{AccountID: *acc, Environment: account.Environment(*env)}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		req := webhooks.EndpointRequest{}
		if set["url"] {
			req.URL = url
		}
		if set["events"] {
			types := []string{}
			for _, t := range strings.Split(*events, ",") {
				if t = strings.TrimSpace(t); t != "" {
					types = append(types, t)
				}
			}
			req.EnabledEvents = &types
		}
		if set["description"] {
			req.Description = desc
		}
		id := ""
		if npos == 1 {
			id = pos[0]
		}
		var out any
		switch args[0] {
		case "create":
			out, err = hooks.CreateEndpoint(ctx, idempotency.Claim{}, p, req)
		case "list":
			out, err = hooks.Endpoints(ctx, p)
		case "get":
			out, err = hooks.Endpoint(ctx, p, id)
		case "update":
			out, err = hooks.UpdateEndpoint(ctx, idempotency.Claim{}, p, id, req)
		case "disable", "enable":
			d := args[0] == "disable"
			out, err = hooks.UpdateEndpoint(ctx, idempotency.Claim{}, p, id, webhooks.EndpointRequest{Disabled: &d})
		case "rotate":
			var secs *int64
			if set["overlap"] {
				s := int64(overlap.Seconds())
				secs = &s
			}
			out, err = hooks.RotateSecret(ctx, idempotency.Claim{}, p, id, secs)
		case "delete":
			out, err = hooks.DeleteEndpoint(ctx, idempotency.Claim{}, p, id)
		case "attempts":
			out, err = hooks.Attempts(ctx, p, id, kit.ListRequest{Limit: strconv.Itoa(*limit)})
		case "redeliver":
			out, err = hooks.Redeliver(ctx, idempotency.Claim{}, p, id, *ev)
		}
		if err != nil {
			return err
		}
		b, _ := json.MarshalIndent(out, "", "  ")
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	})
}
