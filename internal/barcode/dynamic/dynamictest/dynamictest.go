// Package dynamictest builds dynamic barcodes as the device does (the
// rendering engine, in JavaScript: docs/barcodes.md "Dynamic barcodes"),
// for the tests of what verifies them (dynamic.Inspect, farebox inspect,
// the API's device binding). The service itself never builds one.
package dynamictest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/dynamic"
)

// Body is the part of a dynamic barcode before the signature, for static
// payload p in window w; the device signs dynamic.SignContext ‖ Body.
func Body(p []byte, w uint32) ([]byte, error) {
	if len(p) > barcode.MaxPayloadLen {
		return nil, errors.New("dynamic: payload too long")
	}
	b := append([]byte(barcode.DynamicMagic), dynamic.Version)
	b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
	b = append(b, p...)
	return binary.BigEndian.AppendUint32(b, w), nil
}

// Build is the dynamic barcode of payload p in window w signed with key
// (what the rendering engine does in JavaScript on the device; the tests
// build one in Go).
func Build(p []byte, w uint32, key *ecdsa.PrivateKey) ([]byte, error) {
	body, err := Body(p, w)
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(append([]byte(dynamic.SignContext), body...))
	r, s, err := ecdsa.Sign(nil, key, h[:])
	if err != nil {
		return nil, err
	}
	sig := make([]byte, dynamic.SigLen)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return append(body, sig...), nil
}

// WindowAt is the index of the window of length seconds that contains t.
func WindowAt(t time.Time, seconds int) uint32 {
	if seconds <= 0 || t.Unix() < 0 {
		return 0
	}
	return uint32(t.Unix() / int64(seconds))
}

// Device is a phone's device key as the engine makes one: the P-256 key
// that signs each window's code, and its public point (uncompressed), which
// the ticket's payload carries (barcode.Claims.DeviceKey).
type Device struct {
	Key   *ecdsa.PrivateKey
	Point []byte
}

// NewDevice makes a device key, failing t if it cannot.
func NewDevice(t testing.TB) Device {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := k.PublicKey.ECDH()
	if err != nil {
		t.Fatal(err)
	}
	return Device{Key: k, Point: pub.Bytes()}
}

// Text is the public point as the engine sends it to bind the ticket
// (unpadded base64url).
func (d Device) Text() string { return base64.RawURLEncoding.EncodeToString(d.Point) }

// Code is the device's dynamic barcode of static payload p at instant at,
// in windows of seconds (Build of the window WindowAt), failing t if it
// cannot be built.
func (d Device) Code(t testing.TB, p []byte, at time.Time, seconds int) []byte {
	t.Helper()
	b, err := Build(p, WindowAt(at, seconds), d.Key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
