package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/dynamic"
	"github.com/farebox/farebox/internal/barcode/uic"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/blocklist"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/credentials"
	"github.com/farebox/farebox/internal/store"
)

// errNotAcceptable is the exit status of an inspection that must not pass.
var errNotAcceptable = errors.New("inspect: the ticket is not acceptable")

const inspectUsage = `Usage: farebox inspect [flags] [FILE|-]

Reads an inspection barcode (an image of the Aztec code, the binary payload,
or its base64/Latin-1 text) from FILE or standard input, verifies it against
the service's inspection keys and prints whether it is genuine, whose it is
and whether it is valid now. Exits 0 only for a genuine ticket valid now
(and live, unless --allow-test).

With --post URL (the service's /v1/inspection/records.json) and
--inspector-token (env FAREBOX_INSPECTOR_TOKEN, made by farebox inspectors
add), the verdict is posted as an inspection record (docs/records.md),
with --stop-id and --position LAT,LON when given.

With --revocations FILE|URL (a saved /v1/inspection/revocations.json, or
its URL), verified with the same keys, a revoked ticket is rejected and the
reason printed.

UIC 918.3 barcodes (products with barcode_profile uic-918-3-uflex) are
verified with --uic-keys RICS:KEYID:FILE[,...] (the UIC-published X.509
certificate or public key of each signer), the configured --uic-issuer and
the development key in the data dir.

VDV-KA static barcodes (vdv-ka-static) are verified along their chain:
the CA named by the barcode must be one of --vdv-ca (CV certificates
signed by --vdv-root), or the data dir's development PKI; the
organisation's certificate must verify under it, and neither may have
expired.

Dynamic barcodes (products with inspection_profile dynamic: the code the
rendering engine renews every window, signed by the phone the ticket is
bound to) pass only while their time window is current: a screenshot, a
recording or the code of another phone is refused as "COPIED" with the
reason. --window-tolerance is the clock difference between the phone and
this device accepted on each side of the window. The rotating code of a
dynamic ticket's Google Wallet pass (text "FR1.…") is checked the same way
with the TOTP key derived from the service's rotating-barcode secret:
--rotating-secret FILE (the hex of farebox keys rotating-secret), else the
database's.

With --blocklist FILE|URL (a saved /v1/inspection/blocklist.json, or its
URL), verified with the same keys, the dynamic code of a phone the ticket
moved away from is rejected as "replaced".

Keys (for farebox payloads and the revocation feed; a UIC or VDV barcode
alone needs none): --keys keys.json (the body of GET /v1/inspection/keys.json), else
--inspection-keys, else the keys the service generated (data dir in
embedded mode, the database on PostgreSQL).

Flags:
`

