package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// The store conformance suite (issue 29, after river's riverdrivertest):
// every exported method of store.Q, *store.Store and store.JobQueue is
// tested directly,
// once per engine, for its contract: what it returns, what it changes,
// its not-found and conflict errors, the order and paging of what it
// lists. The use-case and API tests above the store may then run on one
// engine in the short tier: the store is proven on both here.
//
// Each area (a store file, or a few that belong together: the ticketing
// file holds orders, subscriptions, tickets and test clocks) declares a
// conformanceCases literal, one case per method keyed by the method's
// name, and a TestConformance<Area> that runs it; the shared fixtures and
// checks are in conformance_fixtures_test.go. Each case is a subtest
// named after its method with a subtest per engine under it
// (TestConformanceOrders/Coupon/postgres), on both engines under -short
// too, each on a fresh database. Methods an
// older store test already tests directly are listed in
// conformanceElsewhere with that test instead of being tested twice.
// TestConformanceCoversEveryMethod reads the method sets by reflection and
// the cases from the test files' syntax and fails naming every method with
// no case (and every case that does not call its method).

// conformanceCases are the cases of one area: method name (Name for a
// method of store.Q, Store.Name for one of *store.Store, JobQueue.Name for
// one of the job queue *Store.Jobs returns) → the test of that method's
// contract on a fresh, migrated store.
type conformanceCases map[string]func(t *testing.T, s *store.Store)

// run runs each case as a subtest named after its method, on each engine.
func (cs conformanceCases) run(t *testing.T) {
	t.Helper()
	names := make([]string, 0, len(cs))
	for name := range cs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.ForEachEngine(t, cs[name])
		})
	}
}

// conformanceElsewhere maps a method to the older store test that already
// tests its contract directly on both engines under -short too
// (storetest.ForEachEngine, ForEachEngineOptions or AllEngines, not
// ForEachEngineLoaded); the guard checks that the test exists, runs on both
// and calls the method.
var conformanceElsewhere = map[string]string{
	"CreateAccount":           "TestAccountsAndKeys",
	"CreateKey":               "TestAccountsAndKeys",
	"PrincipalByKeyHash":      "TestAccountsAndKeys",
	"RevokeKeysByPrefix":      "TestAccountsAndKeys",
	"ClaimIdempotencyKey":     "TestIdempotencyClaims",
	"CompleteIdempotencyKey":  "TestIdempotencyClaims",
	"Store.InsertOrderAlone":  "TestInsertOrderAlone",
	"InsertOrderRows":         "TestInsertOrderRowsRefusesForeignEvents",
	"InsertEvents":            "TestInsertEventsEndpointCheck",
	"OldestReadyJob":          "TestOldestReadyJob",
	"EnsureSecret":            "TestEnsureSecret",
	"Store.RollupUsageCounts": "TestUsageCountersRollup",
	"Store.UsageWriter":       "TestUsageWriterDurabilities",
	"Store.NewLedger":         "TestUsageLedger",
	"Store.RollupSegment":     "TestUsageJournalRollup",
	"UsageOfEnvironment":      "TestUsageCountersRollup",
	"UsageSummary":            "TestUsageLedger",
	"UsageEvents":             "TestUsageWriterDurabilities",
	"Store.WriteClaimed":      "TestIdempotencyClaimCommitted",
	"Store.WindowWriter":      "TestDeferredLedgerWindows",
	"Store.NewDeferredLedger": "TestDeferredLedgerWindows",
	"LastUsageBatch":          "TestDeferredLedgerWindows",
}

// conformanceMissing are the methods still without a conformance case,
// to be given one (the guard fails when a listed method has one, so the
// list only shrinks; a new store method needs a case, not an entry).
var conformanceMissing = []string{}

