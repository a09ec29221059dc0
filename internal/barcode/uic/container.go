package uic

import (
	"bytes"
	"compress/zlib"
	"crypto"
	"crypto/dsa" //nolint:staticcheck // UIC 918.3 static barcodes are DSA-signed by definition
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // version 01 containers are DSA/SHA-1 by definition
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"sync"
)

// Container layout (UIC 918.3 / ERA TAP TSI B.12 static barcode), all
// numbers as ASCII digits:
//
//	"#UT"  3   message type
//	"01"   2   version: 01 = DSA-1024/SHA-1, 50-byte signature field;
//	           02 = DSA-2048 (q 224 bits)/SHA-224, 64-byte signature field
//	RICS   4   company code of the signing company
//	key id 5   the signing key's id, registered with the UIC
//	sig    50|64 DER SEQUENCE{r, s}, padded with zero bytes
//	len    4   length of the compressed data
//	data   len zlib-compressed records
//
// The signature covers the compressed data. A record is a 6-character
// tag ("U_HEAD", "U_FLEX"), a 2-digit record version, a 4-digit length of
// the whole record (header included) and the content.
const (
	magic        = "#UT"
	recordHeader = 12
	// MaxCompressed bounds the data an accepted container may inflate to.
	MaxInflated = 1 << 16
)

// SigFieldLen is the size of the signature field per container version.
func SigFieldLen(version int) int {
	if version == 1 {
		return 50
	}
	return 64
}

// Record is one data record of a container.
type Record struct {
	Tag     string // 6 characters
	Version int    // 0..99
	Data    []byte
}

// Container is a parsed 918.3 barcode.
type Container struct {
	Version   int // 1 or 2
	RICS      int // signer's company code
	KeyID     int // signer's key id
	Signature []byte
	Signed    []byte // the compressed data the signature covers
	Records   []Record
}

// Record returns the first record with tag.
func (c Container) Record(tag string) (Record, bool) {
	for _, r := range c.Records {
		if r.Tag == tag {
			return r, true
		}
	}
	return Record{}, false
}

// Hash returns the digest the signature of a container version is made over.
func Hash(version int, data []byte) []byte {
	if version == 1 {
		h := sha1.Sum(data) //nolint:gosec // mandated by container version 01
		return h[:]
	}
	h := sha256.Sum224(data)
	return h[:]
}

type dsaSig struct{ R, S *big.Int }

// zlibWriters reuses compressors: a new one allocates ~800 KB of state,
// the bulk of a barcode's cost.
var zlibWriters = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestCompression)
	return zw
}}

// Build signs records with key and lays out the container.
func Build(version, rics, keyID int, key *dsa.PrivateKey, records []Record) ([]byte, error) {
	return build(version, rics, keyID, key.Q, func(d []byte) (r, s *big.Int, err error) { return signDeterministic(key, d) }, records)
}

// BuildWith is Build with a DSA key held elsewhere (a hardware token's,
// keyref): signer signs the digest and returns the ASN.1 signature; q is
// its public q. The token draws the nonce, so the same records get a
// different (equally valid) signature each time.
func BuildWith(version, rics, keyID int, signer crypto.Signer, records []Record) ([]byte, error) {
	pub, ok := signer.Public().(*dsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the UIC key is %T, not DSA", signer.Public())
	}
	return build(version, rics, keyID, pub.Q, func(d []byte) (r, s *big.Int, err error) {
		der, err := signer.Sign(nil, d, nil)
		if err != nil {
			return nil, nil, err
		}
		var sig dsaSig
		if rest, err := asn1.Unmarshal(der, &sig); err != nil || len(rest) != 0 {
			return nil, nil, errors.New("the token's DSA signature is not DER")
		}
		if !dsa.Verify(pub, d, sig.R, sig.S) {
			return nil, nil, errors.New("the token's DSA signature does not verify with its public key")
		}
		return sig.R, sig.S, nil
	}, records)
}

func build(version, rics, keyID int, q *big.Int, sign func(digest []byte) (r, s *big.Int, err error), records []Record) ([]byte, error) {
	if version != 1 && version != 2 {
		return nil, fmt.Errorf("container version %d: only 01 and 02 exist", version)
	}
	if rics < 0 || rics > 9999 || keyID < 0 || keyID > 99999 {
		return nil, errors.New("company code must have 4 digits and key id 5")
	}
	if n := q.BitLen(); (version == 1 && n != 160) || (version == 2 && n != 224) {
		return nil, fmt.Errorf("container version %02d needs a DSA key with a %d-bit q, this one has %d", version,
			map[int]int{1: 160, 2: 224}[version], n)
	}
	var raw bytes.Buffer
	for _, r := range records {
		n := recordHeader + len(r.Data)
		if len(r.Tag) != 6 || r.Version < 0 || r.Version > 99 || n > 9999 {
			return nil, fmt.Errorf("record %q: tag of 6 characters, version 0..99, at most 9999 bytes", r.Tag)
		}
		fmt.Fprintf(&raw, "%s%02d%04d", r.Tag, r.Version, n)
		raw.Write(r.Data)
	}
	var z bytes.Buffer
	zw := zlibWriters.Get().(*zlib.Writer)
	zw.Reset(&z)
	zw.Write(raw.Bytes())
	zw.Close()
	zlibWriters.Put(zw)
	if z.Len() > 9999 {
		return nil, errors.New("compressed records exceed 9999 bytes")
	}
	r, s, err := sign(Hash(version, z.Bytes()))
	if err != nil {
		return nil, err
	}
	sig, err := asn1.Marshal(dsaSig{r, s})
	if err != nil {
		return nil, err
	}
	if len(sig) > SigFieldLen(version) {
		return nil, fmt.Errorf("signature of %d bytes does not fit the %d-byte field", len(sig), SigFieldLen(version))
	}
	out := make([]byte, 0, 80+z.Len())
	out = fmt.Appendf(out, "%s%02d%04d%05d", magic, version, rics, keyID)
	out = append(out, sig...)
	out = append(out, make([]byte, SigFieldLen(version)-len(sig))...)
	out = fmt.Appendf(out, "%04d", z.Len())
	return append(out, z.Bytes()...), nil
}

