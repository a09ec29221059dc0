// Package blocklist is the blocklist farebox exports for inspection
// devices and imports from others (docs/blocklist.md): a VDV-KA style list
// (issuing organisation, Berechtigungsnummer and instance, medium or
// ticket, lock mode) and a UIC 918.3 list (RICS company code and ticket
// number), in one signed JSON document. Signing reuses the inspection
// keys of the revocation feed (barcode.SignDetached, keys that may live in
// a hardware token); Parse is the strict, bounded reader of an import.
package blocklist

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock"
)

// Context separates blocklist signatures from the revocation feed's and
// the barcodes' made with the same inspection keys.
const Context = "farebox blocklist\x00"

// Format names the document; Version is the only version there is.
const (
	Format  = "farebox-blocklist"
	Version = 1
)

// Bounds of an imported document. The national list of a few hundred
// thousand blocked tickets would need a larger bound and a streaming
// reader; 16 MiB holds about 80,000 entries of this JSON.
const (
	MaxBytes     = 16 << 20
	MaxEntries   = 100_000
	MaxReason    = 200 // characters
	MaxTicketNum = 20  // U_HEAD ticket key
	MaxReference = 127 // FCB referenceIA5 as farebox writes it
	MaxIssuer    = 100
)

// Targets and lock modes of a VDV entry.
const (
	TargetTicket = "ticket" // the Berechtigung (the ticket) is blocked
	TargetMedium = "medium" // the user medium (a smartcard) is blocked; farebox issues none
	LockReject   = "reject" // the device rejects the ticket (farebox exports only this)
)

// List is the signed body: entries after Since up to LastSeq (the
// revocation feed's sequence numbers). More says a further page follows:
// ask again with since=LastSeq.
type List struct {
	Format      string     `json:"format"`
	Version     int        `json:"version"`
	Issuer      string     `json:"issuer"`
	GeneratedAt string     `json:"generated_at"`
	Since       int64      `json:"since"`
	LastSeq     int64      `json:"last_seq"`
	More        bool       `json:"more"`
	VDV         []VDVEntry `json:"vdv"`
	UIC         []UICEntry `json:"uic"`
	// Devices are the phones dynamic tickets moved away from (present
	// only when there are some, so a list without moves is the same
	// document as before issue 32).
	Devices []DeviceEntry `json:"devices,omitempty"`
}

// DeviceEntry is a device a dynamic ticket moved away from
// (docs/blocklist.md "Moved-away phones"): the codes that phone still
// signs for TicketID are refused as replaced. DeviceKeySHA256 is
// DeviceDigest(TicketID, key), not the key itself, so the public list
// cannot link the tickets of one phone.
type DeviceEntry struct {
	Seq             int64  `json:"seq"`
	TicketID        string `json:"ticket_id"`
	DeviceKeySHA256 string `json:"device_key_sha256"`
	MovedAt         string `json:"moved_at"`
	Reason          string `json:"reason"`
	ValidUntil      string `json:"valid_until"`
}

// DeviceContext separates the device digests from other hashes.
const DeviceContext = "farebox moved device\x00"

