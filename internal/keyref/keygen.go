//go:build cgo

package keyref

import (
	"crypto"
	"crypto/dsa"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"math/big"

	"github.com/miekg/pkcs11"
)

var (
	oidEd25519 = []byte{0x06, 0x03, 0x2b, 0x65, 0x70}
	oidP256    = []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}
)

// labels are the attributes naming a new key pair: the URI's object and id.
func labels(u URI) []*pkcs11.Attribute {
	var a []*pkcs11.Attribute
	if u.Object != "" {
		a = append(a, pkcs11.NewAttribute(pkcs11.CKA_LABEL, u.Object))
	}
	if len(u.ID) > 0 {
		a = append(a, pkcs11.NewAttribute(pkcs11.CKA_ID, u.ID))
	}
	return a
}

// privateAttrs keep a key in the token: sensitive, never extractable.
func privateAttrs(u URI) []*pkcs11.Attribute {
	return append(labels(u),
		pkcs11.NewAttribute(pkcs11.CKA_TOKEN, true), pkcs11.NewAttribute(pkcs11.CKA_PRIVATE, true),
		pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, true), pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, false),
		pkcs11.NewAttribute(pkcs11.CKA_SIGN, true))
}

func publicAttrs(u URI) []*pkcs11.Attribute {
	return append(labels(u), pkcs11.NewAttribute(pkcs11.CKA_TOKEN, true), pkcs11.NewAttribute(pkcs11.CKA_VERIFY, true))
}

// refuseExisting fails when the token already holds a private key of u:
// a ceremony never makes two keys of one name.
func (t *token) refuseExisting(sh pkcs11.SessionHandle, u URI) error {
	objs, err := t.find(sh, pkcs11.CKO_PRIVATE_KEY, u)
	if err == nil && len(objs) > 0 {
		err = fmt.Errorf("token %q already holds a private key %s", t.name, u.keyName())
	}
	return err
}

// Generate makes a key pair of kind inside the token ref names (the
// private half sensitive and not extractable) and opens it. Kinds:
// ed25519, ec-p256, rsa-1024, rsa-2048, rsa-3072, dsa-1024 (160-bit q),
// dsa-2048 (224-bit q; the domain parameters are made outside the token,
// they are public).
func Generate(ref, kind string) (crypto.Signer, error) {
	return makeKey(ref, func(u URI) error { return generate(u, kind) })
}

// makeKey parses ref, makes its key in the token with make and opens it.
func makeKey(ref string, make func(URI) error) (crypto.Signer, error) {
	u, err := ParseURI(ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(ref), err)
	}
	if err := make(u); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return Token(ref)
}

func generate(u URI, kind string) error {
	var mech uint
	pub := publicAttrs(u)
	switch kind {
	case "ed25519":
		mech = ckmECEdwardsKeyPairGen
		pub = append(pub, pkcs11.NewAttribute(pkcs11.CKA_EC_PARAMS, oidEd25519))
	case "ec-p256":
		mech = pkcs11.CKM_EC_KEY_PAIR_GEN
		pub = append(pub, pkcs11.NewAttribute(pkcs11.CKA_EC_PARAMS, oidP256))
	case "rsa-1024", "rsa-2048", "rsa-3072":
		bits := map[string]int{"rsa-1024": 1024, "rsa-2048": 2048, "rsa-3072": 3072}[kind]
		mech = pkcs11.CKM_RSA_PKCS_KEY_PAIR_GEN
		pub = append(pub, pkcs11.NewAttribute(pkcs11.CKA_MODULUS_BITS, bits), pkcs11.NewAttribute(pkcs11.CKA_PUBLIC_EXPONENT, []byte{1, 0, 1}))
	case "dsa-1024", "dsa-2048":
		var p dsa.Parameters
		size := map[string]dsa.ParameterSizes{"dsa-1024": dsa.L1024N160, "dsa-2048": dsa.L2048N224}[kind]
		if err := dsa.GenerateParameters(&p, rand.Reader, size); err != nil {
			return err
		}
		mech = pkcs11.CKM_DSA_KEY_PAIR_GEN
		pub = append(pub, pkcs11.NewAttribute(pkcs11.CKA_PRIME, p.P.Bytes()), pkcs11.NewAttribute(pkcs11.CKA_SUBPRIME, p.Q.Bytes()),
			pkcs11.NewAttribute(pkcs11.CKA_BASE, p.G.Bytes()))
	default:
		return fmt.Errorf("unknown key kind %q: ed25519, ec-p256, rsa-1024, rsa-2048, rsa-3072, dsa-1024 or dsa-2048", kind)
	}
	return newKeyIn(u, func(t *token, sh pkcs11.SessionHandle) error {
		if _, _, err := t.ctx.GenerateKeyPair(sh, []*pkcs11.Mechanism{pkcs11.NewMechanism(mech, nil)}, pub, privateAttrs(u)); err != nil {
			return fmt.Errorf("token %q: C_GenerateKeyPair (%s): %w", t.name, kind, err)
		}
		return nil
	})
}

// newKeyIn runs create in a session of u's token once it holds no private
// key of u yet (refuseExisting).
func newKeyIn(u URI, create func(t *token, sh pkcs11.SessionHandle) error) error {
	t, err := findToken(u)
	if err != nil {
		return err
	}
	sh, err := t.get()
	if err != nil {
		return err
	}
	defer t.put(sh)
	if err := t.refuseExisting(sh, u); err != nil {
		return err
	}
	return create(t, sh)
}

// Import stores key (Ed25519, ECDSA P-256, RSA or DSA) in the token ref
// names, its private half sensitive and not extractable, with its public
// half beside it, and opens it: how a key that exists outside (an issuer
// key registered with the UIC, a VDV key with its certificate) moves into a
// token. Delete the file afterwards.
func Import(ref string, key any) (crypto.Signer, error) {
	return makeKey(ref, func(u URI) error { return importKey(u, key) })
}

