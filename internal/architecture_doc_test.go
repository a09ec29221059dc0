package internal_test

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureDocNamesExist keeps docs/architecture.md true to the
// tree: every file or directory it names in backticks exists, every Go
// identifier it names is declared where it says (in the file or package
// named just before it, or somewhere in the module), every route row it
// quotes is a row of internal/httpapi/routes.go, every SQL statement it
// quotes is in the file named before it, every package of the
// package map is a directory and every TestName it mentions is a test.
func TestArchitectureDocNamesExist(t *testing.T) {
	root, _ := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	idx := indexCode(t, root)
	problems, checked := checkDoc(string(doc), idx)
	for _, p := range problems {
		t.Error("docs/architecture.md: " + p)
	}
	if checked < 80 {
		t.Errorf("only %d names checked: is the doc parsed?", checked)
	}
}

// TestArchitectureDocCheckCatchesRot: each kind of stale mention is found.
func TestArchitectureDocCheckCatchesRot(t *testing.T) {
	root, _ := moduleRoot(t)
	idx := indexCode(t, root)
	doc := "| Layer | Packages | What |\n|---|---|---|\n| Domain | `invoice`, `money` | x |\n\n" +
		"1. `internal/app/activation.go` `ActivateCoupon`, `IssueInvoice`: wrong file.\n" +
		"2. `internal/app/nothere.go` and `store/gone.go` and `invoice/pdf`.\n" +
		"3. `app.NoSuchUseCase`, then `store.CouponOwner`, `NoSuchOwner`.\n" +
		"4. the row `{GET, \"/v1/nowhere.json\", authNone, billNobody, s.nowhere}`.\n" +
		"`internal/store/owners.go` `CouponOwner`: `SELECT id FROM nowhere`.\n" +
		"5. TestNoSuchTestAnywhere keeps it so; `NoSuchExported` is not declared.\n"
	problems, _ := checkDoc("## Package map\n\n"+doc, idx)
	for _, want := range []string{
		"package `invoice`", "`IssueInvoice` is not declared in internal/app/activation.go",
		"`internal/app/nothere.go`", "`store/gone.go`", "`invoice/pdf`",
		"`app.NoSuchUseCase`", "`NoSuchOwner` is not declared in package store",
		"/v1/nowhere.json", "SQL `SELECT id FROM nowhere` is not in internal/store/owners.go",
		"TestNoSuchTestAnywhere", "`NoSuchExported`",
	} {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("no problem reported for %s; got:\n%s", want, strings.Join(problems, "\n"))
		}
	}
	if len(problems) != 11 {
		t.Errorf("%d problems, want 11 (ActivateCoupon, money, CouponOwner are right):\n%s", len(problems), strings.Join(problems, "\n"))
	}
}

// codeIndex is what the module declares.
type codeIndex struct {
	root     string
	inFile   map[string]map[string]bool // file (relative) → names declared in it
	inPkg    map[string]map[string]bool // package name → names declared in its non-test files
	anywhere map[string]bool            // names declared in any non-test file
	tests    map[string]bool            // Test…, Benchmark…, Fuzz… functions
	routes   string                     // internal/httpapi/routes.go, whitespace collapsed
}

func indexCode(t *testing.T, root string) *codeIndex {
	t.Helper()
	idx := &codeIndex{root: root, inFile: map[string]map[string]bool{}, inPkg: map[string]map[string]bool{},
		anywhere: map[string]bool{}, tests: map[string]bool{}}
	fset := token.NewFileSet()
	goFiles(t, root, func(path string) error {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		names := declaredNames(f)
		idx.inFile[filepath.ToSlash(rel)] = names
		if strings.HasSuffix(path, "_test.go") {
			for n := range names {
				if strings.HasPrefix(n, "Test") || strings.HasPrefix(n, "Benchmark") || strings.HasPrefix(n, "Fuzz") {
					idx.tests[n] = true
				}
			}
			return nil
		}
		pkg := idx.inPkg[f.Name.Name]
		if pkg == nil {
			pkg = map[string]bool{}
			idx.inPkg[f.Name.Name] = pkg
		}
		for n := range names {
			pkg[n], idx.anywhere[n] = true, true
		}
		return nil
	})
	routes, err := os.ReadFile(filepath.Join(root, "internal", "httpapi", "routes.go"))
	if err != nil {
		t.Fatal(err)
	}
	idx.routes = collapse(string(routes))
	return idx
}

