package credentials

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/wallet/google"
	"github.com/farebox/farebox/internal/wallet/google/googletest"
)

// publicKeys lists a keyring's key set (ids, public keys, active flags).
func publicKeys(t *testing.T, kr *barcode.Keyring) string {
	t.Helper()
	b, err := kr.MarshalKeySet()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInspectionEmbeddedGeneratedOnce(t *testing.T) {
	s := Settings{DataDir: t.TempDir(), Embedded: true}
	ctx := context.Background()
	if _, _, _, err := LoadInspection(ctx, s, nil, time.Now(), false); apperr.KindOf(err) != apperr.NotFound {
		t.Fatalf("without create on an empty data dir: %v", err)
	}
	kr, src, created, err := LoadInspection(ctx, s, nil, time.Now(), true)
	if err != nil || !created || src != SourceDataDir {
		t.Fatalf("first start: %v created=%v source=%s", err, created, src)
	}
	if ids := kr.IDs(); len(ids) != 2 || ids[0] != 1 || ids[1] != barcode.TestKeyIDBase+1 {
		t.Errorf("ids %v", ids)
	}
	fi, err := os.Stat(filepath.Join(s.InspectionDir(), "inspection-1.key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", fi, err)
	}
	again, _, created, err := LoadInspection(ctx, s, nil, time.Now(), true)
	if err != nil || created || publicKeys(t, again) != publicKeys(t, kr) {
		t.Errorf("restart changed the keys: %v created=%v", err, created)
	}
	ro, _, _, err := LoadInspection(ctx, s, nil, time.Now(), false)
	if err != nil || publicKeys(t, ro) != publicKeys(t, kr) {
		t.Errorf("read-only load: %v", err)
	}
}

// TestInspectionDatabaseShared: instances starting at once on one database
// all end up with the same keys, written once.
func TestInspectionDatabaseShared(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s := Settings{DataDir: t.TempDir(), Embedded: false}
		if _, _, _, err := LoadInspection(ctx, s, st, time.Now(), false); apperr.KindOf(err) != apperr.NotFound {
			t.Fatalf("read-only on an empty table: %v", err)
		}
		const n = 6
		var wg sync.WaitGroup
		sets, creators := make([]string, n), make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				kr, src, created, err := LoadInspection(ctx, s, st, time.Now(), true)
				if err == nil && src != SourceDatabase {
					t.Errorf("source %s", src)
				}
				if errs[i] = err; err == nil {
					sets[i], creators[i] = publicKeys(t, kr), created
				}
			}()
		}
		wg.Wait()
		won := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("instance %d: %v", i, errs[i])
			}
			if sets[i] != sets[0] {
				t.Errorf("instance %d has other keys:\n%s\n%s", i, sets[i], sets[0])
			}
			if creators[i] {
				won++
			}
		}
		if won < 1 {
			t.Error("no instance reports creating the keys")
		}
		rows, err := st.Read().ServiceSecrets(ctx, "inspection-")
		if err != nil || len(rows) != 2 || rows["inspection-1.key"] == nil || rows["inspection-32769.key"] == nil {
			t.Errorf("stored rows %v (%v)", keys(rows), err)
		}
		if entries, _ := os.ReadDir(s.DataDir); len(entries) != 0 {
			t.Errorf("database mode wrote files: %v", entries)
		}
		// A payload signed by one instance verifies on another.
		kr1, _, _, _ := LoadInspection(ctx, s, st, time.Now(), true)
		kr2, _, _, _ := LoadInspection(ctx, s, st, time.Now(), false)
		p, _, err := barcode.SignWith(barcode.Claims{TicketID: "t", ProductID: "p", ProductName: "x", ValidFrom: time.Unix(0, 0), ValidUntil: time.Unix(60, 0),
			Environment: barcode.EnvLive}, kr1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := barcode.Verify(p, kr2); err != nil {
			t.Error(err)
		}
		// Secrets are never overwritten.
		var ins bool
		_ = st.Write(ctx, func(q store.Q) (err error) {
			ins, err = q.InsertServiceSecret(ctx, "inspection-1.key", []byte("other"), time.Now())
			return err
		})
		if again, _ := st.Read().ServiceSecrets(ctx, "inspection-1"); ins || string(again["inspection-1.key"]) != string(rows["inspection-1.key"]) {
			t.Error("an existing secret was replaced")
		}
	})
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestInspectionConfigured(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	kr, _, err := barcode.LoadOrCreateDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, src, created, err := LoadInspection(ctx, Settings{InspectionKeys: dir, Embedded: true, DataDir: t.TempDir()}, nil, time.Now(), true)
	if err != nil || src != SourceConfigured || created || publicKeys(t, got) != publicKeys(t, kr) {
		t.Fatalf("directory: %v %s %v", err, src, created)
	}
	// A list of files, one of them a retired key that only verifies.
	retired, _ := barcode.GenerateKey(7, nil)
	pubDir := t.TempDir()
	der, err := x509.MarshalPKIXPublicKey(retired.Public)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pubDir, "inspection-7.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "inspection-1.key") + ", " + filepath.Join(pubDir, "inspection-7.pub")
	got, _, _, err = LoadInspection(ctx, Settings{InspectionKeys: list}, nil, time.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	if ids := got.IDs(); len(ids) != 2 || ids[0] != 1 || ids[1] != 7 {
		t.Errorf("ids %v", ids)
	}
	if k, _ := got.Active(); k.ID != 1 {
		t.Errorf("active %d", k.ID)
	}
	for _, bad := range []string{filepath.Join(pubDir, "inspection-7.pub"), filepath.Join(dir, "missing.key"), dir + "/nope"} {
		if _, _, _, err := LoadInspection(ctx, Settings{InspectionKeys: bad}, nil, time.Now(), true); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%s: %v", bad, err)
		}
	}
	renamed := filepath.Join(t.TempDir(), "live.pem")
	b, _ := os.ReadFile(filepath.Join(dir, "inspection-1.key"))
	_ = os.WriteFile(renamed, b, 0o600)
	if _, _, _, err := LoadInspection(ctx, Settings{InspectionKeys: renamed}, nil, time.Now(), true); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("badly named key file: %v", err)
	}
}

