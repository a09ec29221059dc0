package vdv

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
)

// ISO/IEC 9796-2 digital signature scheme 1 with RSA, implicit trailer
// (0xBC): the message representative is
//
//	header ‖ padding ‖ M1 ‖ H(M) ‖ 0xBC
//
// where M = M1 ‖ M2. With partial recovery (the message is longer than
// the capacity, header 0x6A) M1 fills the capacity and M2 travels beside
// the signature as the "remainder"; with total recovery (header 0x4A, or
// 0x4B 0xBB… 0xBA padding before a shorter message) everything is inside.
// The signature is J^d mod n; the verifier computes s^e mod n, checks the
// format and the hash over M1 ‖ M2 and recovers M1. The VDV-KA uses SHA-1
// for tickets and certificates. Only moduli whose size is a whole number of
// bytes are supported (VDV keys are 1024, 1536 and 1984 bits).

// ErrSignature reports a signature that does not verify: wrong key,
// altered signature, remainder or data.
var ErrSignature = errors.New("ISO 9796-2 signature does not verify")

func modBytes(n *big.Int) (int, error) {
	if n.BitLen()%8 != 0 || n.BitLen() < 512 {
		return 0, fmt.Errorf("ISO 9796-2: modulus of %d bits: want a whole number of bytes, at least 512 bits", n.BitLen())
	}
	return n.BitLen() / 8, nil
}

// Sign9796 signs msg: sig recovers the first Capacity bytes, remainder is
// the rest (empty under total recovery).
func Sign9796(priv *rsa.PrivateKey, h crypto.Hash, msg []byte) (sig, remainder []byte, err error) {
	return sign9796(priv.N, func(m *big.Int) (*big.Int, error) { return rawSign(priv, m) }, h, msg)
}

// RawSigner is an RSA key held elsewhere (a hardware token's, keyref)
// that computes m^d mod n without padding (PKCS#11 CKM_RSA_X_509).
type RawSigner interface {
	Public() crypto.PublicKey
	SignRaw(m []byte) ([]byte, error)
}

// Sign9796With is Sign9796 with a raw signer; the signature is checked
// with the public key before it is returned (a faulty token must not hand
// out a wrong signature).
func Sign9796With(signer RawSigner, h crypto.Hash, msg []byte) (sig, remainder []byte, err error) {
	pub, ok := signer.Public().(*rsa.PublicKey)
	if !ok {
		return nil, nil, fmt.Errorf("ISO 9796-2: the key is %T, not RSA", signer.Public())
	}
	k, err := modBytes(pub.N)
	if err != nil {
		return nil, nil, err
	}
	return sign9796(pub.N, func(m *big.Int) (*big.Int, error) {
		out, err := signer.SignRaw(m.FillBytes(make([]byte, k)))
		if err != nil {
			return nil, err
		}
		s := new(big.Int).SetBytes(out)
		if new(big.Int).Exp(s, big.NewInt(int64(pub.E)), pub.N).Cmp(m) != 0 {
			return nil, errors.New("ISO 9796-2: the token's raw RSA signature does not verify")
		}
		return s, nil
	}, h, msg)
}

func sign9796(n *big.Int, raw func(m *big.Int) (*big.Int, error), h crypto.Hash, msg []byte) (sig, remainder []byte, err error) {
	k, err := modBytes(n)
	if err != nil {
		return nil, nil, err
	}
	if !h.Available() {
		return nil, nil, fmt.Errorf("ISO 9796-2: hash %v not available", h)
	}
	J, rem := encode9796(k, h, msg)
	s, err := raw(new(big.Int).SetBytes(J))
	if err != nil {
		return nil, nil, err
	}
	return s.FillBytes(make([]byte, k)), append([]byte(nil), rem...), nil
}

// encode9796 builds the k-byte message representative of msg and the
// part of msg it does not hold.
func encode9796(k int, h crypto.Hash, msg []byte) (J, remainder []byte) {
	hl := h.Size()
	capacity := k - hl - 2
	J = make([]byte, k)
	var m1 []byte
	switch {
	case len(msg) > capacity:
		J[0] = 0x6A
		m1, remainder = msg[:capacity], msg[capacity:]
		copy(J[1:], m1)
	case len(msg) == capacity:
		J[0] = 0x4A
		m1 = msg
		copy(J[1:], m1)
	default:
		pad := capacity - len(msg) // bytes 0x4B, 0xBB…, 0xBA before M
		J[0] = 0x4B
		for i := 1; i <= pad; i++ {
			J[i] = 0xBB
		}
		J[pad] ^= 0x01 // the last padding byte is 0xBA (or the header 0x4A when pad is 0)
		if pad == 0 {
			J[0] = 0x4A
		}
		m1 = msg
		copy(J[1+pad:], m1)
	}
	d := h.New()
	d.Write(msg)
	copy(J[k-1-hl:], d.Sum(nil))
	J[k-1] = 0xBC
	return J, remainder
}

