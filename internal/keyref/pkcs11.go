//go:build cgo

package keyref

import (
	"crypto"
	"crypto/dsa"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sync"

	"github.com/miekg/pkcs11"
)

// PKCS#11 3.0 names miekg/pkcs11 v1.1.2 does not define.
const (
	ckkECEdwards           = 0x40
	ckmECEdwardsKeyPairGen = 0x1055
	ckmEdDSA               = 0x1057
)

// maxSessions bounds the sessions farebox keeps open per token: a PKCS#11
// session signs one thing at a time, so concurrent issuing takes several.
const maxSessions = 8

// modules holds each loaded module, initialized once per process
// (C_Initialize) and never finalized: its tokens' sessions live as long as
// the process.
var (
	modulesMu sync.Mutex
	modules   = map[string]*pkcs11.Ctx{}
	tokensMu  sync.Mutex
	tokens    = map[tokenKey]*token{}
)

type tokenKey struct{ module, label, serial string }

func module(path string) (*pkcs11.Ctx, error) {
	modulesMu.Lock()
	defer modulesMu.Unlock()
	if c, ok := modules[path]; ok {
		return c, nil
	}
	c := pkcs11.New(path)
	if c == nil {
		return nil, fmt.Errorf("cannot load the PKCS#11 module %s", path)
	}
	if err := c.Initialize(); err != nil && !isCKR(err, pkcs11.CKR_CRYPTOKI_ALREADY_INITIALIZED) {
		c.Destroy()
		return nil, fmt.Errorf("module %s: C_Initialize: %w", path, err)
	}
	modules[path] = c
	return c, nil
}

func isCKR(err error, code uint) bool {
	var e pkcs11.Error
	return errors.As(err, &e) && uint(e) == code
}

// token is one token of a module with a pool of logged-in sessions.
type token struct {
	ctx  *pkcs11.Ctx
	slot uint
	name string
	pin  string
	pool chan pkcs11.SessionHandle
	mu   sync.Mutex
	open int
}

// findToken returns the token of u (by label or serial), logged in with
// u's PIN. A token already opened by another key of this process is
// shared (PKCS#11 logs in a token for the whole process): another key of
// it must name the same PIN, a different one is refused, since the token
// would not check it again.
func findToken(u URI) (*token, error) {
	ctx, err := module(u.ModulePath)
	if err != nil {
		return nil, err
	}
	pin, err := u.userPIN()
	if err != nil {
		return nil, err
	}
	key := tokenKey{u.ModulePath, u.Token, u.Serial}
	tokensMu.Lock()
	defer tokensMu.Unlock()
	t, ok := tokens[key]
	if ok {
		if t.pin != pin {
			return nil, fmt.Errorf("token %q is already open in this process with another PIN: every key of a token must give the same PIN", t.name)
		}
		return t, nil
	}
	{
		slot, err := findSlot(ctx, u)
		if err != nil {
			return nil, err
		}
		t = &token{ctx: ctx, slot: slot, name: u.Token + u.Serial, pin: pin, pool: make(chan pkcs11.SessionHandle, maxSessions)}
	}
	sh, err := t.get()
	if err != nil {
		return nil, err
	}
	defer t.put(sh)
	if pin != "" {
		if err := ctx.Login(sh, pkcs11.CKU_USER, pin); err != nil && !isCKR(err, pkcs11.CKR_USER_ALREADY_LOGGED_IN) {
			return nil, loginError(t.name, err)
		}
	}
	tokens[key] = t
	return t, nil
}

func loginError(name string, err error) error {
	switch {
	case isCKR(err, pkcs11.CKR_PIN_INCORRECT):
		return fmt.Errorf("token %q refused the PIN (CKR_PIN_INCORRECT)", name)
	case isCKR(err, pkcs11.CKR_PIN_LOCKED):
		return fmt.Errorf("token %q is locked: too many wrong PINs (CKR_PIN_LOCKED); its security officer must unblock it", name)
	}
	return fmt.Errorf("token %q: C_Login: %w", name, err)
}

func findSlot(ctx *pkcs11.Ctx, u URI) (uint, error) {
	slots, err := ctx.GetSlotList(true)
	if err != nil {
		return 0, fmt.Errorf("C_GetSlotList: %w", err)
	}
	for _, s := range slots {
		ti, err := ctx.GetTokenInfo(s)
		if err != nil {
			continue
		}
		if (u.Token == "" || ti.Label == u.Token) && (u.Serial == "" || ti.SerialNumber == u.Serial) {
			return s, nil
		}
	}
	if u.Token != "" {
		return 0, fmt.Errorf("no token labelled %q in %s (%d tokens present)", u.Token, u.ModulePath, len(slots))
	}
	return 0, fmt.Errorf("no token with serial %q in %s (%d tokens present)", u.Serial, u.ModulePath, len(slots))
}