// declaredNames are a file's top-level functions, methods, types,
// variables and constants, and the fields and interface methods of its
// types.
func declaredNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			names[d.Name.Name] = true
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
					ast.Inspect(s.Type, func(n ast.Node) bool {
						if fl, ok := n.(*ast.Field); ok {
							for _, id := range fl.Names {
								names[id.Name] = true
							}
						}
						return true
					})
				case *ast.ValueSpec:
					for _, id := range s.Names {
						names[id.Name] = true
					}
				}
			}
		}
	}
	return names
}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	testName   = regexp.MustCompile(`\b(Test[A-Z]\w*)`)
	pathLike   = regexp.MustCompile(`^[\w.-]+(/[\w.-]+)+$`)
	goFile     = regexp.MustCompile(`^[\w.-]+\.go$`)
	qualified  = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Za-z_]\w*)(\(.*\))?$`)
	sqlText    = regexp.MustCompile(`^(SELECT|INSERT|UPDATE|DELETE) `)
	routeRow   = regexp.MustCompile(`^\{(GET|POST|PUT|PATCH|DELETE),`)
	ident      = regexp.MustCompile(`^([A-Za-z_]\w*)(\(.*\))?$`)
	// joined: the text between two mentions that keeps the first one's
	// file or package as the second one's context ("`a.go` `F`, `G`",
	// "`a.go` `F`: `SELECT …`").
	joined = regexp.MustCompile(`^[\s,/:]*$|^\s*(and|or)\s*$`)
)

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// checkDoc returns the doc's stale mentions and how many it checked.
func checkDoc(doc string, idx *codeIndex) (problems []string, checked int) {
	report := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	for _, name := range testName.FindAllString(doc, -1) {
		checked++
		if !idx.tests[name] {
			report("%s is not a test function", name)
		}
	}
	for _, section := range strings.Split(doc, "\n## ") {
		if !strings.HasPrefix(section, "Package map") && !strings.HasPrefix(section, "## Package map") {
			continue
		}
		for _, line := range strings.Split(section, "\n") {
			cols := strings.Split(line, "|")
			if len(cols) < 4 {
				continue
			}
			for _, m := range backticked.FindAllStringSubmatch(cols[2], -1) {
				checked++
				if idx.dir(m[1]) == "" {
					report("package `%s` of the package map is not a directory", m[1])
				}
			}
		}
	}
	// context is the file (ending in .go) or package the previous mention
	// named, while only joining text separates the mentions.
	context, end := "", 0
	for _, loc := range backticked.FindAllStringSubmatchIndex(doc, -1) {
		span := doc[loc[2]:loc[3]]
		if !joined.MatchString(doc[end:loc[0]]) {
			context = ""
		}
		end = loc[1]
		switch {
		case sqlText.MatchString(span):
			checked++
			if context == "" || strings.HasPrefix(context, "pkg:") {
				report("SQL `%s` follows no file", span)
			} else if b, err := os.ReadFile(filepath.Join(idx.root, context)); err != nil || !strings.Contains(collapse(string(b)), collapse(span)) {
				report("SQL `%s` is not in %s", span, context)
			}
		case routeRow.MatchString(span):
			checked++
			if !strings.Contains(idx.routes, collapse(span)) {
				report("route row `%s` is not in internal/httpapi/routes.go", span)
			}
			context = ""
		case pathLike.MatchString(span) && !strings.HasPrefix(span, "/"):
			checked++
			p := idx.path(span)
			if p == "" {
				report("`%s` does not exist (paths are from the repository root or internal/)", span)
			}
			context = ""
			if strings.HasSuffix(p, ".go") {
				context = p
			}
		case goFile.MatchString(span):
			checked++
			p, n := idx.bareFile(span, context)
			if n == 0 {
				report("`%s` is no file of the module", span)
			}
			context = p // "" when the name is generic (codes.go of every package)
		case qualified.MatchString(span):
			m := qualified.FindStringSubmatch(span)
			pkg, ok := idx.inPkg[m[1]]
			if !ok {
				context = ""
				continue // not a package: a file name such as routes.golden
			}
			checked++
			if !pkg[m[2]] {
				report("`%s`: %s is not declared in package %s", span, m[2], m[1])
			}
			context = "pkg:" + m[1]
		case ident.MatchString(span):
			name := ident.FindStringSubmatch(span)[1]
			switch {
			case strings.HasPrefix(context, "pkg:"):
				checked++
				if !idx.inPkg[context[4:]][name] {
					report("`%s` is not declared in package %s", span, context[4:])
				}
			case context != "":
				checked++
				if !idx.inFile[context][name] {
					report("`%s` is not declared in %s", span, context)
				}
			case name[0] >= 'A' && name[0] <= 'Z':
				checked++
				if !idx.anywhere[name] && !idx.tests[name] {
					report("`%s` is not declared in the module", span)
				}
			}
		default:
			context = ""
		}
	}
	return problems, checked
}

// path resolves a mention from the repository root or from internal/, or
// names a standard library package (net/http).
func (idx *codeIndex) path(p string) string {
	if pkg, err := build.Default.Import(p, "", build.FindOnly); err == nil && pkg.Goroot {
		return p
	}
	for _, c := range []string{p, "internal/" + p} {
		if _, err := os.Stat(filepath.Join(idx.root, c)); err == nil {
			return c
		}
	}
	return ""
}

// dir resolves a package of the package map.
func (idx *codeIndex) dir(p string) string {
	c := idx.path(p)
	if st, err := os.Stat(filepath.Join(idx.root, c)); c == "" || err != nil || !st.IsDir() {
		return ""
	}
	return c
}

// bareFile resolves a file name without a directory: next to the file of
// the context, else the one file of that name in the module; n is how many
// files have the name.
func (idx *codeIndex) bareFile(name, context string) (path string, n int) {
	if context != "" && !strings.HasPrefix(context, "pkg:") {
		if c := filepath.ToSlash(filepath.Join(filepath.Dir(context), name)); idx.inFile[c] != nil {
			return c, 1
		}
	}
	for f := range idx.inFile {
		if filepath.Base(f) == name {
			path, n = f, n+1
		}
	}
	if n > 1 {
		path = ""
	}
	return path, n
}