// DeviceDigest is the digest a DeviceEntry names the moved-away key of
// ticketID by: base64url (unpadded) of SHA-256 over DeviceContext ‖ the
// ticket id ‖ the uncompressed P-256 point (65 bytes).
func DeviceDigest(ticketID string, key []byte) string {
	h := sha256.New()
	h.Write([]byte(DeviceContext))
	h.Write([]byte(ticketID))
	h.Write(key)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// CheckMoved marks rep replaced when the device key of its genuine
// dynamic ticket is one l lists as moved away; a nil list checks nothing.
func (l *List) CheckMoved(rep *barcode.Report) {
	if l == nil || !rep.Genuine || len(rep.Claims.DeviceKey) == 0 {
		return
	}
	d := DeviceDigest(rep.Claims.TicketID, rep.Claims.DeviceKey)
	for _, e := range l.Devices {
		if e.TicketID == rep.Claims.TicketID && e.DeviceKeySHA256 == d {
			rep.Replaced = "replaced: this ticket moved to another phone on " + ValidUntil(e.MovedAt).In(clock.Berlin).Format("2006-01-02 15:04 MST") +
				"; this phone's code no longer counts"
			return
		}
	}
}

// VDVEntry blocks a VDV-KA ticket: Org is the ticket's issuing
// organisation (header bytes 4–5, the KVP), Number its
// Berechtigungsnummer (header bytes 0–3), Instance the issue data's
// sequence number (farebox writes the number there too).
type VDVEntry struct {
	Seq        int64  `json:"seq"`
	Org        int    `json:"org"`
	Number     uint32 `json:"number"`
	Instance   uint32 `json:"instance"`
	Target     string `json:"target"`
	Lock       string `json:"lock"`
	Reason     string `json:"reason"`
	ValidUntil string `json:"valid_until"`
}

// UICEntry blocks a UIC 918.3 ticket: RICS is the issuer's company code
// (the container's and U_HEAD's), TicketNumber the U_HEAD ticket key (what
// readers show as the ticket number), Reference the FCB document's
// referenceIA5 when known.
type UICEntry struct {
	Seq          int64  `json:"seq"`
	RICS         int    `json:"rics"`
	TicketNumber string `json:"ticket_number"`
	Reference    string `json:"reference,omitempty"`
	Reason       string `json:"reason"`
	ValidUntil   string `json:"valid_until"`
}

// Sign encodes l canonically (compact encoding/json, fields in declaration
// order) and signs it with kr's active live key; the document is
// barcode.DetachedJSON("blocklist", body, sig, kid).
func Sign(l List, kr *barcode.Keyring) (body, sig []byte, kid string, err error) {
	l.Format, l.Version = Format, Version
	if l.VDV == nil {
		l.VDV = []VDVEntry{}
	}
	if l.UIC == nil {
		l.UIC = []UICEntry{}
	}
	if body, err = json.Marshal(l); err != nil {
		return nil, nil, "", apperr.Wrap("blocklist.Sign", err)
	}
	sig, k, err := barcode.SignDetached(Context, body, kr)
	if err != nil {
		return nil, nil, "", err
	}
	return body, sig, k.Kid(), nil
}

// UICTicketNumber is the U_HEAD ticket key of farebox ticket id (the last
// 20 characters of the id without hyphens, upper case; uic.Build).
func UICTicketNumber(ticketID string) string {
	key := strings.ToUpper(strings.ReplaceAll(ticketID, "-", ""))
	return key[max(0, len(key)-20):]
}

// Parse reads an imported document: farebox's own export ({"blocklist":
// …, "signature": …}) with at most MaxBytes and MaxEntries. With keys
// (the source's keys.json) the signature must verify; without, it is not
// checked (and may be absent). Every error names the field.
func Parse(data []byte, keys *barcode.Keyring) (*List, error) {
	const op = "blocklist.Parse"
	if len(data) > MaxBytes {
		return nil, apperr.E(op, apperr.Invalid, CodeBlocklistTooLarge,
			fmt.Sprintf("blocklist: %d bytes, at most %d are accepted", len(data), MaxBytes))
	}
	var env struct {
		Blocklist json.RawMessage        `json:"blocklist"`
		Signature *barcode.FeedSignature `json:"signature"`
	}
	if err := strict(data, &env); err != nil || len(env.Blocklist) == 0 || env.Blocklist[0] != '{' {
		return nil, invalid("/", "blocklist: not a blocklist document ({\"blocklist\": {...}, \"signature\": {...}})")
	}
	if keys != nil {
		if env.Signature == nil {
			return nil, apperr.E(op, apperr.Invalid, CodeBlocklistSignature, "blocklist: unsigned, but a key of its source is configured")
		}
		if err := barcode.VerifyDetached(Context, env.Blocklist, *env.Signature, keys); err != nil {
			return nil, apperr.E(op, apperr.Invalid, CodeBlocklistSignature, "blocklist: signature: "+err.Error())
		}
	}
	var l List
	if err := strict(env.Blocklist, &l); err != nil {
		return nil, invalid("/blocklist", "blocklist: "+err.Error())
	}
	if l.Format != Format || l.Version != Version {
		return nil, invalid("/blocklist/version", fmt.Sprintf("blocklist: format %q version %d: only %q version %d is read", l.Format, l.Version, Format, Version))
	}
	if n := len(l.VDV) + len(l.UIC) + len(l.Devices); n > MaxEntries {
		return nil, apperr.E(op, apperr.Invalid, CodeBlocklistTooLarge, fmt.Sprintf("blocklist: %d entries, at most %d are accepted", n, MaxEntries))
	}
	if err := l.check(); err != nil {
		return nil, err
	}
	return &l, nil
}

// strict decodes one JSON value with no unknown field and nothing after it.
func strict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the document")
	}
	return nil
}

func invalid(field, msg string) error {
	return apperr.Validation("blocklist.Parse", CodeInvalidBlocklist, field, msg)
}

