package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/testtool"
)

// The layers of farebox and which may import which (docs/architecture.md).
// Every package of the module is named here: a new package fails
// TestLayers until it is given a class.
//
//   - transport: HTTP only — routing, middleware, decoding requests,
//     mapping errors and writing responses. It names no domain or adapter
//     type; what it writes comes from app.
//   - capability: the use cases of one capability of the interface, one
//     package each under internal/app/ (transit, …): a type with the
//     narrow set of store methods it needs, wired once in cmd/farebox
//     (and in internal/apitest). A capability imports no other capability
//     and not internal/app: what two of them share sits below them.
//   - usecase-shared: a use-case service that the application and
//     several capabilities call inside their own work (the catalog they all
//     read, the records another capability must write in the same
//     transaction): below internal/app and the capabilities, above the
//     adapters. It imports no capability and not internal/app.
//   - usecase-kernel: what the use-case packages share (internal/app/kit:
//     the API's timestamp, list paging): below internal/app and the
//     capabilities, above the domain.
//   - application: the use cases not yet moved to a capability package
//     (internal/app). The one layer that sees domain values,
//     adapters and the store together, and the one that turns domain
//     values into the API's response shapes.
//   - domain: the business rules and values of ticketing and invoicing:
//     no I/O, so no net/http and no database/sql, and no adapter.
//   - adapter: talks to something outside the process or writes an
//     external format — the database (store), files and journals (usage,
//     credentials), HTTP feeds (realtime), GTFS archives and their index
//     (gtfs, departure), PDF and XML invoices, barcodes, wallet passes
//     (wallet is the pass model the Apple and Google builders share),
//     the HTML engines, job leases, session-token signing (metering).
//   - web: the HTML side of the transport (templates, CSS, language,
//     CSRF, cookies, throttling); no farebox type but the kernel's, so the
//     pages' data comes from app through httpapi.
//   - kernel: small vocabulary every layer may use — errors, the clock,
//     id generation.
//   - contract: the OpenAPI document the transport serves.
//   - wiring: the command, its configuration and tools; may import anything.
//   - testsupport: helpers for tests; may import anything.
var layers = map[string]string{
	"internal/httpapi": "transport",
	"internal/web":     "web",

	"internal/app": "application",

	"internal/app/transit":         "capability",
	"internal/app/testclock":       "capability",
	"internal/app/devices":         "capability",
	"internal/app/accounts":        "capability",
	"internal/app/webusers":        "capability",
	"internal/app/billing":         "capability",
	"internal/app/clearing":        "capability",
	"internal/app/console":         "capability",
	"internal/app/privacy":         "capability",
	"internal/app/webhooks":        "capability",
	"internal/app/wallets":         "capability",
	"internal/app/inspection":      "capability",
	"internal/app/invoices":        "capability",
	"internal/app/invoicedelivery": "capability",
	"internal/app/records":         "capability",
	"internal/app/fares":           "capability",

	"internal/app/events":     "usecase-shared",
	"internal/app/deliveries": "usecase-shared",
	"internal/app/products":   "usecase-shared",
	"internal/app/passes":     "usecase-shared",
	"internal/app/books":      "usecase-shared",
	"internal/app/customers":  "usecase-shared",

	"internal/app/kit": "usecase-kernel",

	"internal/account":      "domain",
	"internal/catalog":      "domain",
	"internal/invoicedoc":   "domain",
	"internal/invoicing":    "domain",
	"internal/clearing":     "domain",
	"internal/money":        "domain",
	"internal/schema":       "domain",
	"internal/subscription": "domain",
	"internal/ticketing":    "domain",
	"internal/validity":     "domain",
	"internal/idempotency":  "domain",
	"internal/event":        "domain",
	"internal/retention":    "domain",
	"internal/list":         "domain",
	"internal/webhook":      "domain",
	"internal/records":      "domain",

	"internal/store":                "adapter",
	"internal/usage":                "adapter",
	"internal/barcode":              "adapter",
	"internal/barcode/uic":          "adapter",
	"internal/barcode/vdv":          "adapter",
	"internal/blocklist":            "adapter",
	"internal/barcode/dynamic":      "adapter",
	"internal/wallet":               "adapter",
	"internal/wallet/apple":         "adapter",
	"internal/wallet/google":        "adapter",
	"internal/departure":            "adapter",
	"internal/gtfs":                 "adapter",
	"internal/mvt":                  "adapter",
	"internal/realtime":             "adapter",
	"internal/invoicedoc/pdf":       "adapter",
	"internal/invoicedoc/xrechnung": "adapter",
	"internal/jobs":                 "adapter",
	"internal/metering":             "adapter",
	"internal/engines":              "adapter",
	"internal/credentials":          "adapter",
	"internal/keyref":               "adapter",
	"internal/webhook/sender":       "adapter",
	"internal/ratelimit/redislimit": "adapter",
	"internal/smtpmail":             "adapter",
	"internal/fareexport":           "adapter",

	"internal/invoicedoc/pdf/internal/uba": "adapter", // UAX #9 levels for the PDF

	"internal/apperr": "kernel",
	"internal/caller": "kernel",
	"internal/clock":  "kernel",
	"internal/ident":  "kernel",
	"internal/pemkey": "kernel",
	// The limits' state (Store, the in-process Local, Fallback): pure Go,
	// no I/O; the Redis store is the adapter ratelimit/redislimit.
	"internal/ratelimit": "kernel",

	"api": "contract",

	"cmd/farebox":           "wiring",
	"internal/config":       "wiring",
	"tools/alertsfeed":      "wiring",
	"tools/clearingdata":    "wiring",
	"tools/gtfsmeasure":     "wiring",
	"tools/loadgen":         "wiring",
	"tools/openapiexamples": "wiring",
	"tools/testdata":        "wiring",
	"internal/shareddata":   "testsupport",

	"internal/apitest":                     "testsupport",
	"internal/app/apptest":                 "testsupport",
	"internal/store/storetest":             "testsupport",
	"internal/invoicedoc/invoicetest":      "testsupport",
	"internal/engines/browsertest":         "testsupport",
	"internal/wallet/google/googletest":    "testsupport",
	"internal/barcode/barcodetest":         "testsupport",
	"internal/barcode/dynamic/dynamictest": "testsupport",
	"internal/wallet/apple/apnstest":       "testsupport",
	"internal/testtool":                    "testsupport",
	"internal/mvt/mvttest":                 "testsupport",
	"internal/webhook/webhooktest":         "testsupport",
	"internal/smtpmail/smtptest":           "testsupport",
	"internal/clock/clocktest":             "testsupport",
	"internal/config/configtest":           "testsupport",
	"internal/ratelimit/ratelimittest":     "testsupport",
	"internal/keyref/tokentest":            "testsupport",
}

