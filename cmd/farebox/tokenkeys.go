package main

import (
	"crypto"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/farebox/farebox/internal/barcode/uic"
	"github.com/farebox/farebox/internal/keyref"
	"github.com/farebox/farebox/internal/pemkey"
)

// tokenKeyCommands are the `farebox keys` commands that work on one key
// in a hardware token and need no database.
var tokenKeyCommands = map[string]bool{"generate": true, "import": true, "public": true, "destroy": true}

// tokenKeysCmd is `farebox keys generate|import|public|destroy --key URI`
// (docs/operations.md, "Keys in a hardware token"): it prints the key's
// public half as PEM (destroy: what it destroyed).
func tokenKeysCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("farebox keys "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	key := fs.String("key", "", "the pkcs11: URI of the key: token=, object= (and/or id=), ?module-path=, pin-source= or pin-value=")
	kind := fs.String("type", "", "generate: ed25519, ec-p256, rsa-1024, rsa-2048, rsa-3072, dsa-1024 or dsa-2048")
	file := fs.String("file", "", "import: the PEM private key (PKCS#8, PKCS#1, SEC 1, OpenSSL DSA)")
	fs.Usage = func() { fmt.Fprint(stderr, keysUsage); fs.PrintDefaults() }
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 0 || !keyref.IsToken(*key) || (args[0] == "generate") != (*kind != "") || (args[0] == "import") != (*file != "") {
		fs.Usage()
		return errUsage
	}
	var s crypto.Signer
	switch args[0] {
	case "generate":
		s, err = keyref.Generate(*key, *kind)
	case "import":
		s, err = importKeyFile(*key, *file)
	case "public":
		s, err = keyref.Open(*key)
	case "destroy":
		n, err := keyref.Delete(*key)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%s: no such key in the token", keyref.Display(*key))
		}
		fmt.Fprintf(stdout, "destroyed %d objects of %s\n", n, keyref.Display(*key))
		return nil
	}
	if err != nil {
		return err
	}
	p, err := keyref.PublicPEM(s)
	if err != nil {
		return err
	}
	_, err = stdout.Write(p)
	return err
}

// importKeyFile moves the PEM private key of file into the token.
func importKeyFile(ref, file string) (crypto.Signer, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	k, err := pemkey.Parse(b, pemkey.PKCS8, pemkey.PKCS1, pemkey.SEC1)
	if err != nil {
		dk, _, derr := uic.ParseKeyPEM(b)
		if derr != nil {
			return nil, fmt.Errorf("%s: %w", file, errors.Join(err, derr))
		}
		k = dk
	}
	return keyref.Import(ref, k)
}
