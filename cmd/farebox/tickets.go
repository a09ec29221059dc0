package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/farebox/farebox/internal/idempotency"
)

// ticketsCmd is `farebox tickets revoke TICKET_ID --reason TEXT`.
func ticketsCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const help = "Usage: farebox tickets revoke TICKET_ID --reason TEXT"
	if len(args) == 0 || args[0] != "revoke" {
		fmt.Fprintln(stderr, help)
		return errUsage
	}
	fs, db := newSubcommand("tickets", args, getenv, stderr)
	reason := fs.String("reason", "", "why the ticket is revoked (shown to the traveller and to inspectors)")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, help)
		return errUsage
	}
	a, s, err := db.openApp(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	t, err := a.RevokeTicket(ctx, idempotency.Claim{}, pos[0], *reason)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked %s (%s); it enters the revocation feed until %s\n", t.ID, strings.TrimSpace(*reason), t.ValidUntil.Format("2006-01-02T15:04:05Z"))
	return nil
}