// get takes a session of the pool, opening one while fewer than
// maxSessions are open, else waiting for one.
func (t *token) get() (pkcs11.SessionHandle, error) {
	select {
	case sh := <-t.pool:
		return sh, nil
	default:
	}
	t.mu.Lock()
	if t.open < maxSessions {
		t.open++
		t.mu.Unlock()
		sh, err := t.ctx.OpenSession(t.slot, pkcs11.CKF_SERIAL_SESSION|pkcs11.CKF_RW_SESSION)
		if err != nil {
			t.mu.Lock()
			t.open--
			t.mu.Unlock()
			return 0, fmt.Errorf("token %q: C_OpenSession: %w", t.name, err)
		}
		return sh, nil
	}
	t.mu.Unlock()
	return <-t.pool, nil
}

func (t *token) put(sh pkcs11.SessionHandle) { t.pool <- sh }

// sign runs one C_SignInit/C_Sign on a pooled session.
func (t *token) sign(mech uint, param []byte, key pkcs11.ObjectHandle, data []byte) ([]byte, error) {
	sh, err := t.get()
	if err != nil {
		return nil, err
	}
	defer t.put(sh)
	if err := t.ctx.SignInit(sh, []*pkcs11.Mechanism{pkcs11.NewMechanism(mech, param)}, key); err != nil {
		return nil, fmt.Errorf("token %q: C_SignInit: %w", t.name, err)
	}
	sig, err := t.ctx.Sign(sh, data)
	if err != nil {
		return nil, fmt.Errorf("token %q: C_Sign: %w", t.name, err)
	}
	return sig, nil
}

// find returns the objects of class matching u's label and id.
func (t *token) find(sh pkcs11.SessionHandle, class uint, u URI) ([]pkcs11.ObjectHandle, error) {
	tmpl := []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_CLASS, class)}
	if u.Object != "" {
		tmpl = append(tmpl, pkcs11.NewAttribute(pkcs11.CKA_LABEL, u.Object))
	}
	if len(u.ID) > 0 {
		tmpl = append(tmpl, pkcs11.NewAttribute(pkcs11.CKA_ID, u.ID))
	}
	if err := t.ctx.FindObjectsInit(sh, tmpl); err != nil {
		return nil, fmt.Errorf("C_FindObjectsInit: %w", err)
	}
	objs, _, err := t.ctx.FindObjects(sh, 2)
	if ferr := t.ctx.FindObjectsFinal(sh); err == nil {
		err = ferr
	}
	return objs, err
}

func (t *token) attrs(sh pkcs11.SessionHandle, o pkcs11.ObjectHandle, types ...uint) ([][]byte, error) {
	tmpl := make([]*pkcs11.Attribute, len(types))
	for i, ty := range types {
		tmpl[i] = pkcs11.NewAttribute(ty, nil)
	}
	got, err := t.ctx.GetAttributeValue(sh, o, tmpl)
	if err != nil {
		return nil, fmt.Errorf("C_GetAttributeValue: %w", err)
	}
	out := make([][]byte, len(got))
	for i, a := range got {
		out[i] = a.Value
	}
	return out, nil
}

func openToken(u URI) (crypto.Signer, error) {
	t, err := findToken(u)
	if err != nil {
		return nil, err
	}
	sh, err := t.get()
	if err != nil {
		return nil, err
	}
	defer t.put(sh)
	privs, err := t.find(sh, pkcs11.CKO_PRIVATE_KEY, u)
	if err != nil {
		return nil, err
	}
	switch len(privs) {
	case 0:
		return nil, fmt.Errorf("token %q holds no private key %s (is the PIN given? private keys are found only after login)", t.name, u.keyName())
	case 2:
		return nil, fmt.Errorf("token %q holds more than one private key %s: give object= and id=", t.name, u.keyName())
	}
	priv := privs[0]
	kt, err := t.attrs(sh, priv, pkcs11.CKA_KEY_TYPE)
	if err != nil {
		return nil, err
	}
	pubs, err := t.find(sh, pkcs11.CKO_PUBLIC_KEY, u)
	if err != nil {
		return nil, err
	}
	pubObj := priv // RSA and DSA private keys carry their public parts too
	if len(pubs) == 1 {
		pubObj = pubs[0]
	}
	k := tokenKeyObj{t: t, h: priv}
	switch ulong(kt[0]) {
	case ckkECEdwards:
		return k.ed25519(sh, pubObj, len(pubs))
	case pkcs11.CKK_EC:
		return k.ecdsa(sh, pubObj, len(pubs))
	case pkcs11.CKK_RSA:
		return k.rsa(sh)
	case pkcs11.CKK_DSA:
		return k.dsa(sh, pubObj, len(pubs))
	}
	return nil, fmt.Errorf("key %s has type %#x: farebox signs with Ed25519, ECDSA, RSA and DSA keys", u.keyName(), ulong(kt[0]))
}

