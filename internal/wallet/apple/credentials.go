package apple

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/keyref"
)

// oidUID is the LDAP userId attribute Apple puts the pass type id in.
var oidUID = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}

// Credentials sign passes: the Pass Type ID certificate and its key, and the
// Apple WWDR intermediate embedded in every signature.
type Credentials struct {
	Certificate *x509.Certificate
	Key         crypto.Signer
	WWDR        *x509.Certificate
	// Root is the self-signed development root (nil for Apple credentials);
	// tests and tools verify development passes against it.
	Root *x509.Certificate
	// Development marks self-generated credentials: passes signed with them
	// will not install on real devices.
	Development bool
}

// PassTypeID returns the UID attribute of the certificate subject.
func (c Credentials) PassTypeID() string {
	for _, n := range c.Certificate.Subject.Names {
		if n.Type.Equal(oidUID) {
			if s, ok := n.Value.(string); ok {
				return s
			}
		}
	}
	return ""
}

// TeamID returns the first OU of the certificate subject.
func (c Credentials) TeamID() string {
	if ou := c.Certificate.Subject.OrganizationalUnit; len(ou) > 0 {
		return ou[0]
	}
	return ""
}

func credErr(op, msg string) error {
	return apperr.E(op, apperr.Invalid, CodeInvalidAppleCredentials, msg)
}

// ParseCredentials reads PEM data: the pass certificate, its private key
// (PKCS#8, PKCS#1 or SEC 1) and the WWDR certificate. It checks that the key
// belongs to the certificate and that WWDR issued it.
func ParseCredentials(certPEM, keyPEM, wwdrPEM []byte) (Credentials, error) {
	key, err := keyref.ParsePEM(keyPEM)
	if err != nil {
		return Credentials{}, credErr("apple.ParseCredentials", "pass key: "+err.Error())
	}
	return withKey("apple.ParseCredentials", certPEM, key, wwdrPEM)
}

// withKey are the credentials of the PEM certificates with key.
func withKey(op string, certPEM []byte, key crypto.Signer, wwdrPEM []byte) (Credentials, error) {
	cert, err := parseCert(certPEM)
	if err != nil {
		return Credentials{}, credErr(op, "pass certificate: "+err.Error())
	}
	wwdr, err := parseCert(wwdrPEM)
	if err != nil {
		return Credentials{}, credErr(op, "WWDR certificate: "+err.Error())
	}
	c := Credentials{Certificate: cert, Key: key, WWDR: wwdr}
	return c, c.check(op)
}

// LoadCredentialFiles reads the pass certificate and the WWDR certificate
// from their files and opens the key keyRef: a PEM file or the `pkcs11:`
// URI of the key in a hardware token (keyref), where it signs the passes.
func LoadCredentialFiles(certPath, keyRef, wwdrPath string) (Credentials, error) {
	const op = "apple.LoadCredentialFiles"
	var data [2][]byte
	for i, p := range []string{certPath, wwdrPath} {
		b, err := os.ReadFile(p)
		if err != nil {
			return Credentials{}, credErr(op, err.Error())
		}
		data[i] = b
	}
	if !keyref.IsToken(keyRef) {
		b, err := os.ReadFile(keyRef)
		if err != nil {
			return Credentials{}, credErr(op, err.Error())
		}
		return ParseCredentials(data[0], b, data[1])
	}
	key, err := keyref.Open(keyRef)
	if err != nil {
		return Credentials{}, credErr(op, "pass key "+err.Error())
	}
	return withKey(op, data[0], key, data[1])
}

func (c Credentials) check(op string) error {
	pub, ok := c.Key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(c.Certificate.PublicKey) {
		return credErr(op, "the private key does not belong to the pass certificate")
	}
	if err := c.Certificate.CheckSignatureFrom(c.WWDR); err != nil {
		return credErr(op, "the pass certificate was not issued by the WWDR certificate: "+err.Error())
	}
	return nil
}

func parseCert(b []byte) (*x509.Certificate, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM CERTIFICATE block")
	}
	return x509.ParseCertificate(blk.Bytes)
}

// Development file names inside the directory given to LoadOrCreateDevelopment.
const (
	DevRootFile = "apple-dev-root.pem"
	DevWWDRFile = "apple-dev-wwdr.pem"
	DevCertFile = "apple-dev-pass.pem"
	DevKeyFile  = "apple-dev-pass.key"
)

