//go:build !cgo

package keyref

import (
	"crypto"
	"crypto/ed25519"
	"errors"
)

// errNoCgo is the start-up error of a `pkcs11:` key in a build without cgo.
var errNoCgo = errors.New("this farebox was built without cgo (CGO_ENABLED=0) and cannot load a PKCS#11 module: build it with cgo to use keys in a token")

func openToken(URI) (crypto.Signer, error) { return nil, errNoCgo }

// Generate needs cgo.
func Generate(string, string) (crypto.Signer, error) { return nil, errNoCgo }

// Import needs cgo.
func Import(string, any) (crypto.Signer, error) { return nil, errNoCgo }

// Delete needs cgo.
func Delete(string) (int, error) { return 0, errNoCgo }

// Dir is a token seen as a directory of keys; without cgo it cannot be
// opened.
type Dir struct{}

// OpenDir needs cgo.
func OpenDir(string) (*Dir, error) { return nil, errNoCgo }

// String is empty.
func (d *Dir) String() string { return "" }

// Entries needs cgo.
func (d *Dir) Entries(string) (private, public []string, data map[string][]byte, err error) {
	return nil, nil, nil, errNoCgo
}

// Signer needs cgo.
func (d *Dir) Signer(string) (crypto.Signer, error) { return nil, errNoCgo }

// Ed25519Public needs cgo.
func (d *Dir) Ed25519Public(string) (ed25519.PublicKey, error) { return nil, errNoCgo }

// Generate needs cgo.
func (d *Dir) Generate(string, string) (crypto.Signer, error) { return nil, errNoCgo }

// PutData needs cgo.
func (d *Dir) PutData(string, []byte) error { return errNoCgo }

// Delete needs cgo.
func (d *Dir) Delete(string) (int, error) { return 0, errNoCgo }
