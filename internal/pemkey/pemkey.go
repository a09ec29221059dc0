// Package pemkey reads a private key given as PEM, as the key files of the
// wallet and barcode issuers come: PKCS#8 ("PRIVATE KEY"), PKCS#1 ("RSA
// PRIVATE KEY") or SEC 1 ("EC PRIVATE KEY").
package pemkey

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
)

// The PEM block types Parse reads.
const (
	PKCS8 = "PRIVATE KEY"
	PKCS1 = "RSA PRIVATE KEY"
	SEC1  = "EC PRIVATE KEY"
)

// ErrNoPEM is the error of an input without a PEM block.
var ErrNoPEM = errors.New("no PEM block")

// UnsupportedError is a PEM block of a type the caller does not accept.
type UnsupportedError struct{ Type string }

func (e *UnsupportedError) Error() string { return fmt.Sprintf("unsupported PEM block %q", e.Type) }

// Parse reads the first PEM block of b as a private key when its type is
// one of types (PKCS8, PKCS1, SEC1); the key is what crypto/x509 returns
// for that encoding.
func Parse(b []byte, types ...string) (any, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, ErrNoPEM
	}
	if !slices.Contains(types, blk.Type) {
		return nil, &UnsupportedError{Type: blk.Type}
	}
	switch blk.Type {
	case PKCS8:
		return x509.ParsePKCS8PrivateKey(blk.Bytes)
	case PKCS1:
		return x509.ParsePKCS1PrivateKey(blk.Bytes)
	case SEC1:
		return x509.ParseECPrivateKey(blk.Bytes)
	}
	return nil, &UnsupportedError{Type: blk.Type}
}
