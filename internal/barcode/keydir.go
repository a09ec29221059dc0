package barcode

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
)

// Key directory layout: "inspection-<kid>.key" holds a PKCS#8 PEM signing
// key, "inspection-<kid>.pub" a PKIX PEM public key that only verifies
// (a retired key whose private half was deleted). The active key is the
// live-range signing key with the highest id; the test-range (from
// TestKeyIDBase) signing key with the highest id signs test tickets.
const (
	keyFilePrefix = "inspection-"
	privSuffix    = ".key"
	pubSuffix     = ".pub"
	// fromSuffix names "inspection-<kid>.from": the instant (RFC 3339) from
	// which a rotated key signs (docs/wallet.md, "Key rotation"). Until
	// then the key is published (keys.json) but signs nothing, so devices
	// that sync keys.json daily know it before they meet its signatures.
	fromSuffix = ".from"
)

// FromFileName is the name of the file holding the instant from which
// key kid signs.
func FromFileName(kid uint16) string { return keyFilePrefix + strconv.Itoa(int(kid)) + fromSuffix }

// LoadDir reads every key file of dir into a keyring at the current time
// (LoadDirAt). It fails with apperr NotFound when dir holds no signing key.
func LoadDir(dir string) (*Keyring, error) { return LoadDirAt(dir, time.Now()) }

// LoadDirAt is LoadDir at now: a key whose signing starts after now only
// verifies (LoadFilesAt).
func LoadDirAt(dir string, now time.Time) (*Keyring, error) {
	const op = "barcode.LoadDir"
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, apperr.Wrap(op, err)
	}
	files := map[string][]byte{}
	for _, e := range ents {
		name := e.Name()
		if _, _, ok := keyFileID(name); (!ok && !isFromFile(name)) || e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, apperr.Wrap(op, err)
		}
		files[name] = data
	}
	kr, err := LoadFilesAt(files, now)
	if apperr.KindOf(err) == apperr.NotFound {
		return nil, apperr.E(op, apperr.NotFound, CodeInspectionKeyNotFound, "no live inspection signing key in "+dir)
	}
	return kr, err
}

// KeyFileName is the key-directory name of k: "inspection-<kid>.key" for a
// signing key, "inspection-<kid>.pub" for a verify-only key.
func KeyFileName(k Key) string {
	if k.Private != nil {
		return keyFilePrefix + k.Kid() + privSuffix
	}
	return keyFilePrefix + k.Kid() + pubSuffix
}

// isFromFile reports whether name is an "inspection-<kid>.from" file.
func isFromFile(name string) bool {
	num, ok := strings.CutSuffix(strings.TrimPrefix(name, keyFilePrefix), fromSuffix)
	if !ok || !strings.HasPrefix(name, keyFilePrefix) {
		return false
	}
	n, err := strconv.ParseUint(num, 10, 16)
	return err == nil && strconv.FormatUint(n, 10) == num
}

// LoadFilesAt builds a keyring from key files given by base name and content
// (the key-directory layout, wherever the files are kept: a directory, a
// list of configured files, database rows). Names that do not follow the
// layout are ignored. It fails with apperr NotFound when no live signing
// key is among them. A signing key with an
// "inspection-<kid>.from" instant after now is loaded as a verify-only key
// (published, signing nothing yet); every key's instant is kept for
// SignerAt. A malformed instant is an error (never "signs at once").
func LoadFilesAt(files map[string][]byte, now time.Time) (*Keyring, error) {
	return LoadKeysAt(files, nil, now)
}

// LoadKeysAt is LoadFilesAt with keys held elsewhere (a hardware token's,
// TokenKey, or public keys alone) added to those of files: the same rules
// for the active keys and the instants of "inspection-<kid>.from" apply.
func LoadKeysAt(files map[string][]byte, held []Key, now time.Time) (*Keyring, error) {
	const op = "barcode.LoadFiles"
	from := map[uint16]time.Time{}
	for name, data := range files {
		if !isFromFile(name) {
			continue
		}
		n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, keyFilePrefix), fromSuffix), 10, 16)
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
		if err != nil {
			return nil, apperr.E(op, apperr.Invalid, CodeInvalidInspectionKey, name+": not an RFC 3339 instant")
		}
		from[uint16(n)] = t
	}
	var signers, verifiers []Key
	for _, k := range held {
		if f, ok := from[k.ID]; ok && f.After(now) {
			k.Private, k.Signer = nil, nil // published ahead: it signs from f on
		}
		if k.CanSign() {
			signers = append(signers, k)
		} else {
			verifiers = append(verifiers, k)
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		id, private, ok := keyFileID(name)
		if !ok {
			continue
		}
		var k Key
		var err error
		if private {
			k, err = ParsePrivateKey(id, files[name])
		} else {
			k, err = ParsePublicKey(id, files[name])
		}
		if err != nil {
			return nil, apperr.E(op, apperr.Invalid, CodeInvalidInspectionKey, name+": "+err.Error())
		}
		if f, ok := from[id]; ok && f.After(now) {
			private = false // published ahead: it signs from f on
			k.Private = nil
		}
		if private {
			signers = append(signers, k)
		} else {
			verifiers = append(verifiers, k)
		}
	}
	var active *Key
	for i, k := range signers {
		if k.Environment() == EnvLive && (active == nil || k.ID > active.ID) {
			active = &signers[i]
		}
	}
	if active == nil {
		return nil, apperr.E(op, apperr.NotFound, CodeInspectionKeyNotFound, "no live inspection signing key")
	}
	kr, err := NewKeyring(*active, append(signers, verifiers...)...)
	if err != nil {
		return nil, err
	}
	kr.from = map[uint16]time.Time{}
	for id, t := range from {
		if _, ok := kr.keys[id]; ok {
			kr.from[id] = t
		}
	}
	return kr, nil
}