func TestLoadApple(t *testing.T) {
	s := Settings{DataDir: t.TempDir()}
	now := time.Now()
	b, created, err := LoadApple(s, now)
	if err != nil || !created || !b.Development() || b.Installable() {
		t.Fatalf("development: %v created=%v", err, created)
	}
	if _, created, err = LoadApple(s, now); err != nil || created {
		t.Errorf("second start regenerated: %v", err)
	}
	// Configured files (shaped like Apple's): installable, ids from the certificate.
	c, err := apple.GenerateDevelopment("pass.com.example.tickets", "ABCDE12345", now)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		_ = os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
		return p
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(c.Key)
	cfg := Settings{ApplePassCert: write("pass.pem", "CERTIFICATE", c.Certificate.Raw), ApplePassKey: write("pass.key", "PRIVATE KEY", keyDER),
		AppleWWDRCert: write("wwdr.pem", "CERTIFICATE", c.WWDR.Raw)}
	b, created, err = LoadApple(cfg, now)
	if err != nil || created || b.Development() || !b.Installable() {
		t.Fatalf("configured: %v", err)
	}
	cfg.AppleTeamID = "ZZZZZ99999"
	if _, _, err := LoadApple(cfg, now); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("team id differing from the certificate OU: %v", err)
	}
	if _, _, err := LoadApple(Settings{ApplePassCert: cfg.ApplePassCert}, now); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("only a certificate: %v", err)
	}
}

func TestLoadGoogle(t *testing.T) {
	s := Settings{DataDir: t.TempDir(), GoogleOrigins: []string{"https://shop.example.com"}}
	i, created, err := LoadGoogle(s)
	if err != nil || !created || !i.Development() || i.ClassID() != DevIssuerID+".farebox_ticket" {
		t.Fatalf("development: %v created=%v", err, created)
	}
	raw, err := google.GenerateDevServiceAccount()
	if err != nil {
		t.Fatal(err)
	}
	p := testtool.WriteFile(t, t.TempDir(), "sa.json", googletest.PartnerAccount(t, raw, "wallet@partner.iam.gserviceaccount.com", ""))
	if _, _, err := LoadGoogle(Settings{GoogleServiceAccount: p}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("service account without issuer id: %v", err)
	}
	i, created, err = LoadGoogle(Settings{GoogleServiceAccount: p, GoogleIssuerID: "3388000000012345678"})
	if err != nil || created || i.Development() || i.ClassID() != "3388000000012345678.farebox_ticket" {
		t.Errorf("configured: %v", err)
	}
	if _, _, err := LoadGoogle(Settings{GoogleServiceAccount: p, GoogleIssuerID: "abc"}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("non-numeric issuer id: %v", err)
	}
}

func TestKeyFileName(t *testing.T) {
	for name, want := range map[string]int{"inspection-1.key": 1, "inspection-32769.pub": 32769, "inspection-01.key": -1,
		"inspection-.key": -1, "inspection-70000.key": -1, "inspection-1.pem": -1, "x-1.key": -1, "inspection-0.key": 0} {
		id, ok := keyFileName(name)
		if (want < 0) == ok || (ok && int(id) != want) {
			t.Errorf("%s: %d %v, want %d", name, id, ok, want)
		}
	}
}

// FuzzKeyFileName: every accepted name is canonical (it re-formats to
// itself) and every key id's file names are accepted.
func FuzzKeyFileName(f *testing.F) {
	for _, s := range []string{"inspection-1.key", "inspection-32769.pub", "inspection-01.key", "inspection-65536.key", "inspection-.pub", "x"} {
		f.Add(s, uint16(len(s)))
	}
	f.Fuzz(func(t *testing.T, name string, id uint16) {
		if got, ok := keyFileName(name); ok {
			suffix := name[len(name)-4:]
			if want := "inspection-" + strconv.Itoa(int(got)) + suffix; want != name {
				t.Errorf("%q accepted as id %d (canonical %q)", name, got, want)
			}
		}
		for _, k := range []barcode.Key{{ID: id}, {ID: id, Private: make([]byte, 64)}} {
			if got, ok := keyFileName(barcode.KeyFileName(k)); !ok || got != id {
				t.Errorf("%s: %d %v", barcode.KeyFileName(k), got, ok)
			}
		}
	})
}