func (u URI) keyName() string {
	if u.Object != "" {
		return fmt.Sprintf("labelled %q", u.Object)
	}
	return fmt.Sprintf("with id %x", u.ID)
}

// ulong reads a CK_ULONG attribute (host byte order, as miekg/pkcs11
// hands it over).
func ulong(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

type tokenKeyObj struct {
	t *token
	h pkcs11.ObjectHandle
}

// ecPoint reads CKA_EC_POINT: a DER OCTET STRING (PKCS#11 2.40) or, from
// some tokens, the bare point.
func ecPoint(b []byte) []byte {
	var inner []byte
	if rest, err := asn1.Unmarshal(b, &inner); err == nil && len(rest) == 0 {
		return inner
	}
	return b
}

func needPublic(n int) error {
	if n != 1 {
		return errors.New("its public key object (same label/id) is missing or not unique: the public key cannot be read")
	}
	return nil
}

func (k tokenKeyObj) ed25519(sh pkcs11.SessionHandle, pub pkcs11.ObjectHandle, n int) (crypto.Signer, error) {
	if err := needPublic(n); err != nil {
		return nil, err
	}
	a, err := k.t.attrs(sh, pub, pkcs11.CKA_EC_POINT)
	if err != nil {
		return nil, err
	}
	p := ecPoint(a[0])
	if len(p) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("an Edwards key of %d bytes: farebox signs with Ed25519 only", len(p))
	}
	return edKey{k, ed25519.PublicKey(p)}, nil
}

type edKey struct {
	tokenKeyObj
	pub ed25519.PublicKey
}

func (k edKey) Public() crypto.PublicKey { return k.pub }

// Sign signs msg itself (pure Ed25519: opts.HashFunc() must be 0).
func (k edKey) Sign(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if opts != nil && opts.HashFunc() != 0 {
		return nil, errors.New("Ed25519 signs the message, not a digest (Ed25519ph is not supported)")
	}
	return k.t.sign(ckmEdDSA, nil, k.h, msg)
}

var namedCurves = map[string]elliptic.Curve{
	"\x06\x08\x2a\x86\x48\xce\x3d\x03\x01\x07": elliptic.P256(),
	"\x06\x05\x2b\x81\x04\x00\x22":             elliptic.P384(),
}

func (k tokenKeyObj) ecdsa(sh pkcs11.SessionHandle, pub pkcs11.ObjectHandle, n int) (crypto.Signer, error) {
	if err := needPublic(n); err != nil {
		return nil, err
	}
	a, err := k.t.attrs(sh, pub, pkcs11.CKA_EC_PARAMS, pkcs11.CKA_EC_POINT)
	if err != nil {
		return nil, err
	}
	curve, ok := namedCurves[string(a[0])]
	if !ok {
		return nil, errors.New("an EC key on a curve other than P-256 or P-384")
	}
	pk, err := ecdsa.ParseUncompressedPublicKey(curve, ecPoint(a[1]))
	if err != nil {
		return nil, fmt.Errorf("CKA_EC_POINT: %w", err)
	}
	return ecKey{k, pk}, nil
}

type ecKey struct {
	tokenKeyObj
	pub *ecdsa.PublicKey
}

func (k ecKey) Public() crypto.PublicKey { return k.pub }

// Sign signs a digest with CKM_ECDSA and returns the ASN.1 signature, as
// crypto/ecdsa does.
func (k ecKey) Sign(_ io.Reader, digest []byte, _ crypto.SignerOpts) ([]byte, error) {
	rs, err := k.t.sign(pkcs11.CKM_ECDSA, nil, k.h, digest)
	if err != nil {
		return nil, err
	}
	return marshalRS(rs)
}

