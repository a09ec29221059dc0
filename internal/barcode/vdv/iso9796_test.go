package vdv

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	_ "crypto/sha1"
	"encoding/hex"
	"errors"
	"math/big"
	"testing"

	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // only to check the published ISO 9796-2 example
)

func hexBytes(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hexInt(t testing.TB, s string) *big.Int {
	t.Helper()
	n, ok := new(big.Int).SetString(s, 16)
	if !ok {
		t.Fatal(s)
	}
	return n
}

// TestISO9796Example checks against the ISO/IEC 9796-2 (edition 1) scheme
// 1 example with partial recovery: a 640-bit key with e = 3, RIPEMD-160,
// implicit trailer, a 112-byte message. The numbers are the ones Bouncy
// Castle's ISO9796Test (bc-java, "doTest5": mod3, pub3, pri3, msg5, sig5)
// reproduces from the standard. Signing is deterministic, so both
// directions are checked exactly.
func TestISO9796Example(t *testing.T) {
	crypto.RegisterHash(crypto.RIPEMD160, ripemd160.New)
	n := hexInt(t, "ffffffff78f6c55506c59785e871211ee120b0b5dd644aa796d82413a47b24573f1be5745b5cd9950f6b389b52350d4e01e90009669a8720bf265a2865994190a661dea3c7828e2e7ca1b19651adc2d5")
	d := hexInt(t, "2aaaaaaa942920e38120ee965168302fd0301d73a4e60c7143ceb0adf0bf30b9352f50e8b9e4ceedd65343b2179005b2f099915e4b0c37e41314bb0821ad8330d23cba7f589e0f129b04c46b67dfce9d")
	msg := bytes.Repeat(hexBytes(t, "fedcba9876543210"), 14)
	want := hexBytes(t, "5cf9a01854dbacaec83aae8efc563d74538192e95466babacd361d7c86000fe42dcb4581e48e4feb862d04698da9203b1803b262105104d510b365ee9c660857ba1c001aa57abfd1c8de92e47c275cae")
	pub := &rsa.PublicKey{N: n, E: 3}
	got, err := Recover9796(pub, crypto.RIPEMD160, want, msg[Capacity(80, crypto.RIPEMD160):])
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("recover the published signature: %v", err)
	}
	// Signing direction: our representative raised to the example's
	// private exponent (it gives no primes) is the published signature.
	J, rem := encode9796(80, crypto.RIPEMD160, msg)
	if !bytes.Equal(rem, msg[58:]) || J[0] != 0x6A || J[79] != 0xBC {
		t.Fatalf("representative % X", J)
	}
	if s := new(big.Int).Exp(new(big.Int).SetBytes(J), d, n); s.Cmp(new(big.Int).SetBytes(want)) != 0 {
		t.Fatalf("signature %X, want %X", s, want)
	}
}

func testKey(t testing.TB, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestISO9796RoundTrip(t *testing.T) {
	k := testKey(t, 1024)
	other := testKey(t, 1024)
	capacity := Capacity(128, crypto.SHA1) // 106
	for _, n := range []int{0, 1, 50, capacity - 2, capacity - 1, capacity, capacity + 1, 200, 5000} {
		msg := make([]byte, n)
		rand.Read(msg)
		sig, rem, err := Sign9796(k, crypto.SHA1, msg)
		if err != nil {
			t.Fatal(n, err)
		}
		if len(sig) != 128 || len(rem) != max(0, n-capacity) {
			t.Fatalf("len %d: sig %d rem %d", n, len(sig), len(rem))
		}
		got, err := Recover9796(&k.PublicKey, crypto.SHA1, sig, rem)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("len %d: recover: %v", n, err)
		}
		// wrong key
		if _, err := Recover9796(&other.PublicKey, crypto.SHA1, sig, rem); !errors.Is(err, ErrSignature) {
			t.Fatalf("len %d: wrong key: %v", n, err)
		}
		// every single bit of the signature flipped
		for i := 0; i < len(sig)*8; i += 37 {
			s := bytes.Clone(sig)
			s[i/8] ^= 1 << (i % 8)
			if _, err := Recover9796(&k.PublicKey, crypto.SHA1, s, rem); err == nil {
				t.Fatalf("len %d: flipped signature bit %d verifies", n, i)
			}
		}
		if len(rem) > 0 {
			r := bytes.Clone(rem)
			r[len(r)-1] ^= 0x01
			if _, err := Recover9796(&k.PublicKey, crypto.SHA1, sig, r); !errors.Is(err, ErrSignature) {
				t.Fatalf("len %d: altered remainder: %v", n, err)
			}
			if _, err := Recover9796(&k.PublicKey, crypto.SHA1, sig, rem[:len(rem)-1]); !errors.Is(err, ErrSignature) {
				t.Fatalf("len %d: shortened remainder: %v", n, err)
			}
		} else if _, err := Recover9796(&k.PublicKey, crypto.SHA1, sig, []byte{0}); !errors.Is(err, ErrSignature) {
			t.Fatalf("len %d: extra remainder on total recovery: %v", n, err)
		}
	}
}

func TestISO9796Refuses(t *testing.T) {
	k := testKey(t, 1024)
	sig, rem, err := Sign9796(k, crypto.SHA1, make([]byte, 150))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Recover9796(&k.PublicKey, crypto.SHA1, sig[1:], rem); !errors.Is(err, ErrSignature) {
		t.Fatalf("short signature: %v", err)
	}
	over := new(big.Int).Add(k.N, big.NewInt(1)).FillBytes(make([]byte, 128))
	if _, err := Recover9796(&k.PublicKey, crypto.SHA1, over, rem); !errors.Is(err, ErrSignature) {
		t.Fatalf("signature >= n: %v", err)
	}
	// a valid RSA operation on a non-ISO representative (PKCS#1 v1.5)
	h := make([]byte, 20)
	p, _ := rsa.SignPKCS1v15(nil, k, crypto.SHA1, h)
	if _, err := Recover9796(&k.PublicKey, crypto.SHA1, p, nil); !errors.Is(err, ErrSignature) {
		t.Fatalf("PKCS#1 signature: %v", err)
	}
	odd := &rsa.PublicKey{N: new(big.Int).Rsh(k.N, 4), E: 65537}
	if _, err := Recover9796(odd, crypto.SHA1, sig, rem); err == nil || errors.Is(err, ErrSignature) {
		t.Fatalf("a 1020-bit modulus: %v", err)
	}
}

// Capacity is how many message bytes a signature by a key of modBytes
// bytes recovers with hash h (partial recovery).
func Capacity(modBytes int, h crypto.Hash) int { return modBytes - h.Size() - 2 }
