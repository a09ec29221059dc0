package credentials

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/wallet"
	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/wallet/google"
)

// Settings are the configured sources; empty fields mean "not configured".
type Settings struct {
	DataDir  string
	Embedded bool // embedded SQLite (generated keys go to the data dir)

	// InspectionKeys is a key directory, a comma-separated list of key
	// files named inspection-<kid>.key (PKCS#8 PEM) or inspection-<kid>.pub,
	// or the `pkcs11:` URI of a token that keeps them (tokenkeys.go).
	InspectionKeys string

	ApplePassCert   string // PEM file of the Pass Type ID certificate
	ApplePassKey    string // PEM file of its private key
	AppleWWDRCert   string // PEM file of the Apple WWDR (G4) intermediate
	ApplePassTypeID string // default: the certificate's UID
	AppleTeamID     string // default: the certificate's OU

	GoogleServiceAccount string // path of the service-account JSON key file
	GoogleIssuerID       string
	GoogleIssuerName     string
	// Brand names, colours and images of the passes (wallet.LoadBrand);
	// the zero Brand is the development brand.
	Brand         wallet.Brand
	GoogleOrigins []string
	GoogleLogoURL string
	// GoogleWalletAPI uses the Google Wallet REST API at GoogleAPIURL
	// (token exchange at GoogleTokenURL, default the key file's token_uri)
	// with the configured service account.
	GoogleWalletAPI bool
	GoogleAPIURL    string
	GoogleTokenURL  string
	// GoogleRotatingSecret derives the TOTP keys of dynamic tickets'
	// rotating barcodes (LoadRotatingSecret).
	GoogleRotatingSecret []byte
}

// RotatingSecretName is the service secret (service_secrets, both
// engines) from which the TOTP key of each dynamic ticket's Google Wallet
// rotating barcode is derived (dynamic.TicketKey). Inspection devices need
// it to check those codes: `farebox keys rotating-secret` prints it.
const RotatingSecretName = "wallet-rotating-secret"

