package barcode

import (
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/apperr"
)

// Version is the payload format version this package writes for every
// ticket whose texts fit 255 bytes each; VersionLongText is written only
// when a text is longer (a passenger name of up to 100 characters may take
// 400 bytes of UTF-8), so ordinary payloads keep version 1's bytes.
const (
	Version         = 1
	VersionLongText = 2
)

// MaxTextBytes is the longest product name or passenger name a payload
// carries (version 2): the catalog's 100-character name fields at 4 bytes
// per character. Activation refuses longer names (app), so nothing is cut.
const MaxTextBytes = 400

// Payload layout, version 1 (all integers big-endian):
//
//	offset size  field
//	0      2     magic "FB"
//	2      1     version (1)
//	3      2     key id (uint16)
//	5      1     flags: bit 0 = test environment; other bits must be 0
//	6      4     valid from, Unix seconds (uint32)
//	10     4     valid until, Unix seconds (uint32)
//	14     4     birth date: year (uint16), month, day; all zero when absent
//	18     ...   ticket id (compact id, see below)
//	...    ...   product id (compact id)
//	...    1+n   product name (length byte + UTF-8)
//	...    1+n   passenger first name
//	...    1+n   passenger last name
//	...    2+k   only with flag bit 1 (dynamic): window seconds (1..255),
//	             key length k (0 = not bound yet, or 65), the device's
//	             ECDSA P-256 public key (uncompressed point 04‖X‖Y)
//	end-64 64    Ed25519 signature over signContext + all preceding bytes
//
// Flag bit 1 marks a ticket of a product with inspection_profile dynamic
// (docs/barcodes.md, "Dynamic barcodes"): such a payload is valid only
// inside a dynamic barcode (package barcode/dynamic) that carries a fresh
// signature of the device key over the current time window. Readers
// before issue 32 reject the flag as malformed, so a dynamic ticket never
// passes an inspector that cannot check its window.
//
// Version 2 is the same except that version byte and the three texts
// (product name, first and last name), whose lengths are uint16 (2+n); it is
// written only when one of them is longer than 255 bytes, and a version 2
// payload whose texts all fit 255 bytes is rejected as non-canonical.
//
// A compact id is either tag 0 followed by a length-prefixed string, or tag 1
// for ids shaped "<prefix>-<kind>-<uuid>": length-prefixed prefix,
// length-prefixed kind and the 16 UUID bytes.
const (
	magic0, magic1 = 'F', 'B'
	headerLen      = 18
	sigLen         = ed25519.SignatureSize
	flagTest       = 0x01
	flagDynamic    = 0x02
	// DeviceKeyLen is the length of a bound device key: an uncompressed
	// P-256 point, as WebCrypto exports it ("raw").
	DeviceKeyLen = 65
	maxText      = 255
	// MaxPayloadLen bounds any valid payload (four 255-byte id parts and
	// three texts of MaxTextBytes).
	MaxPayloadLen = headerLen + 2*(1+1+maxText+1+maxText+16) + 3*(2+MaxTextBytes) + 2 + DeviceKeyLen + sigLen
)

// signContext separates these signatures from any other use of the key.
const signContext = "farebox inspection barcode\x00"

// Environment values carried in a payload.
const (
	EnvLive = "live"
	EnvTest = "test"
)

// Claims is the content of an inspection payload.
type Claims struct {
	Version     int       // payload format version
	KeyID       uint16    // id of the key that signed (or will sign) the payload
	TicketID    string    // e.g. "farebox-ticket-<uuid>"
	ProductID   string    // e.g. "farebox-product-<uuid>"
	ProductName string    // product.local_ticket_name
	ValidFrom   time.Time // UTC, whole seconds
	ValidUntil  time.Time // UTC, whole seconds
	FirstName   string
	LastName    string
	BirthDate   string // "YYYY-MM-DD" or "" when the medium has none
	Environment string // EnvLive or EnvTest
	// Dynamic marks a ticket whose barcode must carry a device signature
	// over the current time window (flag bit 1); WindowSeconds is that
	// window's length and DeviceKey the bound device's public key (nil
	// while unbound).
	Dynamic       bool
	WindowSeconds int
	DeviceKey     []byte
}

// Test reports whether the claims belong to a test-environment ticket.
func (c Claims) Test() bool { return c.Environment == EnvTest }

var errMalformed = errors.New("malformed inspection payload")

func invalid(op, msg string) error {
	return apperr.E(op, apperr.Invalid, CodeInvalidBarcodeClaims, msg)
}