func marshalRS(rs []byte) ([]byte, error) {
	if len(rs) == 0 || len(rs)%2 != 0 {
		return nil, fmt.Errorf("token returned a signature of %d bytes", len(rs))
	}
	h := len(rs) / 2
	return asn1.Marshal(struct{ R, S *big.Int }{new(big.Int).SetBytes(rs[:h]), new(big.Int).SetBytes(rs[h:])})
}

func (k tokenKeyObj) rsa(sh pkcs11.SessionHandle) (crypto.Signer, error) {
	a, err := k.t.attrs(sh, k.h, pkcs11.CKA_MODULUS, pkcs11.CKA_PUBLIC_EXPONENT)
	if err != nil {
		return nil, err
	}
	e := new(big.Int).SetBytes(a[1])
	if !e.IsInt64() || e.Int64() > 1<<31 {
		return nil, errors.New("RSA public exponent out of range")
	}
	return rsaKey{k, &rsa.PublicKey{N: new(big.Int).SetBytes(a[0]), E: int(e.Int64())}}, nil
}

type rsaKey struct {
	tokenKeyObj
	pub *rsa.PublicKey
}

func (k rsaKey) Public() crypto.PublicKey { return k.pub }

// digestInfo are the DER prefixes of PKCS #1 v1.5 (RFC 8017 §9.2).
var digestInfo = map[crypto.Hash][]byte{
	crypto.SHA1:   {0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14},
	crypto.SHA256: {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20},
	crypto.SHA384: {0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30},
	crypto.SHA512: {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40},
}

// Sign is RSASSA-PKCS1-v1_5 over digest (CKM_RSA_PKCS over the
// DigestInfo); PSS is refused.
func (k rsaKey) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if _, pss := opts.(*rsa.PSSOptions); pss {
		return nil, errors.New("RSA-PSS through the token is not supported")
	}
	prefix, ok := digestInfo[opts.HashFunc()]
	if !ok || len(digest) != opts.HashFunc().Size() {
		return nil, fmt.Errorf("RSA PKCS #1 v1.5 with %v is not supported", opts.HashFunc())
	}
	return k.t.sign(pkcs11.CKM_RSA_PKCS, nil, k.h, append(append([]byte{}, prefix...), digest...))
}

// SignRaw is m^d mod n (CKM_RSA_X_509); m is left-padded to the modulus
// length.
func (k rsaKey) SignRaw(m []byte) ([]byte, error) {
	n := k.pub.Size()
	if len(m) > n {
		return nil, fmt.Errorf("raw RSA input of %d bytes for a %d-byte modulus", len(m), n)
	}
	in := make([]byte, n)
	copy(in[n-len(m):], m)
	sig, err := k.t.sign(pkcs11.CKM_RSA_X_509, nil, k.h, in)
	if err != nil {
		return nil, err
	}
	out := make([]byte, n) // some tokens strip leading zeros
	copy(out[n-len(sig):], sig)
	return out, nil
}

func (k tokenKeyObj) dsa(sh pkcs11.SessionHandle, pub pkcs11.ObjectHandle, n int) (crypto.Signer, error) {
	a, err := k.t.attrs(sh, k.h, pkcs11.CKA_PRIME, pkcs11.CKA_SUBPRIME, pkcs11.CKA_BASE)
	if err != nil {
		return nil, err
	}
	if err := needPublic(n); err != nil {
		return nil, err
	}
	y, err := k.t.attrs(sh, pub, pkcs11.CKA_VALUE)
	if err != nil {
		return nil, err
	}
	b := func(v []byte) *big.Int { return new(big.Int).SetBytes(v) }
	return dsaKey{k, &dsa.PublicKey{Parameters: dsa.Parameters{P: b(a[0]), Q: b(a[1]), G: b(a[2])}, Y: b(y[0])}}, nil
}

type dsaKey struct {
	tokenKeyObj
	pub *dsa.PublicKey
}

func (k dsaKey) Public() crypto.PublicKey { return k.pub }

// Sign is DSA over digest (CKM_DSA; the digest is cut to q's length) and
// returns the ASN.1 signature.
func (k dsaKey) Sign(_ io.Reader, digest []byte, _ crypto.SignerOpts) ([]byte, error) {
	if n := (k.pub.Q.BitLen() + 7) / 8; len(digest) > n {
		digest = digest[:n]
	}
	rs, err := k.t.sign(pkcs11.CKM_DSA, nil, k.h, digest)
	if err != nil {
		return nil, err
	}
	return marshalRS(rs)
}