// LoadOrCreateDevelopment loads development credentials from dir or, when
// none are there (or they no longer match passTypeID/teamID or have
// expired at now), generates a chain shaped like Apple's: a self-signed root,
// an intermediate standing in for WWDR and an RSA pass certificate with
// UID=passTypeID and OU=teamID, valid for two years. created reports a
// generation so the caller can log that passes will not install on real
// devices. The root's private key is discarded.
func LoadOrCreateDevelopment(dir, passTypeID, teamID string, now time.Time) (c Credentials, created bool, err error) {
	const op = "apple.LoadOrCreateDevelopment"
	c, err = loadDevelopment(dir)
	if err == nil && c.PassTypeID() == passTypeID && c.TeamID() == teamID && now.Before(c.Certificate.NotAfter) {
		return c, false, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Credentials{}, false, apperr.Wrap(op, err)
	}
	c, err = GenerateDevelopment(passTypeID, teamID, now)
	if err != nil {
		return Credentials{}, false, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		return Credentials{}, false, apperr.Wrap(op, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Credentials{}, false, apperr.Wrap(op, err)
	}
	for _, f := range []struct {
		name, typ string
		der       []byte
		mode      os.FileMode
	}{
		{DevRootFile, "CERTIFICATE", c.Root.Raw, 0o644},
		{DevWWDRFile, "CERTIFICATE", c.WWDR.Raw, 0o644},
		{DevCertFile, "CERTIFICATE", c.Certificate.Raw, 0o644},
		{DevKeyFile, "PRIVATE KEY", keyDER, 0o600},
	} {
		data := pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der})
		if err := os.WriteFile(filepath.Join(dir, f.name), data, f.mode); err != nil {
			return Credentials{}, false, apperr.Wrap(op, err)
		}
	}
	return c, true, nil
}

func loadDevelopment(dir string) (Credentials, error) {
	var data [4][]byte
	for i, n := range []string{DevCertFile, DevKeyFile, DevWWDRFile, DevRootFile} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return Credentials{}, err
		}
		data[i] = b
	}
	c, err := ParseCredentials(data[0], data[1], data[2])
	if err != nil {
		return Credentials{}, err
	}
	if c.Root, err = parseCert(data[3]); err != nil {
		return Credentials{}, err
	}
	c.Development = true
	return c, nil
}

// GenerateDevelopment creates development credentials in memory (see
// LoadOrCreateDevelopment).
func GenerateDevelopment(passTypeID, teamID string, now time.Time) (Credentials, error) {
	const op = "apple.GenerateDevelopment"
	rootKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Credentials{}, apperr.Wrap(op, err)
	}
	wwdrKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Credentials{}, apperr.Wrap(op, err)
	}
	passKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return Credentials{}, apperr.Wrap(op, err)
	}
	start := now.Add(-time.Hour).UTC()
	ca := func(cn string, years int) *x509.Certificate {
		return &x509.Certificate{
			Subject:               pkix.Name{CommonName: cn, Organization: []string{"farebox development"}},
			NotBefore:             start,
			NotAfter:              start.AddDate(years, 0, 0),
			IsCA:                  true,
			BasicConstraintsValid: true,
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		}
	}
	rootT := ca("farebox development root (not Apple)", 10)
	root, err := issue(rootT, rootT, &rootKey.PublicKey, rootKey)
	if err != nil {
		return Credentials{}, apperr.Wrap(op, err)
	}
	wwdr, err := issue(ca("farebox development WWDR (not Apple)", 10), root, &wwdrKey.PublicKey, rootKey)
	if err != nil {
		return Credentials{}, apperr.Wrap(op, err)
	}
	passT := &x509.Certificate{
		Subject: pkix.Name{
			CommonName:         "Pass Type ID: " + passTypeID,
			OrganizationalUnit: []string{teamID},
			Organization:       []string{"farebox development"},
			ExtraNames:         []pkix.AttributeTypeAndValue{{Type: oidUID, Value: passTypeID}},
		},
		NotBefore:   start,
		NotAfter:    start.AddDate(2, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	}
	cert, err := issue(passT, wwdr, &passKey.PublicKey, wwdrKey)
	if err != nil {
		return Credentials{}, apperr.Wrap(op, err)
	}
	return Credentials{Certificate: cert, Key: passKey, WWDR: wwdr, Root: root, Development: true}, nil
}

func issue(tmpl, parent *x509.Certificate, pub any, signer crypto.Signer) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}