// encodeBody writes everything but the signature. KeyID is taken from kid.
func encodeBody(c Claims, kid uint16) ([]byte, error) {
	const op = "barcode.Sign"
	var flags byte
	switch c.Environment {
	case EnvLive:
	case EnvTest:
		flags |= flagTest
	default:
		return nil, invalid(op, fmt.Sprintf("environment must be %q or %q", EnvLive, EnvTest))
	}
	if c.Dynamic {
		flags |= flagDynamic
		if c.WindowSeconds < 1 || c.WindowSeconds > 255 {
			return nil, invalid(op, "window seconds must be 1..255")
		}
		if len(c.DeviceKey) != 0 && (len(c.DeviceKey) != DeviceKeyLen || c.DeviceKey[0] != 4) {
			return nil, invalid(op, "device key must be an uncompressed P-256 point (65 bytes)")
		}
	} else if c.WindowSeconds != 0 || len(c.DeviceKey) != 0 {
		return nil, invalid(op, "window and device key belong to dynamic tickets only")
	}
	from, err := unix32(c.ValidFrom)
	if err != nil {
		return nil, invalid(op, "valid_from: "+err.Error())
	}
	until, err := unix32(c.ValidUntil)
	if err != nil {
		return nil, invalid(op, "valid_until: "+err.Error())
	}
	if until < from {
		return nil, invalid(op, "valid_until is before valid_from")
	}
	y, m, d, err := parseBirthDate(c.BirthDate)
	if err != nil {
		return nil, invalid(op, "birth_date: "+err.Error())
	}
	texts := []struct{ name, v string }{{"product name", c.ProductName}, {"first name", c.FirstName}, {"last name", c.LastName}}
	version, width := byte(Version), 1
	for _, f := range texts {
		if len(f.v) > MaxTextBytes {
			return nil, invalid(op, fmt.Sprintf("%s: longer than %d bytes", f.name, MaxTextBytes))
		}
		if len(f.v) > maxText {
			version, width = VersionLongText, 2
		}
	}
	b := make([]byte, 0, 160)
	b = append(b, magic0, magic1, version)
	b = binary.BigEndian.AppendUint16(b, kid)
	b = append(b, flags)
	b = binary.BigEndian.AppendUint32(b, from)
	b = binary.BigEndian.AppendUint32(b, until)
	b = binary.BigEndian.AppendUint16(b, y)
	b = append(b, m, d)
	if c.TicketID == "" {
		return nil, invalid(op, "ticket id is empty")
	}
	for _, f := range []struct{ name, v string }{{"ticket id", c.TicketID}, {"product id", c.ProductID}} {
		if b, err = appendID(b, f.v); err != nil {
			return nil, invalid(op, f.name+": "+err.Error())
		}
	}
	for _, f := range texts {
		if !utf8.ValidString(f.v) {
			return nil, invalid(op, f.name+": not UTF-8")
		}
		if width == 2 {
			b = binary.BigEndian.AppendUint16(b, uint16(len(f.v)))
		} else {
			b = append(b, byte(len(f.v)))
		}
		b = append(b, f.v...)
	}
	if c.Dynamic {
		b = append(b, byte(c.WindowSeconds), byte(len(c.DeviceKey)))
		b = append(b, c.DeviceKey...)
	}
	return b, nil
}

func unix32(t time.Time) (uint32, error) {
	s := t.Unix()
	if t.IsZero() || s < 0 || s > math.MaxUint32 {
		return 0, errors.New("out of range (1970..2106)")
	}
	return uint32(s), nil
}

