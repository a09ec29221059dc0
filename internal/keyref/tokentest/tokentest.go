// Package tokentest makes a SoftHSM2 token for tests: a real PKCS#11
// token (Debian's softhsm2, which scripts/test.sh installs from
// scripts/apt-packages.txt) in a directory of its own, never the system's
// /var/lib/softhsm.
package tokentest

import (
	"crypto"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/farebox/farebox/internal/keyref"
)

// Module is where Debian's softhsm2 installs its PKCS#11 module.
const Module = "/usr/lib/softhsm/libsofthsm2.so"

// Token is an initialized SoftHSM2 token.
type Token struct {
	Label, PIN, SOPIN string
	// Conf is the SoftHSM2 configuration naming the token directory; a
	// child process finds the token with SOFTHSM2_CONF=Conf in its
	// environment.
	Conf string
}

// URI is the `pkcs11:` reference of key object in the token, with the PIN
// as pin-value.
func (tk Token) URI(object string) string {
	return "pkcs11:token=" + tk.Label + ";object=" + object + "?module-path=" + Module + "&pin-value=" + tk.PIN
}

var (
	once   sync.Once
	shared Token
	errNew error
)

// New returns the token of this test process. SoftHSM2 reads its
// configuration once, when a process first loads the module, so a process
// has one token directory: New makes it (and one token in it) on the first
// call and sets SOFTHSM2_CONF; later calls return the same token. Tests
// tell their keys apart by object label (Unique). The directory is left in
// the temporary directory of the system (the tokens of a run, a few KB).
// A missing softhsm2 fails the test: CI installs it, so a skip would
// hide a broken set-up.
func New(t testing.TB) Token {
	t.Helper()
	once.Do(func() { shared, errNew = create() })
	if errNew != nil {
		t.Fatalf("SoftHSM2 token: %v (apt-get install softhsm2; scripts/test.sh installs it from scripts/apt-packages.txt)", errNew)
	}
	return shared
}

func create() (Token, error) {
	if _, err := os.Stat(Module); err != nil {
		return Token{}, err
	}
	util, err := exec.LookPath("softhsm2-util")
	if err != nil {
		return Token{}, err
	}
	dir, err := os.MkdirTemp("", "farebox-softhsm-")
	if err != nil {
		return Token{}, err
	}
	tk := Token{Label: "farebox-test", PIN: "1234", SOPIN: "5678", Conf: filepath.Join(dir, "softhsm2.conf")}
	if err := InitToken(util, dir, tk); err != nil {
		return Token{}, err
	}
	return tk, os.Setenv("SOFTHSM2_CONF", tk.Conf)
}

// InitToken writes a SoftHSM2 configuration with its token directory
// under dir to tk.Conf and initializes a token tk.Label in it.
func InitToken(util, dir string, tk Token) error {
	tokens := filepath.Join(dir, "tokens")
	if err := os.MkdirAll(tokens, 0o700); err != nil {
		return err
	}
	conf := "directories.tokendir = " + tokens + "\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n"
	if err := os.WriteFile(tk.Conf, []byte(conf), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(util, "--init-token", "--free", "--label", tk.Label, "--pin", tk.PIN, "--so-pin", tk.SOPIN)
	cmd.Env = append(os.Environ(), "SOFTHSM2_CONF="+tk.Conf)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("softhsm2-util --init-token: %v: %s", err, out)
	}
	return nil
}

// Unique is an object label no other test of the process uses.
func Unique(prefix string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// Import imports key into the token under a fresh label (Unique(prefix))
// and returns its URI; it fails the test unless the token then exports
// key's public key.
func (tk Token) Import(t testing.TB, prefix string, key crypto.Signer) string {
	t.Helper()
	ref := tk.URI(Unique(prefix))
	s, err := keyref.Import(ref, key)
	if err != nil {
		t.Fatal(err)
	}
	if pub, ok := s.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(key.Public()) {
		t.Fatalf("the token's public key %T is not the imported key's", s.Public())
	}
	return ref
}