// mayImport lists, per class, the classes of this module it may import
// (wiring and testsupport are free). Standard-library rules are in
// forbiddenStd.
var mayImport = map[string][]string{
	"transport":      {"application", "capability", "usecase-shared", "web", "kernel", "contract"},
	"web":            {"kernel"},
	"application":    {"usecase-shared", "usecase-kernel", "domain", "adapter", "kernel"},
	"capability":     {"usecase-shared", "usecase-kernel", "domain", "adapter", "kernel"},
	"usecase-shared": {"usecase-shared", "usecase-kernel", "domain", "adapter", "kernel"},
	"usecase-kernel": {"domain", "kernel"},
	"domain":         {"domain", "kernel"},
	"adapter":        {"adapter", "domain", "kernel"},
	"kernel":         {"kernel"},
	"contract":       {},
}

// forbiddenStd are standard packages a class must not import.
var forbiddenStd = map[string][]string{
	"domain":    {"net/http", "database/sql", "database/sql/driver"},
	"transport": {"database/sql", "database/sql/driver"},
	"web":       {"database/sql", "database/sql/driver"},
}

// TestLayers parses the imports of every package of the module (test files
// aside: tests may set up data through any layer) and checks them against
// the classes above.
func TestLayers(t *testing.T) {
	root, module := moduleRoot(t)
	graph := importGraph(t, root, module)
	if len(graph) < len(layers)/2 {
		t.Fatalf("found only %d packages under %s", len(graph), root)
	}
	for _, v := range checkLayers(graph) {
		t.Error(v)
	}
}