// check validates every field of l.
func (l *List) check() error {
	if l.Issuer == "" || utf8.RuneCountInString(l.Issuer) > MaxIssuer || !utf8.ValidString(l.Issuer) {
		return invalid("/blocklist/issuer", "blocklist: issuer: 1 to "+strconv.Itoa(MaxIssuer)+" characters")
	}
	if l.Since < 0 || l.LastSeq < l.Since {
		return invalid("/blocklist/last_seq", "blocklist: since and last_seq: 0 ≤ since ≤ last_seq")
	}
	for i, e := range l.VDV {
		at := func(f string) string { return "/blocklist/vdv/" + strconv.Itoa(i) + "/" + f }
		switch {
		case e.Org < 1 || e.Org > 65535:
			return invalid(at("org"), fmt.Sprintf("blocklist: vdv[%d].org: an organisation id 1..65535", i))
		case e.Number == 0:
			return invalid(at("number"), fmt.Sprintf("blocklist: vdv[%d].number: a Berechtigungsnummer 1..4294967295", i))
		case e.Target != TargetTicket && e.Target != TargetMedium:
			return invalid(at("target"), fmt.Sprintf("blocklist: vdv[%d].target: %q or %q", i, TargetTicket, TargetMedium))
		case e.Lock != LockReject:
			return invalid(at("lock"), fmt.Sprintf("blocklist: vdv[%d].lock: %q", i, LockReject))
		}
		if err := common(at, fmt.Sprintf("vdv[%d]", i), e.Seq, e.Reason, e.ValidUntil); err != nil {
			return err
		}
	}
	for i, e := range l.UIC {
		at := func(f string) string { return "/blocklist/uic/" + strconv.Itoa(i) + "/" + f }
		switch {
		case e.RICS < 1 || e.RICS > 9999:
			return invalid(at("rics"), fmt.Sprintf("blocklist: uic[%d].rics: a RICS company code 1..9999", i))
		case !printable(e.TicketNumber, MaxTicketNum) || e.TicketNumber == "":
			return invalid(at("ticket_number"), fmt.Sprintf("blocklist: uic[%d].ticket_number: 1 to %d printable ASCII characters", i, MaxTicketNum))
		case !printable(e.Reference, MaxReference):
			return invalid(at("reference"), fmt.Sprintf("blocklist: uic[%d].reference: at most %d printable ASCII characters", i, MaxReference))
		}
		if err := common(at, fmt.Sprintf("uic[%d]", i), e.Seq, e.Reason, e.ValidUntil); err != nil {
			return err
		}
	}
	return l.checkDevices()
}

// checkDevices validates the devices entries.
func (l *List) checkDevices() error {
	for i, e := range l.Devices {
		at := func(f string) string { return "/blocklist/devices/" + strconv.Itoa(i) + "/" + f }
		d, err := base64.RawURLEncoding.DecodeString(e.DeviceKeySHA256)
		switch {
		case e.TicketID == "" || !printable(e.TicketID, MaxReference):
			return invalid(at("ticket_id"), fmt.Sprintf("blocklist: devices[%d].ticket_id: 1 to %d printable ASCII characters", i, MaxReference))
		case err != nil || len(d) != sha256.Size:
			return invalid(at("device_key_sha256"), fmt.Sprintf("blocklist: devices[%d].device_key_sha256: base64url of 32 bytes", i))
		}
		if _, err := time.Parse(time.RFC3339, e.MovedAt); err != nil {
			return invalid(at("moved_at"), fmt.Sprintf("blocklist: devices[%d].moved_at: an RFC 3339 time", i))
		}
		if err := common(at, fmt.Sprintf("devices[%d]", i), e.Seq, e.Reason, e.ValidUntil); err != nil {
			return err
		}
	}
	return nil
}

// common checks the fields every entry has.
func common(at func(string) string, name string, seq int64, reason, validUntil string) error {
	if seq < 0 {
		return invalid(at("seq"), "blocklist: "+name+".seq: 0 or more")
	}
	if reason == "" || utf8.RuneCountInString(reason) > MaxReason || !utf8.ValidString(reason) || strings.ContainsFunc(reason, isControl) {
		return invalid(at("reason"), "blocklist: "+name+".reason: 1 to "+strconv.Itoa(MaxReason)+" characters, no control characters")
	}
	if _, err := time.Parse(time.RFC3339, validUntil); err != nil {
		return invalid(at("valid_until"), "blocklist: "+name+".valid_until: an RFC 3339 time")
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// printable: at most n characters of printable ASCII.
func printable(s string, n int) bool {
	if len(s) > n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// ValidUntil is e's end (Parse checked the form).
func ValidUntil(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return t.UTC()
}
