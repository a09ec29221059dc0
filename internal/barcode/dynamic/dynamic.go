// Package dynamic is the dynamic barcode of device-bound tickets (issue
// 32, docs/barcodes.md "Dynamic barcodes"): farebox's signed payload of a
// ticket whose product has inspection_profile dynamic, bound to the public
// key of one device, followed by that device's ECDSA P-256 signature over
// the current time window. The rendering engine builds it in the device
// (WebCrypto) every window; Inspect verifies it for `farebox inspect` and
// any other Go inspection client (the inspector app's server side), with a
// configurable clock tolerance, and says in words why a copy fails.
//
// Layout, version 1 (integers big-endian):
//
//	offset size  field
//	0      2     magic "FD" (barcode.DynamicMagic)
//	2      1     version (1)
//	3      2     length n of the static payload
//	5      n     the static payload (barcode payload with the dynamic flag,
//	             the window length and the device key, signed by farebox)
//	5+n    4     window index: floor(Unix seconds / window length)
//	9+n    64    ECDSA P-256 SHA-256 signature (r‖s, as WebCrypto signs) by
//	             the device key over SignContext ‖ bytes 0 … 9+n
//
// The device signs the whole static payload with the window, so a window
// signature cannot be moved onto another ticket, and a screenshot is good
// for one window (plus the tolerance).
package dynamic

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock"
)

// Format constants.
const (
	Version = 1
	// SignContext separates the device's window signatures from any other
	// use of its key.
	SignContext = "farebox device window\x00"
	// SigLen is the length of a P-256 signature as r‖s.
	SigLen    = 64
	headerLen = 5
	// MaxLen bounds a dynamic barcode.
	MaxLen = headerLen + barcode.MaxPayloadLen + 4 + SigLen
)

// DefaultWindow is the time window of dynamic tickets (the payload carries
// the configured one); DefaultTolerance is the clock difference between
// the traveller's phone and the inspector's device that Inspect accepts
// on each side of a window.
const (
	DefaultWindow    = 30 * time.Second
	DefaultTolerance = 30 * time.Second
)

// Barcode is a parsed dynamic barcode.
type Barcode struct {
	Static []byte // the farebox-signed payload
	Window uint32 // window index
	Sig    []byte // the device's signature (SigLen bytes)
	signed []byte // SignContext ‖ everything before Sig
}

// ErrUnreadable wraps every reason Parse refuses its input.
var ErrUnreadable = errors.New("cannot read the dynamic barcode")

func unreadable(why string) error { return fmt.Errorf("%w: %s", ErrUnreadable, why) }

// Parse splits a dynamic barcode; it checks the layout, not the signatures.
func Parse(b []byte) (Barcode, error) {
	if len(b) > MaxLen {
		return Barcode{}, unreadable("too long")
	}
	if len(b) < headerLen || string(b[:2]) != barcode.DynamicMagic {
		return Barcode{}, unreadable("not a dynamic barcode")
	}
	if b[2] != Version {
		return Barcode{}, unreadable(fmt.Sprintf("unknown version %d", b[2]))
	}
	n := int(binary.BigEndian.Uint16(b[3:5]))
	if len(b) != headerLen+n+4+SigLen {
		return Barcode{}, unreadable("truncated or trailing bytes")
	}
	body := b[:headerLen+n+4]
	return Barcode{
		Static: append([]byte(nil), b[headerLen:headerLen+n]...),
		Window: binary.BigEndian.Uint32(b[headerLen+n:]),
		Sig:    append([]byte(nil), b[headerLen+n+4:]...),
		signed: append([]byte(SignContext), body...),
	}, nil
}

// Options configure Inspect.
type Options struct {
	// Tolerance is the clock difference accepted on each side of the
	// window (DefaultTolerance when zero; negative: none).
	Tolerance time.Duration
}

// Inspect verifies a dynamic barcode at now: the static payload with kr
// (barcode.Inspect), then the device signature with the key the payload
// binds, then the window against now ± the tolerance. A genuine ticket
// whose code is not the live one of its device gets Report.Copied, a
// reason starting "copied: "; unreadable input a not-genuine report whose
// reason starts "cannot read". It never panics on any input.
func Inspect(data []byte, kr *barcode.Keyring, now time.Time, o Options) barcode.Report {
	bc, err := Parse(data)
	if err != nil {
		return barcode.Report{Reason: err.Error(), State: barcode.StateNotGenuine, At: now}
	}
	rep, ok := inspectStatic(bc.Static, kr, now, "dynamic", func(secs int64) int64 { return int64(bc.Window) * secs })
	if !ok {
		return rep
	}
	c := rep.Claims
	rep.Copied = copied(bc, c, rep.Window, now, o.tolerance())
	return rep
}

// inspectStatic verifies the farebox payload inside a moving code of
// kind ("dynamic", "rotating") and sets the report's window, which starts
// at start(window seconds) Unix seconds; ok is false when the report is
// final (not genuine, or a static ticket inside: forged).
func inspectStatic(static []byte, kr *barcode.Keyring, now time.Time, kind string, start func(secs int64) int64) (barcode.Report, bool) {
	rep := barcode.Inspect(static, kr, now)
	if !rep.Genuine {
		return rep, false
	}
	if !rep.Claims.Dynamic {
		return barcode.Report{Reason: "a static ticket inside a " + kind + " code (forged)", State: barcode.StateNotGenuine, At: now, KeyID: rep.Claims.KeyID}, false
	}
	secs := int64(rep.Claims.WindowSeconds)
	from := time.Unix(start(secs), 0).UTC()
	rep.Window = barcode.Window{Start: from, End: from.Add(time.Duration(secs) * time.Second)}
	return rep, true
}

func (o Options) tolerance() time.Duration {
	switch {
	case o.Tolerance == 0:
		return DefaultTolerance
	case o.Tolerance < 0:
		return 0
	}
	return o.Tolerance
}

// copied is why the window signature fails, "" when it is the live code.
func copied(bc Barcode, c barcode.Claims, w barcode.Window, now time.Time, tol time.Duration) string {
	if len(c.DeviceKey) == 0 {
		return "copied: the ticket is not bound to a phone yet, so no code of it counts"
	}
	if !verify(c.DeviceKey, bc.signed, bc.Sig) {
		return "copied: the moving code was not signed by the phone this ticket is bound to (another phone, or a code taken from another ticket)"
	}
	return stale(w, now, tol)
}

// stale is why window w is not current at now ± tol, "" when it is.
func stale(w barcode.Window, now time.Time, tol time.Duration) string {
	span := fmt.Sprintf("%s–%s", w.Start.In(clock.Berlin).Format("15:04:05"), w.End.In(clock.Berlin).Format("15:04:05 MST"))
	if now.Before(w.Start.Add(-tol)) {
		return fmt.Sprintf("copied: the code is for %s, %s ahead of this device's clock (prepared in advance, or the phone's clock is wrong)",
			span, w.Start.Sub(now).Round(time.Second))
	}
	if !now.Before(w.End.Add(tol)) {
		return fmt.Sprintf("copied: the code is from %s, %s ago; a live ticket shows the current one (screenshot or recording)",
			span, now.Sub(w.End).Round(time.Second))
	}
	return ""
}

// verify checks an r‖s P-256 signature over SHA-256(msg) by the
// uncompressed point key.
func verify(key, msg, sig []byte) bool {
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), key)
	if err != nil || len(sig) != SigLen {
		return false
	}
	h := sha256.Sum256(msg)
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	return ecdsa.Verify(pub, h[:], r, s)
}
