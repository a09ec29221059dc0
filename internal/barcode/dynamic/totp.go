package dynamic

// Google Wallet's rotating barcode (docs/wallet.md "Rotating barcodes of
// dynamic tickets"): Google Wallet cannot hold a device key that signs, but
// it computes RFC 6238 TOTP values on the phone from a key the issuer puts
// into the pass. farebox derives that key per ticket from a service secret
// (TicketKey) that its inspection devices hold too, and the pass shows
//
//	"FR1." base64url(payload) "." {totp_timestamp_seconds} "." {totp_value_0}
//
// where payload is the ticket's farebox-signed dynamic payload. An offline
// inspector verifies the payload with farebox's public keys, recomputes the
// TOTP value of the time step the timestamp names with the ticket's key, and
// checks that step against its clock with the same tolerance as the
// device-signed code. A screenshot is good for one window plus the
// tolerance; a code with a made-up timestamp fails the TOTP.

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/barcode"
)

// TOTP parameters of the rotating barcode.
const (
	// TOTPDigits is the TOTP value length (TotpParameters.valueLength).
	TOTPDigits = 8
	// TOTPKeyLen is the per-ticket key length: 160 bits, RFC 4226's
	// recommendation for HMAC-SHA1.
	TOTPKeyLen = 20
	// TOTPContext separates the per-ticket TOTP keys from any other use of
	// the service secret.
	TOTPContext = "farebox wallet totp\x00"
	// MinSecretLen is the shortest service secret TicketKey accepts.
	MinSecretLen = 32
	// PatternTimestamp and PatternValue are Google's substitutions in
	// RotatingBarcode.valuePattern.
	PatternTimestamp = "{totp_timestamp_seconds}"
	PatternValue     = "{totp_value_0}"
	maxSecondsDigits = 10
)

// TOTP is the RFC 6238 value (HMAC-SHA1, as Google's TOTP_SHA1) of key at
// Unix time t for a time step of period seconds, digits long.
func TOTP(key []byte, t int64, period, digits int) string {
	if period <= 0 || t < 0 {
		return ""
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(t/int64(period)))
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	h := m.Sum(nil)
	off := h[len(h)-1] & 0x0f
	code := binary.BigEndian.Uint32(h[off:off+4]) & 0x7fffffff
	mod := uint32(1)
	for range digits {
		mod *= 10
	}
	return fmt.Sprintf("%0*d", digits, code%mod)
}

// TicketKey is the TOTP key of ticket id: HMAC-SHA256 of the service
// secret over TOTPContext ‖ id, cut to TOTPKeyLen bytes. The issuer puts it
// into the ticket's Google pass; inspection devices derive it from the
// secret and the ticket id the signed payload names.
func TicketKey(secret []byte, ticketID string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(TOTPContext))
	m.Write([]byte(ticketID))
	return m.Sum(nil)[:TOTPKeyLen]
}

// ValuePattern is the valuePattern of the rotating barcode of payload p.
func ValuePattern(p []byte) string {
	return barcode.RotatingPrefix + barcode.Text(p) + "." + PatternTimestamp + "." + PatternValue
}

// RotatingValue is what Google Wallet shows at t for payload p with the
// ticket's TOTP key (tests and tools; Google computes it on the phone).
func RotatingValue(p, key []byte, t time.Time, windowSeconds int) string {
	s := t.Unix()
	v := strings.Replace(ValuePattern(p), PatternTimestamp, strconv.FormatInt(s, 10), 1)
	return strings.Replace(v, PatternValue, TOTP(key, s, windowSeconds, TOTPDigits), 1)
}

// Rotating is a parsed rotating barcode text.
type Rotating struct {
	Static  []byte // the farebox-signed payload
	Seconds int64  // the Unix time Google generated the value at
	Value   string // the TOTP value
}

// ParseRotating splits a rotating barcode's text; it checks the layout,
// not the payload or the TOTP value.
func ParseRotating(b []byte) (Rotating, error) {
	if len(b) > len(barcode.RotatingPrefix)+4*barcode.MaxPayloadLen/3+3+maxSecondsDigits+TOTPDigits {
		return Rotating{}, unreadable("too long")
	}
	if !barcode.IsRotating(b) {
		return Rotating{}, unreadable("not a rotating barcode")
	}
	parts := strings.Split(string(b[len(barcode.RotatingPrefix):]), ".")
	if len(parts) != 3 {
		return Rotating{}, unreadable("a rotating barcode has three parts after FR1.")
	}
	p, err := barcode.FromText(parts[0])
	if err != nil {
		return Rotating{}, unreadable("the payload is not base64url")
	}
	if !digits(parts[1], 1, maxSecondsDigits) {
		return Rotating{}, unreadable("the timestamp is not Unix seconds")
	}
	if !digits(parts[2], TOTPDigits, TOTPDigits) {
		return Rotating{}, unreadable(fmt.Sprintf("the TOTP value is not %d digits", TOTPDigits))
	}
	secs, _ := strconv.ParseInt(parts[1], 10, 64)
	return Rotating{Static: p, Seconds: secs, Value: parts[2]}, nil
}

func digits(s string, minLen, maxLen int) bool {
	if len(s) < minLen || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// InspectRotating verifies a Google Wallet rotating barcode at now: the
// payload with kr, then the TOTP value with the ticket's key derived from
// secret, then the time step against now ± the tolerance (Options). A
// genuine ticket whose code is not the live one gets Report.Copied; without
// a secret the code cannot be checked and is refused the same way. It
// never panics on any input.
func InspectRotating(data []byte, kr *barcode.Keyring, secret []byte, now time.Time, o Options) barcode.Report {
	r, err := ParseRotating(data)
	if err != nil {
		return barcode.Report{Reason: err.Error(), State: barcode.StateNotGenuine, At: now}
	}
	rep, ok := inspectStatic(r.Static, kr, now, "rotating", func(secs int64) int64 { return r.Seconds / secs * secs })
	if !ok {
		return rep
	}
	c := rep.Claims
	switch want := TOTP(TicketKey(secret, c.TicketID), r.Seconds, c.WindowSeconds, TOTPDigits); {
	case len(secret) < MinSecretLen:
		rep.Copied = "copied: cannot check the wallet pass's rotating code: this device has no rotating-barcode secret (farebox inspect --rotating-secret)"
	case subtle.ConstantTimeCompare([]byte(want), []byte(r.Value)) != 1:
		rep.Copied = "copied: the rotating code was not made by this ticket's wallet pass (a made-up time, or a code taken from another ticket)"
	default:
		rep.Copied = stale(rep.Window, now, o.tolerance())
	}
	return rep
}