// rawSign is s = m^d mod n, with the CRT values when present. math/big
// is not constant-time, so the exponentiation runs on a blinded value
// (m·r^e, unblinded by r^-1 afterwards; r random), and the result is
// checked by re-encryption (a fault must not leak the key). Keys are
// validated where they are loaded (NewIssuer), not per signature.
func rawSign(priv *rsa.PrivateKey, m *big.Int) (*big.Int, error) {
	if priv.N == nil || priv.D == nil || priv.E < 3 {
		return nil, errors.New("ISO 9796-2: incomplete RSA private key")
	}
	n, e := priv.N, big.NewInt(int64(priv.E))
	var r, rInv *big.Int
	for {
		var err error
		if r, err = rand.Int(rand.Reader, n); err != nil {
			return nil, err
		}
		if r.Sign() > 0 {
			if rInv = new(big.Int).ModInverse(r, n); rInv != nil {
				break
			}
		}
	}
	c := new(big.Int).Exp(r, e, n)
	c.Mul(c, m).Mod(c, n)
	var s *big.Int
	if len(priv.Primes) == 2 && priv.Precomputed.Dp != nil {
		p, q := priv.Primes[0], priv.Primes[1]
		m1 := new(big.Int).Exp(c, priv.Precomputed.Dp, p)
		m2 := new(big.Int).Exp(c, priv.Precomputed.Dq, q)
		h := new(big.Int).Sub(m1, m2)
		h.Mul(h, priv.Precomputed.Qinv).Mod(h, p)
		s = h.Mul(h, q).Add(h, m2)
	} else {
		s = new(big.Int).Exp(c, priv.D, n)
	}
	s.Mul(s, rInv).Mod(s, n)
	if new(big.Int).Exp(s, e, n).Cmp(m) != 0 {
		return nil, errors.New("ISO 9796-2: RSA signature self-check failed")
	}
	return s, nil
}

// Recover9796 verifies sig and remainder under pub and returns the whole
// message M1 ‖ M2.
func Recover9796(pub *rsa.PublicKey, h crypto.Hash, sig, remainder []byte) ([]byte, error) {
	k, err := modBytes(pub.N)
	if err != nil {
		return nil, err
	}
	hl := h.Size()
	if len(sig) != k {
		return nil, fmt.Errorf("%w: signature of %d bytes for a %d-byte key", ErrSignature, len(sig), k)
	}
	s := new(big.Int).SetBytes(sig)
	if s.Sign() == 0 || s.Cmp(pub.N) >= 0 {
		return nil, fmt.Errorf("%w: signature out of range", ErrSignature)
	}
	J := new(big.Int).Exp(s, big.NewInt(int64(pub.E)), pub.N).FillBytes(make([]byte, k))
	if J[0]&0xC0 != 0x40 || J[k-1] != 0xBC {
		return nil, fmt.Errorf("%w: not an ISO 9796-2 representative (header %02X, trailer %02X)", ErrSignature, J[0], J[k-1])
	}
	partial := J[0]&0x20 != 0
	start := 0 // index of the byte whose low nibble is 0xA: M1 follows it
	if J[0]&0x0F != 0x0A {
		if J[0]&0x1F != 0x0B {
			return nil, fmt.Errorf("%w: bad padding", ErrSignature)
		}
		start = 1
		for start < k-1-hl && J[start] == 0xBB {
			start++
		}
		if start >= k-1-hl || J[start] != 0xBA {
			return nil, fmt.Errorf("%w: bad padding", ErrSignature)
		}
	}
	m1 := J[start+1 : k-1-hl]
	if partial && start != 0 {
		return nil, fmt.Errorf("%w: padded representative claims partial recovery", ErrSignature)
	}
	if !partial && len(remainder) > 0 {
		return nil, fmt.Errorf("%w: total recovery with a remainder", ErrSignature)
	}
	msg := make([]byte, 0, len(m1)+len(remainder))
	msg = append(append(msg, m1...), remainder...)
	d := h.New()
	d.Write(msg)
	if subtle.ConstantTimeCompare(d.Sum(nil), J[k-1-hl:k-1]) != 1 {
		return nil, fmt.Errorf("%w: hash mismatch", ErrSignature)
	}
	return msg, nil
}
