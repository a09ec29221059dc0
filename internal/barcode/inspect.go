package barcode

import (
	"errors"
	"fmt"
	"github.com/farebox/farebox/internal/validity"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/clock"
)

// Validity states of a genuine ticket at the inspection instant.
const (
	StateValid      = "valid"
	StateNotYet     = "not_yet_valid"
	StateExpired    = "expired"
	StateNotGenuine = "not_genuine"
)

// Report is what an inspection concludes about one payload.
type Report struct {
	Genuine bool   // signature verified with a known key
	Reason  string // why not genuine (empty when genuine)
	Claims  Claims // zero when not genuine
	State   string // StateValid, StateNotYet, StateExpired or StateNotGenuine
	Test    bool   // a test-environment ticket: never accept in live inspection
	At      time.Time
	// Revoked is the ticket's revocation feed entry (Revocations.Check):
	// genuine, but no longer valid (restored away or revoked), or signed
	// with a revoked key (a RevocationKey entry; then possibly not genuine
	// either, when the key is no longer published).
	Revoked *FeedEntry
	// KeyID is the key id the payload names (0 when it is malformed).
	KeyID uint16
	// Signer describes the format and key of other barcode profiles (UIC
	// 918.3); empty for farebox payloads. Extra are lines such a profile
	// adds to the description.
	Signer string
	Extra  string
	// Copied says why a genuine dynamic ticket's code is not the live one
	// of its bound device (docs/barcodes.md, "Dynamic barcodes"), in words
	// for the inspector: "copied: …". Empty otherwise. A copied code is
	// never acceptable.
	Copied string
	// Replaced says that the device a dynamic code was signed by is one
	// the ticket moved away from (a blocklist's devices entry): "replaced:
	// this ticket moved to another phone on …". Never acceptable.
	Replaced string
	// Window is the time window a dynamic barcode was signed for (zero
	// for static payloads).
	Window Window
}

// Window is the time window of a dynamic barcode: [Start, End).
type Window struct {
	Start, End time.Time
}

// CopiedStatic is the reason for a dynamic ticket's static payload shown
// on its own (a screenshot of an old engine, a printout, the payload from
// ticket.properties): only the moving code with the device signature counts.
const CopiedStatic = "copied: this ticket must show a moving code signed by its phone; this still code (screenshot, printout) does not count"

// ValidityState judges now against the claims' validity (StateValid,
// StateNotYet or StateExpired), for every barcode profile.
func ValidityState(c Claims, now time.Time) string { return validityState(c, now) }

// Inspect verifies payload with kr and judges its validity at now.
func Inspect(payload []byte, kr *Keyring, now time.Time) Report {
	c, err := Verify(payload, kr)
	if err != nil {
		reason := "the payload is malformed"
		switch {
		case errors.Is(err, ErrUnknownKey):
			reason = "it is signed with an unknown key"
		case errors.Is(err, ErrSignature):
			reason = "its signature does not verify (forged or altered)"
		case errors.Is(err, ErrKeyEnvironment):
			reason = "a test key signed a live ticket"
		}
		rep := Report{Reason: reason, State: StateNotGenuine, At: now}
		if pc, _, perr := parse(payload); perr == nil {
			rep.KeyID = pc.KeyID
		}
		return rep
	}
	rep := Report{Genuine: true, Claims: c, State: validityState(c, now), Test: c.Test(), At: now, KeyID: c.KeyID}
	if c.Dynamic {
		rep.Copied = CopiedStatic
	}
	return rep
}

// validityState judges now against [ValidFrom, ValidUntil] with the
// inclusive last second of docs/rules.md (validity.Contains), the same
// rule the service applies to the ticket.
func validityState(c Claims, now time.Time) string {
	switch {
	case now.Before(c.ValidFrom):
		return StateNotYet
	case !validity.Contains(c.ValidFrom, c.ValidUntil, now):
		return StateExpired
	}
	return StateValid
}

