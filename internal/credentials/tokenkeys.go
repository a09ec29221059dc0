package credentials

import (
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/keyref"
)

// Inspection keys in a hardware token: --inspection-keys is a `pkcs11:`
// URI of the token (no object), and the token is the key store. Each key
// is a key pair labelled "inspection-<kid>" (the file name without .key);
// a public key object alone only verifies; a data object labelled
// "inspection-<kid>.from" holds the instant a rotated key starts signing.
// Rotation generates the new key inside the token; removal destroys its
// objects.

const tokenPrefix = "inspection-"

// tokenKeys reads the inspection keys of the token: the held keys, the
// .from instants (as LoadKeysAt takes them) and every key's file name (as
// nextKeyID takes them).
func tokenKeys(d *keyref.Dir) (held []barcode.Key, from, names map[string][]byte, err error) {
	priv, pub, from, err := d.Entries(tokenPrefix)
	if err != nil {
		return nil, nil, nil, err
	}
	names = map[string][]byte{}
	signing := map[string]bool{}
	for _, label := range priv {
		id, ok := keyFileName(label + ".key")
		if !ok {
			continue
		}
		s, err := d.Signer(label)
		if err != nil {
			return nil, nil, nil, err
		}
		k, err := barcode.TokenKey(id, s)
		if err != nil {
			return nil, nil, nil, err
		}
		held, signing[label] = append(held, k), true
		names[label+".key"] = nil
	}
	for _, label := range pub {
		id, ok := keyFileName(label + ".pub")
		if !ok || signing[label] {
			continue
		}
		p, err := d.Ed25519Public(label)
		if err != nil {
			return nil, nil, nil, err
		}
		held = append(held, barcode.Key{ID: id, Public: p})
		names[label+".pub"] = nil
	}
	return held, from, names, nil
}

// loadTokenInspection is LoadInspection for a token; with create, a live
// and a test signing key are generated inside the token when missing.
func loadTokenInspection(ref string, now time.Time, create bool) (kr *barcode.Keyring, created bool, err error) {
	const op = "credentials.LoadInspection"
	d, err := keyref.OpenDir(ref)
	if err != nil {
		return nil, false, configErr(op, "--inspection-keys: "+err.Error())
	}
	for {
		held, from, names, err := tokenKeys(d)
		if err != nil {
			return nil, false, configErr(op, "--inspection-keys "+d.String()+": "+err.Error())
		}
		kr, err = barcode.LoadKeysAt(from, held, now)
		if err != nil && apperr.KindOf(err) != apperr.NotFound {
			return nil, false, err
		}
		var env string
		switch {
		case !create && err != nil:
			return nil, false, apperr.E(op, apperr.NotFound, CodeInspectionKeyNotFound, "the token "+d.String()+" holds no live inspection signing key")
		case err != nil:
			env = barcode.EnvLive
		case create && !hasTestSigner(kr):
			env = barcode.EnvTest
		default:
			return kr, created, nil
		}
		if _, err := d.Generate(tokenPrefix+strconv.Itoa(int(nextKeyID(names, env))), "ed25519"); err != nil {
			return nil, false, configErr(op, "--inspection-keys: "+err.Error())
		}
		created = true
	}
}

// rotateToken generates the next key of env inside the token; its
// instant (from) is stored before the key.
func rotateToken(ref, env string, from time.Time) (barcode.Key, error) {
	const op = "credentials.RotateInspection"
	d, err := keyref.OpenDir(ref)
	if err != nil {
		return barcode.Key{}, configErr(op, "--inspection-keys: "+err.Error())
	}
	_, _, names, err := tokenKeys(d)
	if err != nil {
		return barcode.Key{}, configErr(op, "--inspection-keys "+d.String()+": "+err.Error())
	}
	id := nextKeyID(names, env)
	if !from.IsZero() {
		if err := d.PutData(barcode.FromFileName(id), []byte(from.UTC().Format(time.RFC3339Nano))); err != nil {
			return barcode.Key{}, configErr(op, err.Error())
		}
	}
	s, err := d.Generate(tokenPrefix+strconv.Itoa(int(id)), "ed25519")
	if err != nil {
		return barcode.Key{}, configErr(op, err.Error())
	}
	return barcode.TokenKey(id, s)
}

// removeToken destroys key kid's objects in the token.
func removeToken(ref string, kid uint16) (bool, error) {
	const op = "credentials.RemoveInspectionKey"
	d, err := keyref.OpenDir(ref)
	if err != nil {
		return false, configErr(op, "--inspection-keys: "+err.Error())
	}
	n := 0
	for _, label := range []string{tokenPrefix + strconv.Itoa(int(kid)), barcode.FromFileName(kid)} {
		m, err := d.Delete(label)
		if err != nil {
			return n > 0, configErr(op, err.Error())
		}
		n += m
	}
	return n > 0, nil
}

// tokenKeys reports whether the inspection keys are kept in a token.
func (s Settings) tokenKeys() bool { return keyref.IsToken(strings.TrimSpace(s.InspectionKeys)) }
