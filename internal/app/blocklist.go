package app

import (
	"context"
	"regexp"
	"strconv"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/blocklist"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// BlocklistIssuer names this service's ticket issuers as blocklists name
// them: the VDV-KA organisation (vdv.Issuer.Org) and the UIC RICS code
// (uic.Issuer.RICS); 0 leaves that scheme's entries unmatched.
type BlocklistIssuer struct {
	VDVOrg  int
	UICRICS int
}

// BlocklistImport is the outcome of one import (docs/blocklist.md).
type BlocklistImport struct {
	Source  string   `json:"source"`
	Entries int      `json:"entries"` // in the document
	Ours    int      `json:"ours"`    // naming this service's issuers, still valid, blocking a ticket
	Added   int      `json:"added"`   // of those, not imported before
	Voided  []string `json:"voided"`  // the farebox tickets they made invalid
	LastSeq int64    `json:"last_seq"`
	More    bool     `json:"more"`
}

// validSource is an import source's name: it keys the stored entries and
// the cursor, and appears in the voided tickets' reason.
var validSource = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ImportBlocklist stores the entries of l (parsed and verified by
// blocklist.Parse) that name iss's issuers and are not stored yet, and
// voids every farebox ticket one of them names: the ticket becomes
// invalid like an operator's revocation (kind "revoked", reason
// "blocklist SOURCE: …": ticket JSON, rendering engine, passes pushed
// through passes.Changed, the revocation feed that `farebox inspect`
// checks). One transaction: an import that fails changes nothing.
func (a *App) ImportBlocklist(ctx context.Context, source string, l *blocklist.List, iss BlocklistIssuer) (BlocklistImport, error) {
	const op = "app.ImportBlocklist"
	if !validSource.MatchString(source) {
		return BlocklistImport{}, apperr.Validation(op, blocklist.CodeInvalidBlocklist, "source",
			"source: 1 to 64 characters a-z, 0-9, '.', '_', '-' (names the list in the voided tickets' reason)")
	}
	now := a.clock.Now()
	out := BlocklistImport{Source: source, Entries: len(l.VDV) + len(l.UIC), LastSeq: l.LastSeq, More: l.More, Voided: []string{}}
	ours := ourEntries(source, l, iss, now)
	out.Ours = len(ours)
	err := a.store.Write(ctx, func(q store.Q) error {
		out.Voided = out.Voided[:0]
		added, err := q.AddBlocklistEntries(ctx, ours, now)
		if err != nil {
			return err
		}
		out.Added = len(added)
		matched, err := matchBlocklist(ctx, q, added, now)
		if err != nil {
			return err
		}
		for _, m := range matched {
			t, err := q.Ticket(ctx, m.ticketID)
			if err != nil {
				return err
			}
			if err := a.revoke(ctx, q, t, ticketing.RevocationRevoked, "blocklist "+source+": "+m.entry.Reason, now); err != nil {
				return err
			}
			if err := q.MarkBlocklistEntry(ctx, m.entry, t.ID); err != nil {
				return err
			}
			out.Voided = append(out.Voided, t.ID)
		}
		return q.SetBlocklistCursor(ctx, source, l.LastSeq, now)
	})
	if err != nil {
		return BlocklistImport{}, err
	}
	a.notifyJobs()
	return out, nil
}

// BlocklistCursor is where the next scheduled import of source starts
// (the last_seq of its last import; 0 before the first).
func (a *App) BlocklistCursor(ctx context.Context, source string) (int64, error) {
	return a.store.Read().BlocklistCursor(ctx, source)
}

// ourEntries are l's still valid ticket entries that name iss's issuers.
// A VDV entry that blocks a user medium names nothing farebox issued.
func ourEntries(source string, l *blocklist.List, iss BlocklistIssuer, now time.Time) []ticketing.BlockEntry {
	var out []ticketing.BlockEntry
	for _, e := range l.VDV {
		until := blocklist.ValidUntil(e.ValidUntil)
		if iss.VDVOrg != 0 && e.Org == iss.VDVOrg && e.Target == blocklist.TargetTicket && !until.Before(now) {
			out = append(out, ticketing.BlockEntry{Source: source, Scheme: ticketing.BlockVDV, Issuer: e.Org,
				Number: strconv.FormatUint(uint64(e.Number), 10), Target: e.Target, Reason: e.Reason, ValidUntil: until})
		}
	}
	for _, e := range l.UIC {
		until := blocklist.ValidUntil(e.ValidUntil)
		if iss.UICRICS != 0 && e.RICS == iss.UICRICS && !until.Before(now) {
			out = append(out, ticketing.BlockEntry{Source: source, Scheme: ticketing.BlockUIC, Issuer: e.RICS,
				Number: e.TicketNumber, Target: blocklist.TargetTicket, Reason: e.Reason, ValidUntil: until})
		}
	}
	return out
}

type blockMatch struct {
	entry    ticketing.BlockEntry
	ticketID string
}

// matchBlocklist finds the valid farebox tickets es name: a VDV entry by
// the ticket's stored number, a UIC entry by the U_HEAD ticket number of
// a ticket of a uic-918-3-uflex product.
func matchBlocklist(ctx context.Context, q store.Q, es []ticketing.BlockEntry, now time.Time) ([]blockMatch, error) {
	var numbers []uint32
	uicKeys := map[string]ticketing.BlockEntry{}
	for _, e := range es {
		if e.Scheme == ticketing.BlockVDV {
			n, _ := strconv.ParseUint(e.Number, 10, 32)
			numbers = append(numbers, uint32(n))
		} else {
			uicKeys[e.Number] = e
		}
	}
	var out []blockMatch
	if len(numbers) > 0 {
		byNumber, err := q.ValidTicketsByVDVNumber(ctx, numbers, now)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			n, _ := strconv.ParseUint(e.Number, 10, 32)
			if id, ok := byNumber[uint32(n)]; ok && e.Scheme == ticketing.BlockVDV {
				out = append(out, blockMatch{e, id})
			}
		}
	}
	if len(uicKeys) > 0 {
		ids, err := q.ValidTicketIDsOfProfile(ctx, catalog.BarcodeUIC, now)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if e, ok := uicKeys[blocklist.UICTicketNumber(id)]; ok {
				out = append(out, blockMatch{e, id})
			}
		}
	}
	return out, nil
}