// TestLayersCatchViolations shows that checkLayers reports what TestLayers
// guards against: the transport importing the store, a domain type, an
// adapter or database/sql, a domain package importing net/http or
// database/sql, and a package nobody classified.
func TestLayersCatchViolations(t *testing.T) {
	graph := map[string][]string{
		"internal/httpapi":     {"internal/app", "internal/apperr", "api", "internal/store", "internal/catalog", "internal/departure", "net/http", "database/sql"},
		"internal/catalog":     {"internal/apperr", "net/http"},
		"internal/money":       {"database/sql"},
		"internal/invoicing":   {"internal/store"},
		"internal/app":         {"internal/httpapi", "internal/app/transit"},
		"internal/app/transit": {"internal/app", "internal/app/testclock"},
		"internal/newthing":    {},
	}
	got := strings.Join(checkLayers(graph), "\n")
	testtool.Contains(t, got,
		"internal/httpapi (transport) imports internal/store (adapter)",
		"internal/httpapi (transport) imports internal/catalog (domain)",
		"internal/httpapi (transport) imports internal/departure (adapter)",
		"internal/httpapi (transport) imports database/sql",
		"internal/catalog (domain) imports net/http",
		"internal/money (domain) imports database/sql",
		"internal/invoicing (domain) imports internal/store (adapter)",
		"internal/app (application) imports internal/httpapi (transport)",
		"internal/app (application) imports internal/app/transit (capability)",
		"internal/app/transit (capability) imports internal/app (application)",
		"internal/app/transit (capability) imports internal/app/testclock (capability)",
		"internal/newthing has no layer",
	)
	for _, allowed := range []string{"(transport) imports internal/app ", "imports internal/apperr ", "imports api ", "httpapi (transport) imports net/http"} {
		if strings.Contains(got+" ", allowed) {
			t.Errorf("checkLayers reported an allowed import (%q):\n%s", allowed, got)
		}
	}
}

// checkLayers returns one line per import that breaks the rules.
func checkLayers(graph map[string][]string) []string {
	var out []string
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		class, ok := layers[p]
		if !ok {
			out = append(out, p+" has no layer: add it to layers in internal/layers_test.go")
			continue
		}
		allowed, ruled := mayImport[class]
		for _, imp := range graph[p] {
			impClass, internal := layers[imp]
			if !internal {
				for _, f := range forbiddenStd[class] {
					if imp == f {
						out = append(out, p+" ("+class+") imports "+imp)
					}
				}
				continue
			}
			if ruled && !contains(allowed, impClass) {
				out = append(out, p+" ("+class+") imports "+imp+" ("+impClass+")")
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// moduleRoot finds go.mod above the working directory and the module path.
func moduleRoot(t *testing.T) (root, module string) {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
					return dir, f[1]
				}
			}
			t.Fatalf("no module line in %s/go.mod", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// importGraph maps every package directory under root (relative path) to
// the imports of its non-test files, module imports made relative too.
func importGraph(t *testing.T, root, module string) map[string][]string {
	graph := map[string][]string{}
	fset := token.NewFileSet()
	productionFiles(t, root, fset, parser.ImportsOnly, func(rel string, f *ast.File) error {
		pkg := path.Dir(rel)
		imps := graph[pkg]
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if imp == module || strings.HasPrefix(imp, module+"/") {
				imp = strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			}
			if !contains(imps, imp) {
				imps = append(imps, imp)
			}
		}
		graph[pkg] = imps
		return nil
	})
	return graph
}

// productionFiles parses every non-test Go file under root (goFiles) with
// mode and calls fn with its slash-separated path relative to root.
func productionFiles(t *testing.T, root string, fset *token.FileSet, mode parser.Mode, fn func(rel string, f *ast.File) error) {
	t.Helper()
	goFiles(t, root, func(p string) error {
		if strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, mode)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), f)
	})
}

// goFiles calls fn with the path of every Go file under root, skipping
// hidden, underscore, testdata, vendor and node_modules directories.
func goFiles(t *testing.T, root string, fn func(path string) error) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		return fn(path)
	})
	if err != nil {
		t.Fatal(err)
	}
}
