// Package pemkey reads a private key given as PEM, as the key files of the
// wallet and barcode issuers come: PKCS#8 ("PRIVATE KEY"), PKCS#1 ("RSA
// PRIVATE KEY") or SEC 1 ("EC PRIVATE KEY"), and writes a generated key
// file once (WriteNew).
package pemkey

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// WriteNew writes a new key file (PEM bytes) at path, mode 0600, making its
// directory (0700), unless a file is there already: then it writes nothing
// and reports false. The file is written beside path and linked into
// place, so that a process starting at the same time on the same directory
// reads either no file or the complete one of whichever link won.
func WriteNew(path string, data []byte) (bool, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err := errors.Join(err, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
		return false, err
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
}
