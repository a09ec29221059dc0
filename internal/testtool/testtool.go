// Package testtool is what tests share to reach outside Go: the official
// e-invoice schemas and GTFS feeds of the repository's testdata/, xmllint and openssl. A missing tool
// or schema fails the test with the package to install or the variable to
// set; nothing is skipped except what the fast tier (go test -short) leaves
// out (tier.go). Also the small helpers several packages' tests would
// otherwise each repeat (Time). Only _test.go files and test support
// (browsertest) import it.
package testtool

import (
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/shareddata"
)

// EInvoiceSchemas is the directory of the official XSDs:
// $FAREBOX_EINVOICE_SCHEMAS, or testdata/einvoice/schemas of the repository.
func EInvoiceSchemas(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("FAREBOX_EINVOICE_SCHEMAS"); d != "" {
		return d
	}
	d := shareddata.Path(filepath.Join("einvoice", "schemas"))
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		t.Fatalf("official XSDs not found at %s (the repository carries them in testdata/einvoice/schemas; FAREBOX_EINVOICE_SCHEMAS overrides)", d)
	}
	return d
}

// Official XSDs, relative to EInvoiceSchemas.
const (
	XSDUBLInvoice    = "ubl-2.1/maindoc/UBL-Invoice-2.1.xsd"
	XSDUBLCreditNote = "ubl-2.1/maindoc/UBL-CreditNote-2.1.xsd"
	XSDCII           = "cii-d16b/uncefact/data/standard/CrossIndustryInvoice_100pD16B.xsd"
)

// Need returns the path of the program name, failing the test with the
// Debian package that provides it when it is missing.
func Need(t testing.TB, name, debianPackage string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is required for this test (apt-get install %s): %v", name, debianPackage, err)
	}
	return bin
}

// Contains reports each of want that got lacks, with got.
func Contains(t testing.TB, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("lacks %q:\n%s", w, got)
		}
	}
}

// WriteFile writes b to dir/name and returns the path.
func WriteFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// XMLLint validates files against schema (a path relative to
// EInvoiceSchemas) and returns xmllint's combined output and whether every
// file validated.
func XMLLint(t testing.TB, schema string, files ...string) (string, bool) {
	t.Helper()
	return xmllint(t, filepath.Join(EInvoiceSchemas(t), schema), files)
}

// NeTExSchema is the official NeTEx schema's entry point,
// testdata/netex/xsd/NeTEx_publication.xsd of the repository (the files it
// includes, unchanged; testdata/README.md).
func NeTExSchema(t testing.TB) string {
	t.Helper()
	p := shareddata.Path(filepath.Join("netex", "xsd", "NeTEx_publication.xsd"))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the NeTEx schema is not at %s (the repository carries it in testdata/netex/xsd)", p)
	}
	return p
}

// NeTExLint validates files against the NeTEx schema in one xmllint run
// (compiling the schema takes most of a minute on a busy machine: validate
// every file in one call) and returns its output and whether every file
// validated.
func NeTExLint(t testing.TB, files ...string) (string, bool) {
	t.Helper()
	return xmllint(t, NeTExSchema(t), files)
}

func xmllint(t testing.TB, schema string, files []string) (string, bool) {
	t.Helper()
	bin := Need(t, "xmllint", "libxml2-utils")
	args := append([]string{"--noout", "--nonet", "--schema", schema}, files...)
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err == nil
}

// VerifyCMS runs `openssl cms -verify` on a detached DER signature over
// content, trusting only the root certificate rootDER (as a wallet trusts
// Apple's root), and returns openssl's output; err is set when the
// signature does not verify.
func VerifyCMS(t testing.TB, signature, content, rootDER []byte) (string, error) {
	t.Helper()
	bin := Need(t, "openssl", "openssl")
	dir := t.TempDir()
	root := WriteFile(t, dir, "root.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rootDER}))
	out, err := exec.Command(bin, "cms", "-verify", "-binary", "-inform", "DER",
		"-in", WriteFile(t, dir, "signature", signature), "-content", WriteFile(t, dir, "content", content),
		"-CAfile", root, "-purpose", "any", "-out", os.DevNull).CombinedOutput()
	return string(out), err
}

var (
	gtfsMu    sync.Mutex
	gtfsFeeds = map[string]*gtfs.Feed{}
)

// GTFSFeed parses the test feed name (testdata/gtfs/name, or the feed at
// name when it is an absolute path) once per test binary; callers must
// not modify it. A feed that testdata/ lacks is taken from the shared data
// (shareddata.File): only benchmarks may need that, CI runs the tests
// without shared data.
func GTFSFeed(t testing.TB, name string) *gtfs.Feed {
	t.Helper()
	gtfsMu.Lock()
	defer gtfsMu.Unlock()
	if f := gtfsFeeds[name]; f != nil {
		return f
	}
	p := name // an absolute path is taken as it is
	if !filepath.IsAbs(name) {
		p = shareddata.File(filepath.Join("gtfs", name))
	}
	f, err := gtfs.ParseFile(p)
	if err != nil {
		t.Fatalf("parse %s: %v (testdata/README.md: `%s` fetches the feeds the repository does not carry)", name, err, shareddata.Fetch)
	}
	gtfsFeeds[name] = f
	return f
}

// CaltrainWithPlatforms is a copy of the Caltrain test feed
// (caltrain-2023.zip) with platform codes at 22nd Street and San Francisco
// (the real feed has the column, empty): 70021/70011 "1", 70022/70012 "2".
func CaltrainWithPlatforms(t testing.TB) *gtfs.Feed {
	t.Helper()
	f := *GTFSFeed(t, "caltrain-2023.zip")
	f.Stops.Platform = slices.Clone(f.Stops.Platform)
	for i, id := range f.Stops.ID {
		switch id {
		case "70021", "70011":
			f.Stops.Platform[i] = "1"
		case "70022", "70012":
			f.Stops.Platform[i] = "2"
		}
	}
	return &f
}

// Time parses an RFC 3339 literal of a test into a UTC instant; a bad
// literal is a bug in the test and panics.
func Time(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// GTFSTime renders seconds of a service day as a GTFS time "HH:MM:SS"
// (hours may pass 24).
func GTFSTime(secs int32) string {
	return fmt.Sprintf("%02d:%02d:%02d", secs/3600, secs/60%60, secs%60)
}

// Must returns v once err is nil, and fails the test at the caller's line
// otherwise: testtool.Must(os.ReadFile(name))(t), for the
// value-and-error calls a test needs to succeed before it checks anything.
func Must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