// signDeterministic is DSA with a nonce derived from the private key and
// the digest (k = HMAC-SHA512(x, digest || counter) mod q, in the spirit of
// RFC 6979 and Ed25519): the same ticket always gets the same barcode (the
// rendering caches and ETags stay stable) and no signature depends on the
// quality of a random source. crypto/dsa.Sign cannot be used for this: it
// consumes its random reader nondeterministically.
func signDeterministic(key *dsa.PrivateKey, digest []byte) (r, s *big.Int, err error) {
	q := key.Q
	if q.Sign() <= 0 || key.P.Sign() <= 0 || key.G.Sign() <= 0 || key.X.Sign() <= 0 {
		return nil, nil, errors.New("invalid DSA key")
	}
	n := (q.BitLen() + 7) / 8
	if len(digest) > n {
		digest = digest[:n]
	}
	z := new(big.Int).SetBytes(digest)
	for counter := byte(0); counter < 255; counter++ {
		mac := hmac.New(sha512.New, key.X.Bytes())
		mac.Write(digest)
		mac.Write([]byte{counter})
		k := new(big.Int).SetBytes(mac.Sum(nil))
		k.Mod(k, q)
		if k.Sign() == 0 {
			continue
		}
		r = new(big.Int).Exp(key.G, k, key.P)
		r.Mod(r, q)
		if r.Sign() == 0 {
			continue
		}
		kInv := new(big.Int).ModInverse(k, q)
		s = new(big.Int).Mul(key.X, r)
		s.Add(s, z)
		s.Mod(s, q)
		s.Mul(s, kInv)
		s.Mod(s, q)
		if s.Sign() != 0 {
			return r, s, nil
		}
	}
	return nil, nil, errors.New("DSA signing failed")
}

// IsContainer reports whether b starts like a 918.3 container.
func IsContainer(b []byte) bool { return bytes.HasPrefix(b, []byte(magic)) }

func digits(b []byte) (int, bool) {
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(string(b))
	return n, err == nil
}

// Parse splits a container without checking its signature (Verify does).
func Parse(b []byte) (Container, error) {
	var c Container
	if len(b) < 14 || !IsContainer(b) {
		return c, errors.New("not a UIC 918.3 container (no #UT header)")
	}
	v, ok := digits(b[3:5])
	if !ok || (v != 1 && v != 2) {
		return c, fmt.Errorf("container version %q is not 01 or 02", b[3:5])
	}
	c.Version = v
	sl := SigFieldLen(v)
	if len(b) < 14+sl+4 {
		return c, errors.New("container ends inside its header")
	}
	if c.RICS, ok = digits(b[5:9]); !ok {
		return c, errors.New("company code is not 4 digits")
	}
	if c.KeyID, ok = digits(b[9:14]); !ok {
		return c, errors.New("key id is not 5 digits")
	}
	c.Signature = b[14 : 14+sl]
	n, ok := digits(b[14+sl : 18+sl])
	if !ok || len(b) != 18+sl+n {
		return c, errors.New("compressed length does not match the data")
	}
	c.Signed = b[18+sl:]
	zr, err := zlib.NewReader(bytes.NewReader(c.Signed))
	if err != nil {
		return c, fmt.Errorf("records are not zlib data: %v", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, MaxInflated+1))
	if err != nil || len(raw) > MaxInflated {
		return c, errors.New("records do not inflate (corrupt, or larger than 64 KiB)")
	}
	for len(raw) > 0 {
		if len(raw) < recordHeader {
			return c, errors.New("truncated record header")
		}
		rv, ok1 := digits(raw[6:8])
		rl, ok2 := digits(raw[8:12])
		if !ok1 || !ok2 || rl < recordHeader || rl > len(raw) {
			return c, fmt.Errorf("record %q has a bad version or length", raw[:6])
		}
		c.Records = append(c.Records, Record{Tag: string(raw[:6]), Version: rv, Data: raw[recordHeader:rl]})
		raw = raw[rl:]
	}
	return c, nil
}

// ErrSignature: the signature does not verify with the named key.
var ErrSignature = errors.New("signature does not verify")

// VerifySignature checks c's signature with pub. The field holds a DER
// SEQUENCE{r, s} followed by zero padding; some issuers write r||s as
// two fixed halves instead, which is accepted too.
func (c Container) VerifySignature(pub *dsa.PublicKey) error {
	var sig dsaSig
	rest, err := asn1.Unmarshal(c.Signature, &sig)
	if err != nil || len(bytes.Trim(rest, "\x00")) != 0 {
		half := len(c.Signature) / 2
		sig = dsaSig{new(big.Int).SetBytes(c.Signature[:half]), new(big.Int).SetBytes(c.Signature[half:])}
	}
	if sig.R == nil || sig.S == nil || sig.R.Sign() <= 0 || sig.S.Sign() <= 0 {
		return ErrSignature
	}
	if !dsa.Verify(pub, Hash(c.Version, c.Signed), sig.R, sig.S) {
		return ErrSignature
	}
	return nil
}
