package apperr_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/farebox/farebox/api"
	"go.yaml.in/yaml/v3"
)

var fixCodes = flag.Bool("fix", false, "rewrite code literals into constants of their package's codes.go")

// TestErrorCodeRegistry keeps the error codes in one list per package: the
// Code… constants of its codes.go. Every registered code is described in
// api/openapi.yaml, and no code is written as a literal anywhere else in
// the module's Go source (an apperr.E, Validation or NotFoundf argument, a
// Code: field, a comparison with .Code), so a code cannot be born without
// being registered and documented. With -fix the test moves such literals
// into the package's codes.go (then describe the new codes in the OpenAPI
// file): go test ./internal/apperr -run TestErrorCodeRegistry -fix
func TestErrorCodeRegistry(t *testing.T) {
	root := moduleRoot(t)
	pkgs := scan(t, root)
	if *fixCodes {
		for _, p := range pkgs {
			p.fix(t)
		}
		pkgs = scan(t, root)
	}
	doc := string(api.YAML)
	registered := 0
	qualified := map[string]bool{} // "app.CodeConflict" used outside package app
	for _, p := range pkgs {
		for ref := range p.qualifiedRefs {
			qualified[ref] = true
		}
	}
	for _, p := range pkgs {
		for _, l := range p.literals {
			t.Errorf("%s: code %q written as a literal: use a constant of %s (go test ./internal/apperr -run TestErrorCodeRegistry -fix)",
				l.pos, l.code, filepath.Join(p.rel, "codes.go"))
		}
		for _, c := range p.misplaced {
			t.Errorf("%s: code constant %s belongs in %s", c.pos, c.name, filepath.Join(p.rel, "codes.go"))
		}
		for name, code := range p.registry {
			registered++
			if !snakeCase.MatchString(code) {
				t.Errorf("%s/codes.go: %s = %q is not snake_case", p.rel, name, code)
			}
			if !p.refs[name] && !qualified[p.name+"."+name] {
				t.Errorf("%s/codes.go: %s is used nowhere in the module's non-test code: remove it", p.rel, name)
			}
			if !regexp.MustCompile(`\b` + code + `\b`).MatchString(doc) {
				t.Errorf("%s/codes.go: %s = %q is not described in api/openapi.yaml", p.rel, name, code)
			}
		}
	}
	if registered < 100 {
		t.Errorf("only %d codes registered: is the scan finding the codes.go files?", registered)
	}
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// codePkg is one package directory's registry and offending literals.
type codePkg struct {
	dir, rel, name string
	registry       map[string]string // constant name → code
	refs           map[string]bool   // Code… identifiers used unqualified
	qualifiedRefs  map[string]bool   // pkg.Code… selectors used
	literals       []codeLiteral
	misplaced      []codeConst
}

type codeLiteral struct {
	file       string
	start, end int // byte offsets of the literal
	pos        token.Position
	code       string
}

type codeConst struct {
	name string
	pos  token.Position
}

func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// scan parses the module's non-test Go files.
func scan(t *testing.T, root string) map[string]*codePkg {
	pkgs := map[string]*codePkg{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		p := pkgs[dir]
		if p == nil {
			rel, _ := filepath.Rel(root, dir)
			p = &codePkg{dir: dir, rel: rel, name: f.Name.Name, registry: map[string]string{},
				refs: map[string]bool{}, qualifiedRefs: map[string]bool{}}
			pkgs[dir] = p
		}
		p.inspect(fset, path, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func (p *codePkg) inspect(fset *token.FileSet, path string, f *ast.File) {
	inApperr := f.Name.Name == "apperr"
	lit := func(e ast.Expr, suffix string) {
		bl, ok := e.(*ast.BasicLit)
		if !ok || bl.Kind != token.STRING {
			return
		}
		v, err := strconv.Unquote(bl.Value)
		if err != nil || !snakeCase.MatchString(v) {
			return
		}
		v = strings.TrimSuffix(v, suffix)
		p.literals = append(p.literals, codeLiteral{file: path, start: fset.Position(bl.Pos()).Offset,
			end: fset.Position(bl.End()).Offset, pos: fset.Position(bl.Pos()), code: v + suffix})
	}
	// Identifiers that are not references: the constants' own names and
	// the right-hand side of a selector (counted as qualified references).
	notRef := map[*ast.Ident]bool{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				notRef[n] = true
				if !strings.HasPrefix(n.Name, "Code") || len(vs.Values) <= i {
					continue
				}
				bl, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || bl.Kind != token.STRING {
					continue
				}
				if filepath.Base(path) != "codes.go" {
					p.misplaced = append(p.misplaced, codeConst{n.Name, fset.Position(n.Pos())})
					continue
				}
				p.registry[n.Name], _ = strconv.Unquote(bl.Value)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			notRef[n.Sel] = true
			if x, ok := n.X.(*ast.Ident); ok && strings.HasPrefix(n.Sel.Name, "Code") {
				p.qualifiedRefs[x.Name+"."+n.Sel.Name] = true
			}
		case *ast.Ident:
			if !notRef[n] && strings.HasPrefix(n.Name, "Code") {
				p.refs[n.Name] = true
			}
		case *ast.CallExpr:
			name := ""
			switch fn := n.Fun.(type) {
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); ok && x.Name == "apperr" {
					name = fn.Sel.Name
				}
			case *ast.Ident:
				if inApperr {
					name = fn.Name
				}
			}
			switch {
			case name == "E" && len(n.Args) == 4:
				lit(n.Args[2], "")
			case name == "Validation" && len(n.Args) == 4:
				lit(n.Args[1], "")
			case name == "NotFoundf" && len(n.Args) == 2:
				// The code, or the noun NotFoundf took before it took codes
				// ("coupon"): either way the code is coupon_not_found.
				lit(n.Args[1], "_not_found")
			}
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Code" {
				lit(n.Value, "")
			}
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				break
			}
			for _, pair := range [][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
				if sel, ok := pair[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "Code" {
					lit(pair[1], "")
				}
			}
		}
		return true
	})
}

