package main

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode/uic"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/credentials"
	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/wallet/google"
)

// devKeysOnce generates the development UIC issuer, VDV PKI, Google
// service account and Apple pass credentials (credentials.DevPassTypeID,
// DevTeamID: what serve makes without Apple settings) once per test
// process, into a data directory's keys/ layout. Every serve on a fresh
// data directory would generate them again (DSA parameters and RSA keys:
// more than half of this package's CPU, the Apple ones alone a sixth), so
// the data directories of sqliteEnv, pgEnv and engineEnv start with a copy,
// as an operator's data directory keeps them across restarts. The tests of
// the generation itself live with the loaders (uic, vdv, google) and in
// the tests here that make their own data directory.
var devKeysOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "farebox-devkeys-")
	if err != nil {
		return "", err
	}
	if _, _, err := uic.LoadOrCreateDevIssuer(uicDevDir(dir)); err != nil {
		return "", err
	}
	if _, _, err := vdv.LoadOrCreateDevPKI(vdvDevDir(dir), &vdv.Trust{}, time.Now()); err != nil {
		return "", err
	}
	walletDev := credentials.Settings{DataDir: dir}.WalletDevDir()
	if _, _, err := google.LoadOrCreateDevServiceAccount(walletDev); err != nil {
		return "", err
	}
	if _, _, err := apple.LoadOrCreateDevelopment(walletDev, credentials.DevPassTypeID, credentials.DevTeamID, time.Now()); err != nil {
		return "", err
	}
	return dir, nil
})

// seedDevKeys copies the development keys into dataDir/keys.
func seedDevKeys(t *testing.T, dataDir string) {
	t.Helper()
	src, err := devKeysOnce()
	if err != nil {
		t.Fatalf("development keys: %v", err)
	}
	if err := os.CopyFS(dataDir, os.DirFS(src)); err != nil {
		t.Fatalf("copy development keys: %v", err)
	}
}