// LoadRotatingSecret returns the rotating-barcode secret of the service,
// generating it on first use when create is set (every instance reads the
// first one stored). Without create a missing secret is nil.
func LoadRotatingSecret(ctx context.Context, st *store.Store, create bool) ([]byte, error) {
	const op = "credentials.LoadRotatingSecret"
	var v string
	if !create {
		m, err := st.Read().ServiceSecrets(ctx, RotatingSecretName)
		if err != nil {
			return nil, err
		}
		v = string(m[RotatingSecretName])
	} else {
		fresh := make([]byte, 32)
		if _, err := rand.Read(fresh); err != nil {
			return nil, apperr.Wrap(op, err)
		}
		err := st.Write(ctx, func(q store.Q) (err error) {
			v, err = q.EnsureSecret(ctx, RotatingSecretName, hex.EncodeToString(fresh), time.Now())
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if v == "" {
		return nil, nil
	}
	b, err := hex.DecodeString(strings.TrimSpace(v))
	if err != nil {
		return nil, configErr(op, "the stored rotating-barcode secret is not hex")
	}
	return b, nil
}

// Development identities used when nothing is configured.
const (
	DevPassTypeID = "pass.org.farebox.development"
	DevTeamID     = "FAREBOXDEV"
	// DevIssuerID is the Google issuer id of development links (not a real issuer).
	DevIssuerID = "3388000000000000000"
)

// Where inspection keys came from (for the startup log).
const (
	SourceConfigured = "configured"
	SourceDataDir    = "data dir"
	SourceDatabase   = "database"
	SourceToken      = "token"
)

// InspectionDir is where embedded mode keeps generated inspection keys.
func (s Settings) InspectionDir() string { return filepath.Join(s.DataDir, "keys", "inspection") }

// WalletDevDir is where development wallet credentials are generated.
func (s Settings) WalletDevDir() string { return filepath.Join(s.DataDir, "keys", "wallet-dev") }

func configErr(op, msg string) error {
	return apperr.E(op, apperr.Invalid, CodeInvalidConfiguration, msg)
}

// LoadInspection returns the inspection keyring: configured keys, else the
// generated ones (data dir in embedded mode, the database on PostgreSQL).
// With create false nothing is generated (for `farebox inspect`), and a
// missing keyring is an apperr NotFound. created reports a generation.
func LoadInspection(ctx context.Context, s Settings, st *store.Store, now time.Time, create bool) (kr *barcode.Keyring, source string, created bool, err error) {
	const op = "credentials.LoadInspection"
	if s.tokenKeys() {
		kr, created, err = loadTokenInspection(s.InspectionKeys, now, create)
		return kr, SourceToken, created, err
	}
	if s.InspectionKeys != "" {
		kr, err = loadConfiguredKeys(s.InspectionKeys, now)
		return kr, SourceConfigured, false, err
	}
	if s.Embedded {
		if !create {
			kr, err = barcode.LoadDirAt(s.InspectionDir(), now)
			return kr, SourceDataDir, false, err
		}
		kr, created, err = barcode.LoadOrCreateDir(s.InspectionDir(), nil)
		return kr, SourceDataDir, created, err
	}
	if st == nil {
		return nil, SourceDatabase, false, apperr.E(op, apperr.Internal, CodeNoStore, "the database is needed to load inspection keys")
	}
	kr, created, err = loadDatabaseKeys(ctx, st, now, create)
	return kr, SourceDatabase, created, err
}

func loadConfiguredKeys(spec string, now time.Time) (*barcode.Keyring, error) {
	const op = "credentials.InspectionKeys"
	if fi, err := os.Stat(spec); err == nil && fi.IsDir() {
		kr, err := barcode.LoadDirAt(spec, now)
		if err != nil {
			return nil, configErr(op, "--inspection-keys "+spec+": "+err.Error())
		}
		return kr, nil
	}
	files := map[string][]byte{}
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, configErr(op, "--inspection-keys: "+err.Error())
		}
		name := filepath.Base(p)
		if _, ok := keyFileName(name); !ok {
			return nil, configErr(op, "--inspection-keys: "+name+" is not named inspection-<kid>.key or inspection-<kid>.pub")
		}
		files[name] = data
	}
	kr, err := barcode.LoadFilesAt(files, now)
	if err != nil {
		return nil, configErr(op, "--inspection-keys: "+err.Error())
	}
	return kr, nil
}

// keyFileName parses "inspection-<kid>.key|.pub".
func keyFileName(name string) (id uint16, ok bool) {
	rest, found := strings.CutPrefix(name, "inspection-")
	if !found {
		return 0, false
	}
	num, found := strings.CutSuffix(rest, ".key")
	if !found {
		if num, found = strings.CutSuffix(rest, ".pub"); !found {
			return 0, false
		}
	}
	var n int
	for _, c := range num {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
		if n > 0xffff {
			return 0, false
		}
	}
	return uint16(n), num != "" && (num == "0" || num[0] != '0')
}

// loadDatabaseKeys reads the service_secrets rows named inspection-*, and
// (create) inserts a live and a test signing key when either is missing.
// Concurrent starts converge: an insert of an existing name does nothing
// and every instance re-reads what won.
func loadDatabaseKeys(ctx context.Context, st *store.Store, now time.Time, create bool) (*barcode.Keyring, bool, error) {
	read := func() (map[string][]byte, *barcode.Keyring, error) {
		files, err := st.Read().ServiceSecrets(ctx, "inspection-")
		if err != nil {
			return nil, nil, err
		}
		kr, err := barcode.LoadFilesAt(files, now)
		if err != nil && apperr.KindOf(err) != apperr.NotFound {
			return nil, nil, err
		}
		return files, kr, nil
	}
	files, kr, err := read()
	if err != nil {
		return nil, false, err
	}
	if !create {
		if kr == nil {
			return nil, false, apperr.E("credentials.LoadInspection", apperr.NotFound, CodeInspectionKeyNotFound, "the database holds no inspection signing key")
		}
		return kr, false, nil
	}
	var missing []string
	if kr == nil {
		missing = append(missing, barcode.EnvLive)
	}
	if kr == nil || !hasTestSigner(kr) {
		missing = append(missing, barcode.EnvTest)
	}
	if len(missing) == 0 {
		return kr, false, nil
	}
	created := false
	for _, env := range missing {
		k, err := barcode.GenerateKey(nextKeyID(files, env), nil)
		if err != nil {
			return nil, false, err
		}
		pem, err := barcode.MarshalPrivatePEM(k)
		if err != nil {
			return nil, false, err
		}
		err = st.Write(ctx, func(q store.Q) error {
			ins, err := q.InsertServiceSecret(ctx, barcode.KeyFileName(k), pem, now)
			created = created || ins
			return err
		})
		if err != nil {
			return nil, false, err
		}
	}
	_, kr, err = read()
	if err == nil && kr == nil {
		err = apperr.E("credentials.LoadInspection", apperr.Internal, CodeInspectionKeyNotFound, "inspection keys were inserted but cannot be read back")
	}
	return kr, created && err == nil, err
}

func hasTestSigner(kr *barcode.Keyring) bool {
	k, ok := kr.ActiveFor(barcode.EnvTest)
	return ok && k.Environment() == barcode.EnvTest
}

// nextKeyID is the id after the highest stored id of env's range (1 and
// TestKeyIDBase+1 on an empty table, so every instance picks the same).
func nextKeyID(files map[string][]byte, env string) uint16 {
	lo, hi := uint16(1), uint16(barcode.TestKeyIDBase-1)
	if env == barcode.EnvTest {
		lo, hi = barcode.TestKeyIDBase+1, 0xffff
	}
	next := lo
	for name := range files {
		if id, ok := keyFileName(name); ok && id >= next && id < hi {
			next = id + 1
		}
	}
	return next
}

// LoadApple returns the pass builder: configured Apple credentials, or
// development credentials generated into WalletDevDir (created reports a
// generation). Configuring only some of the three files is an error.
func LoadApple(s Settings, now time.Time) (b *apple.Builder, created bool, err error) {
	const op = "credentials.LoadApple"
	n := 0
	for _, f := range []string{s.ApplePassCert, s.ApplePassKey, s.AppleWWDRCert} {
		if f != "" {
			n++
		}
	}
	var c apple.Credentials
	passType, team := s.ApplePassTypeID, s.AppleTeamID
	switch n {
	case 3:
		if c, err = apple.LoadCredentialFiles(s.ApplePassCert, s.ApplePassKey, s.AppleWWDRCert); err != nil {
			return nil, false, configErr(op, err.Error())
		}
		if passType == "" {
			passType = c.PassTypeID()
		}
		if team == "" {
			team = c.TeamID()
		}
	case 0:
		if passType == "" {
			passType = DevPassTypeID
		}
		if team == "" {
			team = DevTeamID
		}
		if c, created, err = apple.LoadOrCreateDevelopment(s.WalletDevDir(), passType, team, now); err != nil {
			return nil, false, err
		}
	default:
		return nil, false, configErr(op, "Apple Wallet needs all of --apple-pass-cert, --apple-pass-key and --apple-wwdr-cert (or none for development passes)")
	}
	b, err = apple.NewBuilder(apple.Config{PassTypeID: passType, TeamID: team, Credentials: c, Brand: s.Brand})
	if err != nil {
		return nil, false, configErr(op, err.Error())
	}
	return b, created, nil
}

// LoadGoogleAPI returns the Google Wallet REST API client of the
// configured service account, or nil when the API is off or the service
// account is a development one (Google would refuse it).
func LoadGoogleAPI(s Settings, i *google.Issuer) (*google.Client, error) {
	if !s.GoogleWalletAPI || s.GoogleServiceAccount == "" || i == nil || i.Development() {
		return nil, nil
	}
	c, err := google.NewClient(google.ClientConfig{APIURL: s.GoogleAPIURL, TokenURL: s.GoogleTokenURL, Account: i.Account()})
	if err != nil {
		return nil, configErr("credentials.LoadGoogleAPI", err.Error())
	}
	return c, nil
}

// LoadGoogle returns the save-link issuer: the configured service account
// and issuer id, or a development service account generated into
// WalletDevDir (created reports a generation).
func LoadGoogle(s Settings) (i *google.Issuer, created bool, err error) {
	const op = "credentials.LoadGoogle"
	var sa *google.ServiceAccount
	issuer := s.GoogleIssuerID
	if s.GoogleServiceAccount != "" {
		data, err := os.ReadFile(s.GoogleServiceAccount)
		if err != nil {
			return nil, false, configErr(op, "--google-service-account: "+err.Error())
		}
		if sa, err = google.ParseServiceAccount(data); err != nil {
			return nil, false, configErr(op, "--google-service-account: "+err.Error())
		}
		if issuer == "" {
			return nil, false, configErr(op, "--google-issuer-id is required with --google-service-account")
		}
	} else {
		if sa, created, err = google.LoadOrCreateDevServiceAccount(s.WalletDevDir()); err != nil {
			return nil, false, err
		}
		if issuer == "" {
			issuer = DevIssuerID
		}
	}
	i, err = google.NewIssuer(google.Config{IssuerID: issuer, IssuerName: s.GoogleIssuerName, Brand: s.Brand, Origins: s.GoogleOrigins,
		LogoURL: s.GoogleLogoURL, Account: sa, RotatingSecret: s.GoogleRotatingSecret})
	if err != nil {
		return nil, false, configErr(op, err.Error())
	}
	return i, created, nil
}

// RotateInspection adds a new signing key for env (barcode.EnvLive or
// EnvTest) to where the inspection keys are kept — the configured
// directory, the data dir in embedded mode, the service_secrets table on
// PostgreSQL — with the next free id of env's range. A configured list of
// key files cannot grow: the operator adds the file and lists it.
//
// The new key signs from the instant from on (zero: at once); until then it
// is published and verifies only (barcode.LoadFilesAt). The instant is
// stored before or with the key, never after it.
func RotateInspection(ctx context.Context, s Settings, st *store.Store, env string, now, from time.Time) (barcode.Key, error) {
	const op = "credentials.RotateInspection"
	if env != barcode.EnvLive && env != barcode.EnvTest {
		return barcode.Key{}, apperr.E(op, apperr.Invalid, barcode.CodeInvalidEnvironment, `environment must be "live" or "test"`)
	}
	if s.tokenKeys() {
		return rotateToken(s.InspectionKeys, env, from)
	}
	if dir, ok := s.keyDir(); ok {
		return barcode.RotateDirFrom(dir, env, from, nil)
	} else if s.InspectionKeys != "" {
		return barcode.Key{}, configErr(op, "--inspection-keys lists key files: create inspection-<kid>.key (next id above the listed ones) in your secret store and add it to the list")
	}
	if st == nil {
		return barcode.Key{}, apperr.E(op, apperr.Internal, CodeNoStore, "the database is needed to rotate inspection keys")
	}
	files, err := st.Read().ServiceSecrets(ctx, "inspection-")
	if err != nil {
		return barcode.Key{}, err
	}
	k, err := barcode.GenerateKey(nextKeyID(files, env), nil)
	if err != nil {
		return barcode.Key{}, err
	}
	pem, err := barcode.MarshalPrivatePEM(k)
	if err != nil {
		return barcode.Key{}, err
	}
	err = st.Write(ctx, func(q store.Q) error {
		if !from.IsZero() {
			if _, err := q.InsertServiceSecret(ctx, barcode.FromFileName(k.ID), []byte(from.UTC().Format(time.RFC3339Nano)), now); err != nil {
				return err
			}
		}
		ins, err := q.InsertServiceSecret(ctx, barcode.KeyFileName(k), pem, now)
		if err == nil && !ins {
			err = apperr.E(op, apperr.Conflict, CodeConcurrentRotation, "another rotation took key id "+k.Kid()+" at the same time; run it again")
		}
		return err
	})
	return k, err
}

// RemoveInspectionKey deletes key kid (its private and public halves) from
// where the inspection keys are kept: a pruned key no ticket needs any
// more, or a revoked one. A configured list of files is left to the
// operator (error). removed is false when no such key was stored.
func RemoveInspectionKey(ctx context.Context, s Settings, st *store.Store, kid uint16) (removed bool, err error) {
	const op = "credentials.RemoveInspectionKey"
	if s.tokenKeys() {
		return removeToken(s.InspectionKeys, kid)
	}
	names := []string{barcode.KeyFileName(barcode.Key{ID: kid, Private: []byte{0}}), barcode.KeyFileName(barcode.Key{ID: kid}), barcode.FromFileName(kid)}
	if dir, ok := s.keyDir(); ok {
		for _, n := range names {
			err := os.Remove(filepath.Join(dir, n))
			switch {
			case err == nil:
				removed = true
			case !errors.Is(err, fs.ErrNotExist):
				return removed, apperr.Wrap(op, err)
			}
		}
		return removed, nil
	} else if s.InspectionKeys != "" {
		return false, configErr(op, "--inspection-keys lists key files: remove inspection-"+strconv.Itoa(int(kid))+".key/.pub from the list and your secret store")
	}
	if st == nil {
		return false, apperr.E(op, apperr.Internal, CodeNoStore, "the database is needed to remove inspection keys")
	}
	err = st.Write(ctx, func(q store.Q) error {
		for _, n := range names {
			del, err := q.DeleteServiceSecret(ctx, n)
			if err != nil {
				return err
			}
			removed = removed || del
		}
		return nil
	})
	return removed, err
}

// keyDir is the directory that holds the inspection keys: the configured
// directory or, in embedded mode without configuration, the data dir's.
// dir is "" and ok false for a configured file list or the database.
func (s Settings) keyDir() (dir string, ok bool) {
	if s.InspectionKeys != "" {
		if fi, err := os.Stat(s.InspectionKeys); err == nil && fi.IsDir() {
			return s.InspectionKeys, true
		}
		return "", false
	}
	if s.Embedded {
		return s.InspectionDir(), true
	}
	return "", false
}
