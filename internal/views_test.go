package internal_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/testtool"
)

// TestTransportUsesViews type-checks the transport's non-test files and
// reports every place where a handler reads a field of a type declared in a
// domain or adapter package (layers), or hands a value whose type reaches
// such a type to an interface-typed parameter, field, element or variable —
// which is how values get to JSON encoding, templates and web.Page.Data.
// A view type with a field of interface type (the `any` loophole) is
// reported too: what it carries cannot be checked.
func TestTransportUsesViews(t *testing.T) {
	root, module := moduleRoot(t)
	for _, g := range transportViewUses(t, root, module, "internal/httpapi") {
		t.Errorf("the transport uses a domain or adapter type: %s (give the use-case package a view for it)", g)
	}
}

// TestTransportViewsCatchViolations shows that the checker finds a field
// read, an encoded domain value, a value put into web.Page.Data-like `any`
// and an `any` field of a view.
func TestTransportViewsCatchViolations(t *testing.T) {
	root, module := moduleRoot(t)
	// Inside the module (its imports must resolve), under a testdata
	// directory the go command ignores, unique to this run.
	dir, err := os.MkdirTemp(filepath.Join(root, "internal", "httpapi", "testdata"), "viewcheck")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	src := `package viewcheck

import (
	"encoding/json"

	"` + module + `/internal/catalog"
)

type page struct{ Data any }

type product = catalog.Product

func g(p *product) string { return p.AreaID }

func f(p catalog.Product) ([]byte, page) {
	_ = p.ID
	b, _ := json.Marshal(p)
	c, _ := json.Marshal(page{Data: []catalog.Product{p}})
	return append(b, c...), page{}
}
`
	if err := os.WriteFile(filepath.Join(dir, "v.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(transportViewUses(t, root, module, "internal/httpapi/testdata/"+filepath.Base(dir)), "\n")
	testtool.Contains(t, got,
		"v.go reads catalog.Product.ID",
		"v.go reads catalog.Product.AreaID",
		"v.go passes catalog.Product",
		"v.go passes []catalog.Product",
		"viewcheck.page.Data is an interface",
	)
}

// transportViewUses type-checks the package in dir (relative to root) from
// the compiler's export data of its imports and returns the offences, one
// line per file, kind and type (no line numbers, so the list is stable).
func transportViewUses(t *testing.T, root, module, dir string) []string {
	t.Helper()
	exports := exportData(t, root, "./"+dir)
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, filepath.Join(root, dir), func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range pkgs {
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	conf := types.Config{Importer: imp}
	if _, err := conf.Check(module+"/"+dir, fset, files, info); err != nil {
		t.Fatal(err)
	}
	c := viewChecker{module: module, found: map[string]bool{}, memo: map[types.Type]string{}}
	for _, f := range files {
		c.file = filepath.Base(fset.Position(f.Pos()).Filename)
		ast.Inspect(f, func(n ast.Node) bool {
			c.node(info, n)
			return true
		})
	}
	var out []string
	for k := range c.found {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// exportData maps each import path the package needs to its export data
// file, built by the go command (from its cache when nothing changed).
func exportData(t *testing.T, root, pkg string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", pkg)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			m[path] = file
		}
	}
	return m
}

type viewChecker struct {
	module string
	file   string
	found  map[string]bool
	memo   map[types.Type]string
}

// forbidden reports whether pkg (a full import path) is a domain or adapter
// package of the module.
func (c *viewChecker) forbidden(pkg *types.Package) bool {
	if pkg == nil {
		return false
	}
	rel, ok := strings.CutPrefix(pkg.Path(), c.module+"/")
	if !ok {
		return false
	}
	class := layers[rel]
	return class == "domain" || class == "adapter"
}

func (c *viewChecker) node(info *types.Info, n ast.Node) {
	switch n := n.(type) {
	case *ast.SelectorExpr:
		sel, ok := info.Selections[n]
		if !ok || sel.Kind() != types.FieldVal {
			return
		}
		owner, field := fieldOwner(sel)
		if owner != nil && c.forbidden(owner.Obj().Pkg()) {
			c.found[fmt.Sprintf("%s reads %s.%s.%s", c.file, owner.Obj().Pkg().Name(), owner.Obj().Name(), field)] = true
		}
	case *ast.CallExpr:
		sig, ok := info.Types[n.Fun].Type.(*types.Signature)
		if !ok || info.Types[n.Fun].IsType() {
			return
		}
		params := sig.Params()
		for i, arg := range n.Args {
			var pt types.Type
			switch {
			case sig.Variadic() && i >= params.Len()-1:
				pt = params.At(params.Len() - 1).Type()
				if n.Ellipsis == token.NoPos {
					pt = pt.(*types.Slice).Elem()
				}
			case i < params.Len():
				pt = params.At(i).Type()
			default:
				continue
			}
			c.into(pt, info.Types[arg].Type)
		}
	case *ast.CompositeLit:
		t := info.Types[n].Type
		if t == nil {
			return
		}
		switch u := t.Underlying().(type) {
		case *types.Struct:
			for i, e := range n.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					for j := 0; j < u.NumFields(); j++ {
						if id, ok := kv.Key.(*ast.Ident); ok && u.Field(j).Name() == id.Name {
							c.into(u.Field(j).Type(), info.Types[kv.Value].Type)
						}
					}
				} else if i < u.NumFields() {
					c.into(u.Field(i).Type(), info.Types[e].Type)
				}
			}
		case *types.Slice, *types.Array, *types.Map:
			elem := u.(interface{ Elem() types.Type }).Elem()
			for _, e := range n.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					e = kv.Value
				}
				c.into(elem, info.Types[e].Type)
			}
		}
	case *ast.AssignStmt:
		if len(n.Lhs) == len(n.Rhs) {
			for i := range n.Lhs {
				c.into(info.Types[n.Lhs[i]].Type, info.Types[n.Rhs[i]].Type)
			}
		}
	}
}

