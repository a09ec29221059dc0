//go:build !cgo

package keyref

import (
	"crypto"
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