// TestKeyStoreChanges: rotation and removal in each key store; a
// configured file list refuses (the operator edits it), and concurrent
// database rotations never hand out one id twice.
func TestKeyStoreChanges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, _, err := barcode.LoadOrCreateDir(dir, nil); err != nil {
		t.Fatal(err)
	}
	s := Settings{InspectionKeys: dir}
	k, err := RotateInspection(ctx, s, nil, barcode.EnvLive, time.Now(), time.Time{})
	if err != nil || k.ID != 2 {
		t.Fatalf("rotate dir: %v %v", k.ID, err)
	}
	if removed, err := RemoveInspectionKey(ctx, s, nil, 1); err != nil || !removed {
		t.Fatalf("remove: %v %v", removed, err)
	}
	if removed, err := RemoveInspectionKey(ctx, s, nil, 1); err != nil || removed {
		t.Fatalf("remove again: %v %v", removed, err)
	}
	kr, _, _, err := LoadInspection(ctx, s, nil, time.Now(), false)
	if _, has := kr.Lookup(1); err != nil || has {
		t.Errorf("key 1 still loads: %v", err)
	}
	list := Settings{InspectionKeys: filepath.Join(dir, "inspection-2.key")}
	if _, err := RotateInspection(ctx, list, nil, barcode.EnvLive, time.Now(), time.Time{}); apperr.As(err) == nil || apperr.As(err).Code != CodeInvalidConfiguration {
		t.Errorf("rotate a file list: %v", err)
	}
	if _, err := RemoveInspectionKey(ctx, list, nil, 2); apperr.As(err) == nil || apperr.As(err).Code != CodeInvalidConfiguration {
		t.Errorf("remove from a file list: %v", err)
	}
	if _, err := RotateInspection(ctx, s, nil, "staging", time.Now(), time.Time{}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("rotate staging: %v", err)
	}
	for _, engine := range storetest.AllEngines {
		t.Run(string(engine), func(t *testing.T) {
			st := storetest.Open(t, engine)
			db := Settings{DataDir: t.TempDir()}
			if _, _, _, err := LoadInspection(ctx, db, st, time.Now(), true); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			ids := make(chan uint16, 4)
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if k, err := RotateInspection(ctx, db, st, barcode.EnvLive, time.Now(), time.Time{}); err == nil {
						ids <- k.ID
					} else if apperr.As(err) == nil || apperr.As(err).Code != CodeConcurrentRotation {
						t.Errorf("concurrent rotation: %v", err)
					}
				}()
			}
			wg.Wait()
			close(ids)
			seen := map[uint16]bool{}
			for id := range ids {
				if seen[id] {
					t.Errorf("key id %d handed out twice", id)
				}
				seen[id] = true
			}
			kr, _, _, err := LoadInspection(ctx, db, st, time.Now(), false)
			if err != nil || len(kr.IDs()) != 2+len(seen) || len(seen) == 0 {
				t.Errorf("after rotations: %v %v", kr.IDs(), err)
			}
			top := kr.IDs()[len(kr.IDs())-2] // the highest live id, below the test key
			if removed, err := RemoveInspectionKey(ctx, db, st, top); err != nil || !removed {
				t.Errorf("remove from the database: %v %v", removed, err)
			}
		})
	}
}

func TestLoadGoogleAPI(t *testing.T) {
	raw, _ := google.GenerateDevServiceAccount()
	file := testtool.WriteFile(t, t.TempDir(), "sa.json", googletest.PartnerAccount(t, raw, "", ""))
	s := Settings{DataDir: t.TempDir(), GoogleServiceAccount: file, GoogleIssuerID: "1", GoogleWalletAPI: true}
	i, _, err := LoadGoogle(s)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := LoadGoogleAPI(s, i); c == nil || err != nil {
		t.Errorf("configured: %v %v", c, err)
	}
	s.GoogleAPIURL = "walletobjects"
	if _, err := LoadGoogleAPI(s, i); apperr.As(err) == nil || apperr.As(err).Code != CodeInvalidConfiguration {
		t.Errorf("bad URL: %v", err)
	}
	s.GoogleAPIURL, s.GoogleWalletAPI = "", false
	if c, err := LoadGoogleAPI(s, i); c != nil || err != nil {
		t.Errorf("API off: %v %v", c, err)
	}
	dev := Settings{DataDir: t.TempDir(), GoogleWalletAPI: true}
	di, _, _ := LoadGoogle(dev)
	if c, err := LoadGoogleAPI(dev, di); c != nil || err != nil {
		t.Errorf("development account: %v %v", c, err)
	}
}