// into checks a value of type v that goes into a place of type to: when to
// is an interface and v is not, v must not reach a domain or adapter type.
func (c *viewChecker) into(to, v types.Type) {
	if to == nil || v == nil || !types.IsInterface(to) || types.IsInterface(v) {
		return
	}
	if via := c.reaches(v); via != "" {
		c.found[fmt.Sprintf("%s passes %s (%s)", c.file, typeName(v), via)] = true
	}
}

// reaches names the domain or adapter types a value of type t carries
// (through pointers, slices, maps and exported struct fields), "" for none;
// it records the `any` fields of the module's own types on the way.
func (c *viewChecker) reaches(t types.Type) string {
	if r, ok := c.memo[t]; ok {
		return r
	}
	c.memo[t] = "" // a recursive type reaches what its other fields reach
	set := map[string]bool{}
	c.walk(t, set)
	var names []string
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	r := strings.Join(names, ", ")
	c.memo[t] = r
	return r
}

func (c *viewChecker) walk(t types.Type, set map[string]bool) {
	t = types.Unalias(t)
	add := func(t types.Type) {
		if r := c.reaches(t); r != "" {
			for _, n := range strings.Split(r, ", ") {
				set[n] = true
			}
		}
	}
	switch u := t.(type) {
	case *types.Named:
		pkg := u.Obj().Pkg()
		if c.forbidden(pkg) && !plainScalar(u) {
			set[pkg.Name()+"."+u.Obj().Name()] = true
			return
		}
		if pkg == nil || !strings.HasPrefix(pkg.Path(), c.module) {
			return // the standard library and other modules
		}
		s, ok := u.Underlying().(*types.Struct)
		if !ok {
			add(u.Underlying())
			return
		}
		for i := 0; i < s.NumFields(); i++ {
			f := s.Field(i)
			if !f.Exported() && !f.Embedded() {
				continue
			}
			if it, ok := f.Type().Underlying().(*types.Interface); ok && it.NumMethods() == 0 {
				c.found[fmt.Sprintf("%s.%s.%s is an interface", pkg.Name(), u.Obj().Name(), f.Name())] = true
				continue
			}
			add(f.Type())
		}
	case *types.Pointer:
		add(u.Elem())
	case *types.Slice:
		add(u.Elem())
	case *types.Array:
		add(u.Elem())
	case *types.Map:
		add(u.Key())
		add(u.Elem())
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			add(u.Field(i).Type())
		}
	}
}

// plainScalar reports whether t is a number, string or bool under a name
// that does not change how it is written (no MarshalJSON, MarshalText or
// String): such a value is written as what it is, not as its package says.
func plainScalar(t *types.Named) bool {
	if _, ok := t.Underlying().(*types.Basic); !ok {
		return false
	}
	for _, m := range []string{"MarshalJSON", "MarshalText", "String"} {
		if obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(t), true, t.Obj().Pkg(), m); obj != nil {
			return false
		}
	}
	return true
}

// fieldOwner returns the named struct type that declares the selected field
// (following embedded fields) and the field's name.
func fieldOwner(sel *types.Selection) (*types.Named, string) {
	t := sel.Recv()
	var owner *types.Named
	var name string
	for _, i := range sel.Index() {
		t = types.Unalias(t)
		if p, ok := t.(*types.Pointer); ok {
			t = types.Unalias(p.Elem())
		}
		n, _ := t.(*types.Named)
		s, ok := t.Underlying().(*types.Struct)
		if !ok {
			return nil, ""
		}
		owner, name = n, s.Field(i).Name()
		t = s.Field(i).Type()
	}
	return owner, name
}

// typeName writes t with package names instead of paths.
func typeName(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string { return p.Name() })
}
