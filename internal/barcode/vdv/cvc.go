package vdv

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	_ "crypto/sha1" // the VDV-KA signs with SHA-1
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/farebox/farebox/internal/clock"
)

var berlin = clock.Berlin

// CV certificate tags (card-verifiable certificates, the VDV-KA PKI).
const (
	TagCertificate        = 0x7F21
	TagCertSignature      = 0x5F37
	TagCertRemainder      = 0x5F38
	TagCertContent        = 0x5F4E // an unsigned (trusted, e.g. root) certificate body
	TagCAReference        = 0x42
	TagTicketSignature    = 0x9E
	TagTicketRemainder    = 0x9A
	TagProductData        = 0x85
	TagProductTransaction = 0x8A
)

// Hash is the VDV-KA's hash for ISO 9796-2 signatures.
const Hash = crypto.SHA1

// Ref is a certification authority reference (CAR) or the significant
// part of a certificate holder reference (CHR): region (2 letters), name
// (3 letters), service indicator and discretionary data (one nibble each),
// algorithm reference, year.
type Ref [8]byte

// MakeRef builds a Ref; region and name are 2 and 3 ASCII letters.
func MakeRef(region, name string, service, discretionary, algorithm, year byte) Ref {
	var r Ref
	copy(r[0:2], region)
	copy(r[2:5], name)
	r[5] = discretionary<<4 | service&0x0F
	r[6], r[7] = algorithm, year
	return r
}

func (r Ref) String() string {
	return fmt.Sprintf("%s %s %X/%X alg %d year %02X", printable(r[0:2]), printable(r[2:5]), r[5]&0x0F, r[5]>>4, r[6], r[7])
}

func printable(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7E {
			c = '.'
		}
		out[i] = c
	}
	return string(out)
}

// Profiles: certificate profile identifier → modulus size (bits).
var profileBits = map[byte]int{3: 1536, 4: 1024, 7: 1984}

// oidISO9796SHA1 is the key's algorithm identifier farebox writes:
// 1.3.36.3.4.2.2.1 (TeleTrusT: ISO 9796-2 signature with RSA and SHA-1).
// A reader takes 9 bytes when the OID starts with 0x2A, else 7.
var oidISO9796SHA1 = []byte{0x2B, 0x24, 0x03, 0x04, 0x02, 0x02, 0x01}

// Cert is the content of a CV certificate: profile, issuer reference
// (CAR), holder reference (CHR), holder authorisation (CHA), expiry
// date (CXD) and the RSA public key.
type Cert struct {
	Profile byte
	CAR     Ref
	CHR     Ref     // the holder; the body stores it after four zero bytes
	CHA     [7]byte // holder authorisation: 6 ASCII letters and a role byte
	Expires time.Time
	OID     []byte
	Key     *rsa.PublicKey
}

// SelfSigned reports whether the certificate names itself as its issuer
// (a root).
func (c Cert) SelfSigned() bool { return c.CAR == c.CHR }

// Body is the certificate's signed content.
func (c Cert) Body() ([]byte, error) {
	bits, ok := profileBits[c.Profile]
	if !ok || c.Key == nil || c.Key.N.BitLen() != bits {
		return nil, fmt.Errorf("certificate profile %d does not match the key", c.Profile)
	}
	if c.Key.E <= 0 || int64(c.Key.E) > 0xFFFFFFFF {
		return nil, errors.New("certificate exponent does not fit 4 bytes")
	}
	b := make([]byte, 0, 1+8+12+7+4+len(c.OID)+bits/8+4)
	b = append(b, c.Profile)
	b = append(b, c.CAR[:]...)
	b = append(b, 0, 0, 0, 0)
	b = append(b, c.CHR[:]...)
	b = append(b, c.CHA[:]...)
	b = appendBCDDate(b, c.Expires)
	oid := c.OID
	if oid == nil {
		oid = oidISO9796SHA1
	}
	b = append(b, oid...)
	b = append(b, c.Key.N.FillBytes(make([]byte, bits/8))...)
	e := uint32(c.Key.E)
	return append(b, byte(e>>24), byte(e>>16), byte(e>>8), byte(e)), nil
}