func keyFileID(name string) (id uint16, private, ok bool) {
	rest, found := strings.CutPrefix(name, keyFilePrefix)
	if !found {
		return 0, false, false
	}
	var num string
	switch {
	case strings.HasSuffix(rest, privSuffix):
		num, private = strings.TrimSuffix(rest, privSuffix), true
	case strings.HasSuffix(rest, pubSuffix):
		num = strings.TrimSuffix(rest, pubSuffix)
	default:
		return 0, false, false
	}
	n, err := strconv.ParseUint(num, 10, 16)
	if err != nil || strconv.FormatUint(n, 10) != num {
		return 0, false, false
	}
	return uint16(n), private, true
}

// LoadOrCreateDir loads the keyring of dir, creating dir, a first live key
// (id 1) when it holds no live signing key and a first test key (id
// TestKeyIDBase+1) when it holds no test signing key. created reports a
// generation, so the caller can log that the service runs with
// self-generated keys.
func LoadOrCreateDir(dir string, rnd io.Reader) (kr *Keyring, created bool, err error) {
	kr, err = LoadDir(dir)
	if err != nil && apperr.KindOf(err) != apperr.NotFound {
		return nil, false, err
	}
	if err != nil {
		if _, err := writeNewKey(dir, 1, rnd); err != nil {
			return nil, false, err
		}
		created = true
	} else if kr.testSigner {
		return kr, false, nil
	}
	if kr == nil || !kr.testSigner {
		if _, err := writeNewKey(dir, TestKeyIDBase+1, rnd); err != nil {
			return nil, false, err
		}
		created = true
	}
	kr, err = LoadDir(dir)
	return kr, created && err == nil, err
}

// RotateDirFrom adds a new signing key for env (EnvLive or EnvTest) to dir
// with the next free id of that range; it becomes the active key of env
// from the instant from on (zero: at once) while the older keys keep
// verifying. "inspection-<kid>.from" is written before the key, so no
// reader ever sees the key without its instant. To retire a key later,
// replace its .key file by its .pub file (PKIX "PUBLIC KEY" PEM).
func RotateDirFrom(dir, env string, from time.Time, rnd io.Reader) (Key, error) {
	const op = "barcode.RotateDir"
	lo, hi := uint16(1), uint16(TestKeyIDBase-1)
	switch env {
	case EnvLive:
	case EnvTest:
		lo, hi = TestKeyIDBase+1, ^uint16(0)
	default:
		return Key{}, apperr.E(op, apperr.Invalid, CodeInvalidEnvironment, `environment must be "live" or "test"`)
	}
	next := lo
	kr, err := LoadDir(dir)
	switch {
	case err == nil:
		for _, id := range kr.IDs() {
			if id >= next && id <= hi {
				if id == hi {
					return Key{}, apperr.E(op, apperr.Conflict, CodeInspectionKeyIDsExhausted, "no free key id left")
				}
				next = id + 1
			}
		}
	case apperr.KindOf(err) != apperr.NotFound:
		return Key{}, err
	}
	if !from.IsZero() {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return Key{}, apperr.Wrap(op, err)
		}
		if err := os.WriteFile(filepath.Join(dir, FromFileName(next)), []byte(from.UTC().Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
			return Key{}, apperr.Wrap(op, err)
		}
	}
	return writeNewKey(dir, next, rnd)
}

func writeNewKey(dir string, id uint16, rnd io.Reader) (Key, error) {
	const op = "barcode.writeNewKey"
	k, err := GenerateKey(id, rnd)
	if err != nil {
		return Key{}, err
	}
	b, err := MarshalPrivatePEM(k)
	if err != nil {
		return Key{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Key{}, apperr.Wrap(op, err)
	}
	name := filepath.Join(dir, keyFilePrefix+k.Kid()+privSuffix)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Key{}, apperr.Wrap(op, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return Key{}, apperr.Wrap(op, err)
	}
	return k, apperr.Wrap(op, f.Close())
}