func parseBirthDate(s string) (y uint16, m, d byte, err error) {
	if s == "" {
		return 0, 0, 0, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Year() < 1 || t.Year() > 9999 {
		return 0, 0, 0, errors.New("not a date YYYY-MM-DD")
	}
	return uint16(t.Year()), byte(t.Month()), byte(t.Day()), nil
}

func appendString(b []byte, s string) ([]byte, error) {
	if len(s) > maxText {
		return nil, fmt.Errorf("longer than %d bytes", maxText)
	}
	if !utf8.ValidString(s) {
		return nil, errors.New("not UTF-8")
	}
	b = append(b, byte(len(s)))
	return append(b, s...), nil
}

// appendID writes a compact id: the uuid form when s ends in "-<kind>-<uuid>".
func appendID(b []byte, s string) ([]byte, error) {
	if prefix, kind, u, ok := splitID(s); ok {
		b = append(b, 1)
		b, _ = appendString(b, prefix)
		b, _ = appendString(b, kind)
		return append(b, u[:]...), nil
	}
	b = append(b, 0)
	return appendString(b, s)
}

// splitID splits "<prefix>-<kind>-<lower-case uuid>"; prefix and kind are
// non-empty and kind has no '-'.
func splitID(s string) (prefix, kind string, u [16]byte, ok bool) {
	if len(s) < 36+4 || s[len(s)-37] != '-' {
		return "", "", u, false
	}
	us := s[len(s)-36:]
	if !canonicalUUID(us) {
		return "", "", u, false
	}
	hx := strings.ReplaceAll(us, "-", "")
	if _, err := hex.Decode(u[:], []byte(hx)); err != nil {
		return "", "", u, false
	}
	rest := s[:len(s)-37]
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 || i == len(rest)-1 || len(rest) > maxText || !utf8.ValidString(rest) {
		return "", "", u, false
	}
	return rest[:i], rest[i+1:], u, true
}

func canonicalUUID(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return len(s) == 36
}

func formatUUID(u []byte) string {
	h := hex.EncodeToString(u)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Parse decodes a payload without checking its signature. It rejects
// anything that Sign could not have produced (unknown version or flags,
// trailing bytes, impossible dates, invalid UTF-8).
func Parse(p []byte) (Claims, error) {
	c, _, err := parse(p)
	return c, err
}

// parse returns the claims and the length of the signed body.
func parse(p []byte) (Claims, int, error) {
	var c Claims
	if len(p) < headerLen+sigLen || len(p) > MaxPayloadLen || p[0] != magic0 || p[1] != magic1 {
		return c, 0, errMalformed
	}
	if p[2] != Version && p[2] != VersionLongText {
		return c, 0, fmt.Errorf("unsupported inspection payload version %d", p[2])
	}
	c.Version = int(p[2])
	c.KeyID = binary.BigEndian.Uint16(p[3:5])
	flags := p[5]
	if flags&^(flagTest|flagDynamic) != 0 {
		return c, 0, errMalformed
	}
	c.Dynamic = flags&flagDynamic != 0
	c.Environment = EnvLive
	if flags&flagTest != 0 {
		c.Environment = EnvTest
	}
	c.ValidFrom = time.Unix(int64(binary.BigEndian.Uint32(p[6:10])), 0).UTC()
	c.ValidUntil = time.Unix(int64(binary.BigEndian.Uint32(p[10:14])), 0).UTC()
	if c.ValidUntil.Before(c.ValidFrom) {
		return c, 0, errMalformed
	}
	y, m, d := binary.BigEndian.Uint16(p[14:16]), p[16], p[17]
	if y != 0 || m != 0 || d != 0 {
		c.BirthDate = fmt.Sprintf("%04d-%02d-%02d", y, m, d)
		if _, _, _, err := parseBirthDate(c.BirthDate); err != nil || y == 0 {
			return c, 0, errMalformed
		}
		if t, _ := time.Parse(time.DateOnly, c.BirthDate); t.Month() != time.Month(m) || t.Day() != int(d) {
			return c, 0, errMalformed
		}
	}
	r := reader{b: p[:len(p)-sigLen], off: headerLen}
	c.TicketID = r.id()
	c.ProductID = r.id()
	width := 1
	if c.Version == VersionLongText {
		width = 2
	}
	c.ProductName = r.text(width)
	c.FirstName = r.text(width)
	c.LastName = r.text(width)
	if c.Dynamic {
		c.WindowSeconds = int(r.byte())
		n := int(r.byte())
		key := r.take(n)
		if r.bad || c.WindowSeconds == 0 || (n != 0 && (n != DeviceKeyLen || key[0] != 4)) {
			r.bad = true
		} else if n != 0 {
			c.DeviceKey = append([]byte(nil), key...)
		}
	}
	long := max(len(c.ProductName), len(c.FirstName), len(c.LastName))
	if r.bad || r.off != len(r.b) || c.TicketID == "" || long > MaxTextBytes || (width == 2) != (long > maxText) {
		return Claims{}, 0, errMalformed
	}
	return c, r.off, nil
}

type reader struct {
	b   []byte
	off int
	bad bool
}

func (r *reader) take(n int) []byte {
	if r.bad || n > len(r.b)-r.off {
		r.bad = true
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) str() string { return r.text(1) }

// byte reads one byte (0 past the end, marking r bad).
func (r *reader) byte() byte {
	b := r.take(1)
	if b == nil {
		return 0
	}
	return b[0]
}

// text reads a string with a length of width bytes (1 or 2).
func (r *reader) text(width int) string {
	l := r.take(width)
	if l == nil {
		return ""
	}
	n := int(l[0])
	if width == 2 {
		n = int(binary.BigEndian.Uint16(l))
	}
	s := r.take(n)
	if !utf8.Valid(s) {
		r.bad = true
	}
	return string(s)
}

func (r *reader) id() string {
	tag := r.take(1)
	if tag == nil {
		return ""
	}
	switch tag[0] {
	case 0:
		s := r.str()
		// Sign writes tag 1 for this shape, so tag 0 with it is not canonical.
		if _, _, _, ok := splitID(s); ok {
			r.bad = true
		}
		return s
	case 1:
		prefix, kind := r.str(), r.str()
		u := r.take(16)
		if r.bad || prefix == "" || kind == "" || strings.IndexByte(kind, '-') >= 0 {
			r.bad = true
			return ""
		}
		return prefix + "-" + kind + "-" + formatUUID(u)
	}
	r.bad = true
	return ""
}