// TestConformanceCoversEveryMethod fails naming every exported method of
// store.Q and *store.Store that has no conformance case, every case or
// mapping that names no method or does not call it, and every entry of
// conformanceMissing that is covered after all.
func TestConformanceCoversEveryMethod(t *testing.T) {
	methods := map[string]bool{}
	for prefix, typ := range map[string]reflect.Type{"": reflect.TypeFor[store.Q](), "Store.": reflect.TypeFor[*store.Store](),
		"JobQueue.": reflect.TypeFor[store.JobQueue]()} {
		for i := range typ.NumMethod() {
			methods[prefix+typ.Method(i).Name] = true
		}
	}
	cases, tests := conformanceSyntax(t)
	covered := map[string]bool{}
	for name, calls := range cases {
		if !methods[name] {
			t.Errorf("conformance case %q: store.Q and *store.Store have no such method", name)
		}
		if !calls {
			t.Errorf("conformance case %q does not call %s", name, name)
		}
		covered[name] = true
	}
	for name, test := range conformanceElsewhere {
		calls, ok := tests[test]
		switch {
		case !methods[name]:
			t.Errorf("conformanceElsewhere[%q]: no such method", name)
		case !ok:
			t.Errorf("conformanceElsewhere[%q]: no test %s in the store's tests", name, test)
		case !calls[methodName(name)]:
			t.Errorf("conformanceElsewhere[%q]: %s does not call %s", name, test, name)
		case !calls["ForEachEngine"] && !calls["ForEachEngineOptions"] && !calls["AllEngines"]:
			t.Errorf("conformanceElsewhere[%q]: %s does not run on both engines under -short (storetest.ForEachEngine, ForEachEngineOptions or AllEngines)", name, test)
		case covered[name]:
			t.Errorf("%s has a conformance case and is mapped to %s: keep one", name, test)
		}
		covered[name] = true
	}
	missing := map[string]bool{}
	for _, name := range conformanceMissing {
		if covered[name] || !methods[name] {
			t.Errorf("conformanceMissing lists %s, which is covered or no method: remove it", name)
		}
		missing[name] = true
	}
	var uncovered []string
	for name := range methods {
		if !covered[name] && !missing[name] {
			uncovered = append(uncovered, name)
		}
	}
	slices.Sort(uncovered)
	if len(uncovered) > 0 {
		t.Errorf("store methods without a conformance case (add one to the area's conformance_*_test.go): %s", strings.Join(uncovered, ", "))
	}
	t.Logf("%d store methods: %d with a case, %d mapped to older tests, %d missing", len(methods), len(cases), len(conformanceElsewhere), len(conformanceMissing))
}

// conformanceSyntax parses the package's test files and returns the keys
// of every conformanceCases literal (with whether its case calls a method
// of that name) and, for every Test function, the methods it calls.
func conformanceSyntax(t *testing.T) (cases map[string]bool, tests map[string]map[string]bool) {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	cases, tests = map[string]bool{}, map[string]map[string]bool{}
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Recv == nil && strings.HasPrefix(n.Name.Name, "Test") {
					tests[n.Name.Name] = calledMethods(n.Body)
				}
			case *ast.CompositeLit:
				if id, ok := n.Type.(*ast.Ident); !ok || id.Name != "conformanceCases" {
					return true
				}
				for _, el := range n.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					lit, isLit := kv.Key.(*ast.BasicLit)
					if !ok || !isLit {
						t.Errorf("%s: a conformanceCases key is not a string literal", fset.Position(el.Pos()))
						continue
					}
					name, _ := strconv.Unquote(lit.Value)
					if _, dup := cases[name]; dup {
						t.Errorf("%s: a second conformance case for %s", fset.Position(el.Pos()), name)
					}
					cases[name] = calledMethods(kv.Value)[methodName(name)]
				}
			}
			return true
		})
	}
	return cases, tests
}

// methodName is the method of a case name: Name for store.Q's, Store.Name
// for *store.Store's (both have a Jobs), JobQueue.Name for store.JobQueue's.
func methodName(caseName string) string {
	if _, name, ok := strings.Cut(caseName, "."); ok {
		return name
	}
	return caseName
}

// calledMethods are the names of the methods n calls or takes as a value
// (x.Name), and AllEngines when n reads storetest.AllEngines.
func calledMethods(n ast.Node) map[string]bool {
	names := map[string]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			names[sel.Sel.Name] = true
		}
		return true
	})
	return names
}
