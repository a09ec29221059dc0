package apple

import (
	"archive/zip"
	"bytes"
	"crypto/sha1"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"sort"
	"time"

	"github.com/smallstep/pkcs7"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/wallet"
)

// ContentType is the media type of a .pkpass response.
const ContentType = "application/vnd.apple.pkpass"

// Config is what the service must be configured with to build passes.
type Config struct {
	PassTypeID  string // "pass.<reverse-dns>", equal to the certificate UID
	TeamID      string // 10 upper-case alphanumerics, equal to the certificate OU
	Credentials Credentials
	// Brand names and colours the pass and gives its icon and logo; the
	// zero Brand is the development brand.
	Brand wallet.Brand
}

// Builder builds signed passes. It is safe for concurrent use.
type Builder struct {
	cfg    Config
	images map[string][]byte // icon and logo files at @1x, @2x, @3x
}

var (
	passTypeRE = regexp.MustCompile(`^pass\.[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$`)
	teamRE     = regexp.MustCompile(`^[A-Z0-9]{10}$`)
)

// NewBuilder checks cfg: id formats, the certificate's UID and OU equal
// PassTypeID and TeamID (Wallet rejects a mismatch), key and chain belong
// together. A builder with development credentials builds passes that
// verify against the development root but do not install on devices.
func NewBuilder(cfg Config) (*Builder, error) {
	const op = "apple.NewBuilder"
	c := cfg.Credentials
	switch {
	case !passTypeRE.MatchString(cfg.PassTypeID):
		return nil, credErr(op, "pass type id must look like pass.com.example.tickets")
	case !teamRE.MatchString(cfg.TeamID):
		return nil, credErr(op, "team id must be 10 upper-case letters or digits")
	case c.Certificate == nil || c.Key == nil || c.WWDR == nil:
		return nil, credErr(op, "certificate, key and WWDR certificate are required")
	case c.PassTypeID() != cfg.PassTypeID:
		return nil, credErr(op, "certificate UID "+c.PassTypeID()+" does not match pass type id "+cfg.PassTypeID)
	case c.TeamID() != cfg.TeamID:
		return nil, credErr(op, "certificate OU "+c.TeamID()+" does not match team id "+cfg.TeamID)
	}
	if err := c.check(op); err != nil {
		return nil, err
	}
	if cfg.Brand.Organization == "" {
		cfg.Brand = wallet.DevelopmentBrand()
	}
	imgs, err := PassImages(cfg.Brand)
	if err != nil {
		return nil, apperr.Wrap(op, err)
	}
	return &Builder{cfg: cfg, images: imgs}, nil
}

// Development reports self-generated credentials: log "passes will not
// install on real devices" and do not advertise apple_wallet to phones.
func (b *Builder) Development() bool { return b.cfg.Credentials.Development }

// Installable reports whether real devices will accept the passes.
func (b *Builder) Installable() bool { return !b.Development() }

// CertificateExpiry is when the pass certificate stops working (monitor it).
func (b *Builder) CertificateExpiry() time.Time { return b.cfg.Credentials.Certificate.NotAfter }

// TeamID is the team identifier of every pass.
func (b *Builder) TeamID() string { return b.cfg.TeamID }

// PassTypeID is the pass type identifier of every pass (the APNs topic).
func (b *Builder) PassTypeID() string { return b.cfg.PassTypeID }

// Updates makes a pass updatable through the Wallet web service: its
// webServiceURL, its authenticationToken (at least 16 characters) and the
// serial number the device knows it by (the ticket id it was first issued
// for; a subscription's pass keeps it while it follows the next cycles).
// The zero Updates builds a static pass whose serial number is the ticket
// id.
type Updates struct {
	WebServiceURL       string
	AuthenticationToken string
	SerialNumber        string
}

// MinAuthenticationToken is Apple's minimum authenticationToken length.
const MinAuthenticationToken = 16

// Files returns every file of the pass except manifest.json and signature.
func (b *Builder) Files(p wallet.Pass) (map[string][]byte, error) {
	return b.FilesWith(p, Updates{})
}