func importKey(u URI, key any) error {
	priv, pub, err := importAttrs(key)
	if err != nil {
		return err
	}
	return newKeyIn(u, func(t *token, sh pkcs11.SessionHandle) error {
		if _, err := t.ctx.CreateObject(sh, append(privateAttrs(u), priv...)); err != nil {
			return fmt.Errorf("token %q: C_CreateObject (private key): %w", t.name, err)
		}
		if _, err := t.ctx.CreateObject(sh, append(publicAttrs(u), pub...)); err != nil {
			return fmt.Errorf("token %q: C_CreateObject (public key): %w", t.name, err)
		}
		return nil
	})
}

func attr(t uint, v any) *pkcs11.Attribute { return pkcs11.NewAttribute(t, v) }

// importAttrs are the class, type and value attributes of key's private
// and public objects.
func importAttrs(key any) (priv, pub []*pkcs11.Attribute, err error) {
	cls := func(c, kt uint) []*pkcs11.Attribute {
		return []*pkcs11.Attribute{attr(pkcs11.CKA_CLASS, c), attr(pkcs11.CKA_KEY_TYPE, kt)}
	}
	octets := func(p []byte) []byte { return append([]byte{0x04, byte(len(p))}, p...) }
	switch k := key.(type) {
	case ed25519.PrivateKey:
		priv = append(cls(pkcs11.CKO_PRIVATE_KEY, ckkECEdwards), attr(pkcs11.CKA_EC_PARAMS, oidEd25519), attr(pkcs11.CKA_VALUE, k.Seed()))
		pub = append(cls(pkcs11.CKO_PUBLIC_KEY, ckkECEdwards), attr(pkcs11.CKA_EC_PARAMS, oidEd25519),
			attr(pkcs11.CKA_EC_POINT, octets(k.Public().(ed25519.PublicKey))))
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, nil, errors.New("only P-256 EC keys are imported")
		}
		point, err := k.PublicKey.Bytes()
		if err != nil {
			return nil, nil, err
		}
		d, err := k.Bytes()
		if err != nil {
			return nil, nil, err
		}
		priv = append(cls(pkcs11.CKO_PRIVATE_KEY, pkcs11.CKK_EC), attr(pkcs11.CKA_EC_PARAMS, oidP256), attr(pkcs11.CKA_VALUE, d))
		pub = append(cls(pkcs11.CKO_PUBLIC_KEY, pkcs11.CKK_EC), attr(pkcs11.CKA_EC_PARAMS, oidP256), attr(pkcs11.CKA_EC_POINT, octets(point)))
	case *rsa.PrivateKey:
		if len(k.Primes) != 2 {
			return nil, nil, errors.New("only two-prime RSA keys are imported")
		}
		k.Precompute()
		e := big.NewInt(int64(k.E)).Bytes()
		priv = append(cls(pkcs11.CKO_PRIVATE_KEY, pkcs11.CKK_RSA), attr(pkcs11.CKA_MODULUS, k.N.Bytes()), attr(pkcs11.CKA_PUBLIC_EXPONENT, e),
			attr(pkcs11.CKA_PRIVATE_EXPONENT, k.D.Bytes()), attr(pkcs11.CKA_PRIME_1, k.Primes[0].Bytes()), attr(pkcs11.CKA_PRIME_2, k.Primes[1].Bytes()),
			attr(pkcs11.CKA_EXPONENT_1, k.Precomputed.Dp.Bytes()), attr(pkcs11.CKA_EXPONENT_2, k.Precomputed.Dq.Bytes()),
			attr(pkcs11.CKA_COEFFICIENT, k.Precomputed.Qinv.Bytes()))
		pub = append(cls(pkcs11.CKO_PUBLIC_KEY, pkcs11.CKK_RSA), attr(pkcs11.CKA_MODULUS, k.N.Bytes()), attr(pkcs11.CKA_PUBLIC_EXPONENT, e))
	case *dsa.PrivateKey:
		params := []*pkcs11.Attribute{attr(pkcs11.CKA_PRIME, k.P.Bytes()), attr(pkcs11.CKA_SUBPRIME, k.Q.Bytes()), attr(pkcs11.CKA_BASE, k.G.Bytes())}
		priv = append(append(cls(pkcs11.CKO_PRIVATE_KEY, pkcs11.CKK_DSA), params...), attr(pkcs11.CKA_VALUE, k.X.Bytes()))
		pub = append(append(cls(pkcs11.CKO_PUBLIC_KEY, pkcs11.CKK_DSA), params...), attr(pkcs11.CKA_VALUE, k.Y.Bytes()))
	default:
		return nil, nil, fmt.Errorf("a %T cannot be imported", key)
	}
	return priv, pub, nil
}

// Delete destroys the private and public key objects ref names (revoking
// a key for good: no signature can be made with it again). It reports how
// many objects it destroyed.
func Delete(ref string) (int, error) {
	u, err := ParseURI(ref)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", redact(ref), err)
	}
	t, err := findToken(u)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", u, err)
	}
	sh, err := t.get()
	if err != nil {
		return 0, err
	}
	defer t.put(sh)
	n := 0
	for _, class := range []uint{pkcs11.CKO_PRIVATE_KEY, pkcs11.CKO_PUBLIC_KEY} {
		objs, err := t.find(sh, class, u)
		if err != nil {
			return n, fmt.Errorf("%s: %w", u, err)
		}
		for _, o := range objs {
			if err := t.ctx.DestroyObject(sh, o); err != nil {
				return n, fmt.Errorf("%s: C_DestroyObject: %w", u, err)
			}
			n++
		}
	}
	return n, nil
}