// Describe renders verified claims for an inspector: genuine, whose, valid
// now or not, test or live. Times are shown in Europe/Berlin and UTC.
func Describe(c Claims, now time.Time) string {
	return describe(fmt.Sprintf("signed by inspection key %d (payload version %d)", c.KeyID, c.Version), c, now)
}

func describe(signer string, c Claims, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "GENUINE: %s\n", signer)
	if c.Test() {
		b.WriteString("TEST TICKET: issued in the test environment, not valid for travel\n")
	}
	switch validityState(c, now) {
	case StateValid:
		fmt.Fprintf(&b, "VALID NOW: until %s (%s left)\n", berlin(c.ValidUntil), c.ValidUntil.Sub(now).Round(time.Minute))
	case StateNotYet:
		fmt.Fprintf(&b, "NOT YET VALID: valid from %s (in %s)\n", berlin(c.ValidFrom), c.ValidFrom.Sub(now).Round(time.Minute))
	default:
		fmt.Fprintf(&b, "EXPIRED: valid until %s (%s ago)\n", berlin(c.ValidUntil), now.Sub(c.ValidUntil).Round(time.Minute))
	}
	name := strings.TrimSpace(c.FirstName + " " + c.LastName)
	if name == "" {
		name = "(no name on the ticket)"
	}
	fmt.Fprintf(&b, "Passenger:   %s\n", name)
	if c.BirthDate != "" {
		fmt.Fprintf(&b, "Born:        %s\n", c.BirthDate)
	}
	fmt.Fprintf(&b, "Product:     %s (%s)\n", c.ProductName, c.ProductID)
	fmt.Fprintf(&b, "Ticket:      %s\n", c.TicketID)
	fmt.Fprintf(&b, "Valid from:  %s  (%s)\n", berlin(c.ValidFrom), clock.Timestamp(c.ValidFrom))
	fmt.Fprintf(&b, "Valid until: %s  (%s)\n", berlin(c.ValidUntil), clock.Timestamp(c.ValidUntil))
	fmt.Fprintf(&b, "Checked at:  %s\n", berlin(now))
	return b.String()
}

// Acceptable is the inspector's verdict: genuine and valid now, and not a
// test ticket unless allowTest (inspection in the test environment). Use it
// for the exit status of `farebox inspect`.
func (r Report) Acceptable(allowTest bool) bool {
	return r.Genuine && r.State == StateValid && (allowTest || !r.Test) && r.Revoked == nil && r.Copied == "" && r.Replaced == ""
}

// String renders the report: Describe for genuine payloads, a refusal otherwise.
func (r Report) String() string {
	if r.Revoked != nil && r.Revoked.Kid != "" {
		head := fmt.Sprintf("REVOKED KEY: signed with inspection key %s, revoked: %s (at %s, revocation feed entry %d)\n",
			r.Revoked.Kid, r.Revoked.Reason, r.Revoked.RevokedAt, r.Revoked.Seq)
		if !r.Genuine {
			return head + "NOT GENUINE: " + r.Reason + "\n"
		}
		return head + Describe(r.Claims, r.At)
	}
	if !r.Genuine {
		return "NOT GENUINE: " + r.Reason + "\n"
	}
	d := Describe(r.Claims, r.At)
	if r.Copied != "" {
		d = "COPIED: " + strings.TrimPrefix(r.Copied, "copied: ") + "\n" + d
	}
	if r.Replaced != "" {
		d = "REPLACED: " + strings.TrimPrefix(r.Replaced, "replaced: ") + "\n" + d
	}
	if r.Signer != "" {
		d = describe(r.Signer, r.Claims, r.At) + r.Extra
	}
	if r.Revoked != nil {
		return fmt.Sprintf("REVOKED: %s (%s at %s, revocation feed entry %d)\n", r.Revoked.Reason, r.Revoked.Kind, r.Revoked.RevokedAt, r.Revoked.Seq) + d
	}
	return d
}

func berlin(t time.Time) string { return t.In(clock.Berlin).Format("2006-01-02 15:04 MST") }