// FilesWith is Files for an updatable pass.
func (b *Builder) FilesWith(p wallet.Pass, u Updates) (map[string][]byte, error) {
	const op = "apple.Files"
	pj := passJSON(p, b.cfg.PassTypeID, b.cfg.TeamID, b.cfg.Brand)
	if (u.WebServiceURL == "") != (u.AuthenticationToken == "") || (u.AuthenticationToken != "" && len(u.AuthenticationToken) < MinAuthenticationToken) {
		return nil, apperr.Wrap(op, errors.New("webServiceURL and an authenticationToken of at least 16 characters come only together"))
	}
	pj.WebServiceURL, pj.AuthenticationToken = u.WebServiceURL, u.AuthenticationToken
	if u.SerialNumber != "" {
		pj.SerialNumber = u.SerialNumber
	}
	pjBytes, err := json.MarshalIndent(pj, "", "  ")
	if err != nil {
		return nil, apperr.Wrap(op, err)
	}
	files := map[string][]byte{
		"pass.json":             pjBytes,
		"en.lproj/pass.strings": StringsFile("en"),
		"de.lproj/pass.strings": StringsFile("de"),
	}
	for name, data := range b.images {
		files[name] = data
	}
	return files, nil
}

// Build returns the signed .pkpass for p: a ZIP of stored entries holding
// the files, manifest.json (SHA-1 of each file) and a detached CMS signature
// of the manifest carrying the WWDR intermediate and a signing time.
func (b *Builder) Build(p wallet.Pass) ([]byte, error) {
	return b.BuildWith(p, Updates{})
}

// BuildWith is Build for an updatable pass.
func (b *Builder) BuildWith(p wallet.Pass, u Updates) ([]byte, error) {
	const op = "apple.Build"
	files, err := b.FilesWith(p, u)
	if err != nil {
		return nil, err
	}
	manifest, err := Manifest(files)
	if err != nil {
		return nil, apperr.Wrap(op, err)
	}
	sig, err := b.Sign(manifest)
	if err != nil {
		return nil, err
	}
	files["manifest.json"] = manifest
	files["signature"] = sig
	return zipStored(files)
}

// Manifest is manifest.json: file name → lower-case hex SHA-1.
func Manifest(files map[string][]byte) ([]byte, error) {
	m := make(map[string]string, len(files))
	for name, data := range files {
		sum := sha1.Sum(data)
		m[name] = hex.EncodeToString(sum[:])
	}
	return json.MarshalIndent(m, "", "  ")
}

// Sign returns the DER detached CMS SignedData over manifest (SHA-256,
// signed attributes with signingTime, certificates: pass and WWDR).
func (b *Builder) Sign(manifest []byte) ([]byte, error) {
	const op = "apple.Sign"
	sd, err := pkcs7.NewSignedData(manifest)
	if err != nil {
		return nil, apperr.Wrap(op, err)
	}
	sd.SetDigestAlgorithm(pkcs7.OIDDigestAlgorithmSHA256)
	c := b.cfg.Credentials
	if err := sd.AddSignerChain(c.Certificate, c.Key, []*x509.Certificate{c.WWDR}, pkcs7.SignerInfoConfig{}); err != nil {
		return nil, apperr.Wrap(op, err)
	}
	sd.Detach()
	der, err := sd.Finish()
	if err != nil {
		return nil, apperr.Wrap(op, err)
	}
	return der, nil
}

// zipStored writes files at the archive root, pass.json first, then by name,
// with stored (uncompressed) entries.
func zipStored(files map[string][]byte) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		if n != "pass.json" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	names = append([]string{"pass.json"}, names...)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
		if err != nil {
			return nil, apperr.Wrap("apple.zip", err)
		}
		if _, err := w.Write(files[n]); err != nil {
			return nil, apperr.Wrap("apple.zip", err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, apperr.Wrap("apple.zip", err)
	}
	return buf.Bytes(), nil
}