// inspectCmd is `farebox inspect`.
func inspectCmd(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, db := newCommand("inspect", getenv, stderr)
	keysFile := fs.String("keys", "", "keys.json file with the published public keys")
	keysCfg := fs.String("inspection-keys", getenv("FAREBOX_INSPECTION_KEYS"), "key directory or comma-separated key files (env FAREBOX_INSPECTION_KEYS)")
	allowTest := fs.Bool("allow-test", false, "accept test-environment tickets (inspection in the test environment)")
	at := fs.String("at", "", "judge validity at this RFC 3339 time instead of now")
	revocationsSrc := fs.String("revocations", "", "revocation feed (a saved /v1/inspection/revocations.json or its URL): reject revoked tickets")
	uicKeys := fs.String("uic-keys", "", "UIC 918.3 signers' public keys: RICS:KEYID:FILE[,...] (X.509 certificate or public key, PEM or DER)")
	uicIssuer := fs.String("uic-issuer", getenv("FAREBOX_UIC_ISSUER"), "the service's UIC signer RICS:KEYID:KEYFILE (env FAREBOX_UIC_ISSUER)")
	vdvRoot := fs.String("vdv-root", getenv("FAREBOX_VDV_ROOT"), "the VDV root CV certificate (env FAREBOX_VDV_ROOT)")
	tolerance := fs.Duration("window-tolerance", dynamic.DefaultTolerance, "dynamic barcodes: clock difference accepted on each side of the time window (0s: none)")
	vdvCAs := fs.String("vdv-ca", getenv("FAREBOX_VDV_CA"), "comma-separated VDV CA CV certificates signed by the root (env FAREBOX_VDV_CA)")
	rotatingFile := fs.String("rotating-secret", getenv("FAREBOX_ROTATING_SECRET"), "file with the hex rotating-barcode secret (farebox keys rotating-secret) for Google Wallet rotating codes; default: the database's (env FAREBOX_ROTATING_SECRET)")
	blocklistSrc := fs.String("blocklist", "", "blocklist (a saved /v1/inspection/blocklist.json or its URL): reject the codes of phones a ticket moved away from")
	post := postFlags(fs, getenv)
	fs.Usage = func() { fmt.Fprint(stderr, inspectUsage); fs.PrintDefaults() }
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		fs.Usage()
		return errUsage
	}
	now := time.Now()
	if *at != "" {
		if now, err = clock.ParseTimestamp(*at); err != nil {
			return fmt.Errorf("--at: %q is not an RFC 3339 time", *at)
		}
	}
	var data []byte
	if len(pos) == 0 || pos[0] == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, 64<<20))
	} else {
		data, err = os.ReadFile(pos[0])
	}
	if err != nil {
		return err
	}
	payload, err := barcode.ParseInput(data)
	if err != nil {
		fmt.Fprintln(stdout, "NOT GENUINE: the input is no inspection barcode:", err)
		return errNotAcceptable
	}
	if *tolerance < 0 {
		return fmt.Errorf("--window-tolerance must not be negative")
	}
	// farebox's keys verify farebox payloads and the revocation feed; a UIC
	// or VDV barcode alone is checked without them.
	var kr *barcode.Keyring
	if *revocationsSrc != "" || *blocklistSrc != "" || (!uic.IsContainer(payload) && !vdv.IsBarcode(payload)) {
		if kr, err = inspectKeyring(ctx, *db, *keysFile, *keysCfg); err != nil {
			return err
		}
	}
	revoked, bl, err := inspectLists(ctx, *revocationsSrc, *blocklistSrc, kr)
	if err != nil {
		return err
	}
	tol := *tolerance
	if tol == 0 {
		tol = -1 // dynamic.Options: none
	}
	var rep barcode.Report
	if uic.IsContainer(payload) {
		trust, err := uicTrust(*uicKeys, *uicIssuer, db.dataDir)
		if err != nil {
			return err
		}
		rep = uic.Inspect(payload, trust, now)
	} else if vdv.IsBarcode(payload) {
		trust, _, _, err := vdvTrust(*vdvRoot, *vdvCAs, db.dataDir, false, now)
		if err != nil {
			return err
		}
		rep = vdv.Inspect(payload, trust, now)
	} else if barcode.IsDynamic(payload) {
		rep = dynamic.Inspect(payload, kr, now, dynamic.Options{Tolerance: tol})
		bl.CheckMoved(&rep)
	} else if barcode.IsRotating(payload) {
		secret, err := rotatingSecret(ctx, *db, *rotatingFile)
		if err != nil {
			return err
		}
		rep = dynamic.InspectRotating(payload, kr, secret, now, dynamic.Options{Tolerance: tol})
	} else {
		rep = barcode.Inspect(payload, kr, now)
	}
	revoked.Check(&rep)
	fmt.Fprint(stdout, rep.String())
	if err := post.send(ctx, rep, payload, *allowTest, now, stdout); err != nil {
		return err
	}
	if !rep.Acceptable(*allowTest) {
		switch {
		case rep.Revoked != nil && rep.Revoked.Kid != "":
			fmt.Fprintln(stdout, "REJECTED: signed with revoked inspection key "+rep.Revoked.Kid+": "+rep.Revoked.Reason+
				" (the traveller's ticket has a new barcode: reload it)")
		case rep.Revoked != nil:
			fmt.Fprintln(stdout, "REJECTED: the ticket was revoked: "+rep.Revoked.Reason)
		case rep.Replaced != "":
			fmt.Fprintln(stdout, "REJECTED: "+rep.Replaced)
		case rep.Copied != "":
			fmt.Fprintln(stdout, "REJECTED: "+rep.Copied)
		case rep.Genuine && rep.Test && !*allowTest:
			fmt.Fprintln(stdout, "REJECTED: a test ticket (use --allow-test in the test environment)")
		}
		return errNotAcceptable
	}
	fmt.Fprintln(stdout, "ACCEPTED")
	return nil
}

