package keyref_test

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"testing"

	"github.com/farebox/farebox/internal/keyref"
	"github.com/farebox/farebox/internal/keyref/tokentest"
)

// BenchmarkSign is one signature with the key in memory and the same key
// in a SoftHSM2 token, alternating (the floor under the token path of
// BenchmarkTokenVsFile in internal/barcode/uic), sequentially and from
// 8 goroutines (the session pool):
//
//	go test -run '^$' -bench Sign ./internal/keyref
func BenchmarkSign(b *testing.B) {
	tk := tokentest.New(b)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 1024)
	edTok, err := keyref.Import(tk.URI(tokentest.Unique("bench-ed")), ed)
	if err != nil {
		b.Fatal(err)
	}
	rsaTok, err := keyref.Import(tk.URI(tokentest.Unique("bench-rsa")), rk)
	if err != nil {
		b.Fatal(err)
	}
	msg := make([]byte, 200)
	m := make([]byte, 128)
	m[1] = 1
	ops := map[string]func() error{
		"ed25519/file":  func() error { _ = ed25519.Sign(ed, msg); return nil },
		"ed25519/token": func() error { _, err := edTok.Sign(nil, msg, crypto.Hash(0)); return err },
		"rsa1024-raw/file": func() error {
			_, err := rsa.SignPKCS1v15(nil, rk, crypto.Hash(0), m[:100])
			return err
		},
		"rsa1024-raw/token": func() error { _, err := rsaTok.(keyref.RawSigner).SignRaw(m); return err },
	}
	for round := range 2 {
		for _, name := range []string{"ed25519/file", "ed25519/token", "rsa1024-raw/file", "rsa1024-raw/token"} {
			op := ops[name]
			b.Run(fmt.Sprintf("%s/round%d", name, round+1), func(b *testing.B) {
				for range b.N {
					if err := op(); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/parallel8/round%d", name, round+1), func(b *testing.B) {
				b.SetParallelism(4) // GOMAXPROCS 2 × 4 = 8 goroutines
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := op(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