// fix replaces the package's code literals by constants, adding the
// missing ones to its codes.go.
func (p *codePkg) fix(t *testing.T) {
	if len(p.literals) == 0 {
		return
	}
	byValue := map[string]string{}
	for name, code := range p.registry {
		byValue[code] = name
	}
	var added []string
	byFile := map[string][]codeLiteral{}
	for _, l := range p.literals {
		name, ok := byValue[l.code]
		if !ok {
			name = constName(l.code)
			if other, taken := p.registry[name]; taken {
				t.Fatalf("%s: %s is already %q; name the constant of %q by hand", p.rel, name, other, l.code)
			}
			p.registry[name], byValue[l.code] = l.code, name
			added = append(added, name)
		}
		byFile[l.file] = append(byFile[l.file], l)
	}
	for file, ls := range byFile {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(ls, func(i, j int) bool { return ls[i].start > ls[j].start })
		for _, l := range ls {
			src = append(src[:l.start], append([]byte(byValue[l.code]), src[l.end:]...)...)
		}
		writeGo(t, file, src)
	}
	if len(added) == 0 {
		return
	}
	codes := filepath.Join(p.dir, "codes.go")
	src, err := os.ReadFile(codes)
	if os.IsNotExist(err) {
		src = []byte(fmt.Sprintf("package %s\n\n// The error codes of package %s: the stable `code` of the errors it\n"+
			"// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).", p.name, p.name))
	} else if err != nil {
		t.Fatal(err)
	}
	sort.Strings(added)
	var b bytes.Buffer
	b.Write(src)
	b.WriteString("\nconst (\n")
	for _, name := range added {
		fmt.Fprintf(&b, "\t%s = %q\n", name, p.registry[name])
	}
	b.WriteString(")\n")
	writeGo(t, codes, b.Bytes())
}

func writeGo(t *testing.T, file string, src []byte) {
	out, err := format.Source(src)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// constName is the constant of a code: invalid_api_key → CodeInvalidAPIKey.
func constName(code string) string {
	initialisms := map[string]string{"api": "API", "id": "ID", "ids": "IDs", "json": "JSON", "gtfs": "GTFS",
		"rt": "RT", "url": "URL", "pdf": "PDF", "xml": "XML", "http": "HTTP"}
	var b strings.Builder
	b.WriteString("Code")
	for _, w := range strings.Split(code, "_") {
		if s, ok := initialisms[w]; ok {
			b.WriteString(s)
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// TestOpenAPIErrorCodesRegistered holds the x-error-codes lists of
// api/openapi.yaml (the codes each operation answers, docs/openapi.md) to
// the registry: a listed code must be a Code… constant of some codes.go.
func TestOpenAPIErrorCodesRegistered(t *testing.T) {
	registered := map[string]bool{}
	for _, p := range scan(t, moduleRoot(t)) {
		for _, code := range p.registry {
			registered[code] = true
		}
	}
	var doc any
	if err := yaml.Unmarshal(api.YAML, &doc); err != nil {
		t.Fatal(err)
	}
	lists := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if k != "x-error-codes" {
					walk(path+"/"+k, c)
					continue
				}
				byStatus, ok := c.(map[string]any)
				if !ok {
					t.Errorf("%s: x-error-codes is a %T, want a map of status to codes", path, c)
					continue
				}
				for status, codes := range byStatus {
					list, _ := codes.([]any)
					lists++
					for _, code := range list {
						if s, _ := code.(string); !registered[s] {
							t.Errorf("%s: x-error-codes.%s lists %v, which no codes.go registers", path, status, code)
						}
					}
				}
			}
		case []any:
			for i, c := range v {
				walk(fmt.Sprintf("%s/%d", path, i), c)
			}
		}
	}
	walk("", doc)
	if lists < 50 {
		t.Errorf("only %d x-error-codes lists found in api/openapi.yaml", lists)
	}
}