// uicTrust collects the UIC keys inspection accepts: --uic-keys, the
// configured issuer and the data dir's development key (never generated here).
func uicTrust(keys, issuer, dataDir string) (*uic.Trust, error) {
	var t uic.Trust
	for _, spec := range strings.Split(keys, ",") {
		if spec = strings.TrimSpace(spec); spec == "" {
			continue
		}
		parts := strings.SplitN(spec, ":", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("--uic-keys: %q is not RICS:KEYID:FILE", spec)
		}
		rics, err1 := strconv.Atoi(parts[0])
		kid, err2 := strconv.Atoi(parts[1])
		b, err3 := os.ReadFile(parts[2])
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("--uic-keys: %q: want numeric RICS and KEYID and a readable file", spec)
		}
		pub, err := uic.ParsePublicKey(b)
		if err != nil {
			return nil, fmt.Errorf("--uic-keys %s: %w", parts[2], err)
		}
		t.Add(rics, kid, pub, false)
	}
	if issuer != "" {
		iss, err := uic.LoadIssuer(issuer, "")
		if err != nil {
			return nil, fmt.Errorf("--uic-issuer: %w", err)
		}
		t.TrustIssuer(iss)
	}
	if b, err := os.ReadFile(filepath.Join(uicDevDir(dataDir), uic.DevIssuerFile)); err == nil {
		k, _, err := uic.ParseKeyPEM(b)
		if err != nil {
			return nil, fmt.Errorf("development UIC key: %w", err)
		}
		t.Add(uic.DevRICS, uic.DevKeyID, &k.PublicKey, true)
	}
	return &t, nil
}

func inspectKeyring(ctx context.Context, db dbFlags, keysFile, keysCfg string) (*barcode.Keyring, error) {
	if keysFile != "" {
		b, err := os.ReadFile(keysFile)
		if err != nil {
			return nil, err
		}
		return barcode.ParseKeySet(b)
	}
	s := credentials.Settings{DataDir: db.dataDir, InspectionKeys: keysCfg,
		Embedded: db.url == "" || strings.HasPrefix(db.url, "sqlite:")}
	var st *store.Store
	if keysCfg == "" && !s.Embedded {
		var err error
		if st, err = db.openStore(ctx); err != nil {
			return nil, err
		}
		defer st.Close()
	}
	kr, _, _, err := credentials.LoadInspection(ctx, s, st, time.Now(), false)
	if err != nil {
		return nil, fmt.Errorf("inspection keys: %w (pass --keys keys.json from /v1/inspection/keys.json)", err)
	}
	return kr, nil
}

// inspectLists reads and verifies the revocation feed and the blocklist
// when given (nil when not).
func inspectLists(ctx context.Context, revocationsSrc, blocklistSrc string, kr *barcode.Keyring) (*barcode.Revocations, *blocklist.List, error) {
	var revoked *barcode.Revocations
	if revocationsSrc != "" {
		data, err := readSource(ctx, revocationsSrc)
		if err != nil {
			return nil, nil, fmt.Errorf("--revocations: %w", err)
		}
		if revoked, err = barcode.VerifyFeed(data, kr); err != nil {
			return nil, nil, fmt.Errorf("--revocations %s: %w", revocationsSrc, err)
		}
	}
	var bl *blocklist.List
	if blocklistSrc != "" {
		data, err := readSource(ctx, blocklistSrc)
		if err != nil {
			return nil, nil, fmt.Errorf("--blocklist: %w", err)
		}
		if bl, err = blocklist.Parse(data, kr); err != nil {
			return nil, nil, fmt.Errorf("--blocklist %s: %w", blocklistSrc, err)
		}
	}
	return revoked, bl, nil
}

// rotatingSecret is the rotating-barcode secret: the hex in file, else
// the database's (nil when neither has one: the code cannot be checked).
func rotatingSecret(ctx context.Context, db dbFlags, file string) ([]byte, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--rotating-secret: %w", err)
		}
		s, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(s) < dynamic.MinSecretLen {
			return nil, fmt.Errorf("--rotating-secret %s: want the hex of at least %d bytes (farebox keys rotating-secret)", file, dynamic.MinSecretLen)
		}
		return s, nil
	}
	st, err := db.openStore(ctx)
	if err != nil {
		return nil, nil // no database here: the code is refused as unchecked
	}
	defer st.Close()
	return credentials.LoadRotatingSecret(ctx, st, false)
}

// readSource reads a file, or fetches an http(s) URL (at most 64 MiB, one minute).
func readSource(ctx context.Context, src string) ([]byte, error) {
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		return os.ReadFile(src)
	}
	return fetchBounded(ctx, src, 64<<20)
}
