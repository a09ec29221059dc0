//go:build cgo

package keyref

import (
	"crypto"
	"crypto/ed25519"
	"fmt"
	"sort"
	"strings"

	"github.com/miekg/pkcs11"
)

// Dir is a token seen as a directory of keys named by label, as farebox
// keeps the inspection keys there: a private key object is a signing key,
// a public key object alone a key that only verifies, a data object a
// small value (the instant a rotated key starts signing).
type Dir struct {
	u URI
	t *token
}

// OpenDir opens the token of ref (object and id, if any, are ignored) and
// logs in.
func OpenDir(ref string) (*Dir, error) {
	u, err := ParseTokenURI(ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(ref), err)
	}
	u.Object, u.ID = "", nil
	t, err := findToken(u)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return &Dir{u: u, t: t}, nil
}

// String is the token's URI without PIN.
func (d *Dir) String() string { return d.u.String() }

// Entries lists the labels starting with prefix: private keys, public
// keys and data objects (with their values), each sorted.
func (d *Dir) Entries(prefix string) (private, public []string, data map[string][]byte, err error) {
	sh, err := d.t.get()
	if err != nil {
		return nil, nil, nil, err
	}
	defer d.t.put(sh)
	data = map[string][]byte{}
	for _, class := range []uint{pkcs11.CKO_PRIVATE_KEY, pkcs11.CKO_PUBLIC_KEY, pkcs11.CKO_DATA} {
		objs, err := d.t.findAll(sh, class)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, o := range objs {
			a, err := d.t.attrs(sh, o, pkcs11.CKA_LABEL)
			if err != nil {
				return nil, nil, nil, err
			}
			label := string(a[0])
			if !strings.HasPrefix(label, prefix) {
				continue
			}
			switch class {
			case pkcs11.CKO_PRIVATE_KEY:
				private = append(private, label)
			case pkcs11.CKO_PUBLIC_KEY:
				public = append(public, label)
			default:
				v, err := d.t.attrs(sh, o, pkcs11.CKA_VALUE)
				if err != nil {
					return nil, nil, nil, err
				}
				data[label] = v[0]
			}
		}
	}
	sort.Strings(private)
	sort.Strings(public)
	return private, public, data, nil
}

// findAll returns every object of class (FindObjects in batches).
func (t *token) findAll(sh pkcs11.SessionHandle, class uint) ([]pkcs11.ObjectHandle, error) {
	if err := t.ctx.FindObjectsInit(sh, []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_CLASS, class)}); err != nil {
		return nil, fmt.Errorf("C_FindObjectsInit: %w", err)
	}
	defer t.ctx.FindObjectsFinal(sh)
	var all []pkcs11.ObjectHandle
	for {
		objs, _, err := t.ctx.FindObjects(sh, 64)
		if err != nil {
			return nil, fmt.Errorf("C_FindObjects: %w", err)
		}
		if len(objs) == 0 {
			return all, nil
		}
		all = append(all, objs...)
	}
}

func (d *Dir) key(label string) URI {
	u := d.u
	u.Object = label
	return u
}

// Signer opens the private key label.
func (d *Dir) Signer(label string) (crypto.Signer, error) {
	s, err := openToken(d.key(label))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.key(label), err)
	}
	return s, nil
}

// Ed25519Public reads the public key object label (a key that only
// verifies).
func (d *Dir) Ed25519Public(label string) (ed25519.PublicKey, error) {
	sh, err := d.t.get()
	if err != nil {
		return nil, err
	}
	defer d.t.put(sh)
	objs, err := d.t.find(sh, pkcs11.CKO_PUBLIC_KEY, d.key(label))
	if err != nil || len(objs) != 1 {
		return nil, fmt.Errorf("%s: no unique public key (%v)", d.key(label), err)
	}
	a, err := d.t.attrs(sh, objs[0], pkcs11.CKA_EC_POINT)
	if err != nil {
		return nil, err
	}
	p := ecPoint(a[0])
	if len(p) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%s: not an Ed25519 public key", d.key(label))
	}
	return ed25519.PublicKey(p), nil
}

// Generate makes a key pair of kind labelled label (Generate).
func (d *Dir) Generate(label, kind string) (crypto.Signer, error) {
	if err := generate(d.key(label), kind); err != nil {
		return nil, fmt.Errorf("%s: %w", d.key(label), err)
	}
	return d.Signer(label)
}

// PutData stores a data object label with value (private: read only
// after login), replacing an existing one.
func (d *Dir) PutData(label string, value []byte) error {
	if _, err := d.Delete(label); err != nil {
		return err
	}
	sh, err := d.t.get()
	if err != nil {
		return err
	}
	defer d.t.put(sh)
	_, err = d.t.ctx.CreateObject(sh, []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_DATA),
		pkcs11.NewAttribute(pkcs11.CKA_TOKEN, true), pkcs11.NewAttribute(pkcs11.CKA_PRIVATE, true),
		pkcs11.NewAttribute(pkcs11.CKA_LABEL, label), pkcs11.NewAttribute(pkcs11.CKA_VALUE, value)})
	if err != nil {
		return fmt.Errorf("%s: C_CreateObject: %w", d.key(label), err)
	}
	return nil
}

// Delete destroys every object labelled label (private and public key,
// data) and reports how many.
func (d *Dir) Delete(label string) (int, error) {
	sh, err := d.t.get()
	if err != nil {
		return 0, err
	}
	defer d.t.put(sh)
	n := 0
	for _, class := range []uint{pkcs11.CKO_PRIVATE_KEY, pkcs11.CKO_PUBLIC_KEY, pkcs11.CKO_DATA} {
		for {
			objs, err := d.t.find(sh, class, d.key(label))
			if err != nil {
				return n, err
			}
			if len(objs) == 0 {
				break
			}
			for _, o := range objs {
				if err := d.t.ctx.DestroyObject(sh, o); err != nil {
					return n, fmt.Errorf("%s: C_DestroyObject: %w", d.key(label), err)
				}
				n++
			}
		}
	}
	return n, nil
}