// ParseCertBody reads a certificate body (recovered or unsigned).
func ParseCertBody(b []byte) (Cert, error) {
	const head = 1 + 8 + 12 + 7 + 4
	if len(b) < head+7 {
		return Cert{}, fmt.Errorf("certificate body of %d bytes is too short", len(b))
	}
	var c Cert
	c.Profile = b[0]
	bits, ok := profileBits[c.Profile]
	if !ok {
		return Cert{}, fmt.Errorf("unknown certificate profile identifier %d", c.Profile)
	}
	copy(c.CAR[:], b[1:9])
	if !bytes.Equal(b[9:13], []byte{0, 0, 0, 0}) {
		return Cert{}, errors.New("certificate holder reference does not start with four zero bytes")
	}
	copy(c.CHR[:], b[13:21])
	copy(c.CHA[:], b[21:28])
	exp, err := bcdDate(b[28:32])
	if err != nil {
		return Cert{}, fmt.Errorf("certificate expiry: %w", err)
	}
	c.Expires = exp
	oidLen := 7
	if b[head] == 0x2A {
		oidLen = 9
	}
	rest := b[head:]
	if len(rest) != oidLen+bits/8+4 {
		return Cert{}, fmt.Errorf("certificate body: %d bytes after the header, want %d for profile %d", len(rest), oidLen+bits/8+4, c.Profile)
	}
	c.OID = append([]byte(nil), rest[:oidLen]...)
	n := new(big.Int).SetBytes(rest[oidLen : oidLen+bits/8])
	if n.BitLen() != bits {
		return Cert{}, fmt.Errorf("certificate modulus is not %d bits", bits)
	}
	e := new(big.Int).SetBytes(rest[oidLen+bits/8:])
	if e.Cmp(big.NewInt(3)) < 0 || e.Bit(0) == 0 || e.BitLen() > 31 {
		return Cert{}, errors.New("certificate exponent is not an odd number from 3 to 2^31")
	}
	c.Key = &rsa.PublicKey{N: n, E: int(e.Int64())}
	return c, nil
}

// SignCert returns the CV certificate 7F21 { 5F37 signature, 5F38
// remainder } of c signed by the issuer's key (ISO 9796-2, SHA-1).
func SignCert(c Cert, issuer *rsa.PrivateKey) ([]byte, error) {
	body, err := c.Body()
	if err != nil {
		return nil, err
	}
	sig, rem, err := Sign9796(issuer, Hash, body)
	if err != nil {
		return nil, err
	}
	inner := AppendTLV(nil, TagCertSignature, sig)
	if len(rem) > 0 {
		inner = AppendTLV(inner, TagCertRemainder, rem)
	}
	return AppendTLV(nil, TagCertificate, inner), nil
}

// UnsignedCert returns 7F21 { 5F4E body }: how a trusted root is stored
// and configured (it is trusted by being configured, not by a signature).
func UnsignedCert(c Cert) ([]byte, error) {
	body, err := c.Body()
	if err != nil {
		return nil, err
	}
	return AppendTLV(nil, TagCertificate, AppendTLV(nil, TagCertContent, body)), nil
}

// ReadCert reads one 7F21 object from the front of b. A signed certificate
// is recovered with issuer's key; an unsigned one (5F4E) is returned as is
// with signed = false.
func ReadCert(b []byte, issuer *rsa.PublicKey) (c Cert, signed bool, rest []byte, err error) {
	v, rest, err := ReadTagged(b, TagCertificate)
	if err != nil {
		return Cert{}, false, nil, err
	}
	parts, err := ParseTLVs(v)
	if err != nil {
		return Cert{}, false, nil, err
	}
	if body, ok := Find(parts, TagCertContent); ok {
		c, err := ParseCertBody(body)
		return c, false, rest, err
	}
	sig, ok := Find(parts, TagCertSignature)
	if !ok {
		return Cert{}, false, nil, errors.New("CV certificate has neither a signature (5F37) nor a body (5F4E)")
	}
	if issuer == nil {
		return Cert{}, true, rest, errors.New("CV certificate: no key of its issuer")
	}
	remainder, _ := Find(parts, TagCertRemainder)
	body, err := Recover9796(issuer, Hash, sig, remainder)
	if err != nil {
		return Cert{}, true, nil, fmt.Errorf("CV certificate: %w", err)
	}
	c, err = ParseCertBody(body)
	return c, true, rest, err
}

// Expired reports whether the certificate's last day (inclusive, in
// Berlin) lies before t.
func (c Cert) Expired(t time.Time) bool {
	y, m, d := t.In(berlin).Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return today.After(c.Expires)
}

func appendBCDDate(b []byte, t time.Time) []byte {
	y, m, d := t.Date()
	return append(b, bcd(y/100), bcd(y%100), bcd(int(m)), bcd(d))
}

func bcd(v int) byte { return byte(v/10<<4 | v%10) }

func unbcd(b byte) (int, bool) {
	hi, lo := int(b>>4), int(b&0x0F)
	return hi*10 + lo, hi < 10 && lo < 10
}

func bcdDate(b []byte) (time.Time, error) {
	var v [4]int
	for i := range v {
		x, ok := unbcd(b[i])
		if !ok {
			return time.Time{}, fmt.Errorf("% X is not a BCD date", b[:4])
		}
		v[i] = x
	}
	y, m, d := v[0]*100+v[1], v[2], v[3]
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if m < 1 || m > 12 || d < 1 || t.Day() != d {
		return time.Time{}, fmt.Errorf("%04d-%02d-%02d is not a date", y, m, d)
	}
	return t, nil
}
