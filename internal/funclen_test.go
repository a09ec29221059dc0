package internal_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"testing"
)

// maxFuncLines is the longest a production function may be (issue 29):
// longer ones are split into named steps.
const maxFuncLines = 120

// longFuncs are the production functions allowed over maxFuncLines, by
// "path name" (methods as Type.Method), each with its reason. An entry
// that no longer needs its place fails the test too, so the list only
// shrinks.
var longFuncs = map[string]string{
	// The route table: one line per route, read top to bottom.
	"internal/httpapi/routes.go Server.routes": "the route table",
}

// TestFunctionLength fails for a function (declaration to closing brace)
// over maxFuncLines in a non-test Go file of the module, unless longFuncs
// names it.
func TestFunctionLength(t *testing.T) {
	root, _ := moduleRoot(t)
	fset := token.NewFileSet()
	long := map[string]int{}
	productionFiles(t, root, fset, parser.SkipObjectResolution, func(rel string, f *ast.File) error {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				long[rel+" "+funcName(fd)] = n
			}
		}
		return nil
	})
	var over []string
	for k, n := range long {
		if _, ok := longFuncs[k]; !ok {
			over = append(over, fmt.Sprintf("%s: %d lines", k, n))
		}
	}
	sort.Strings(over)
	for _, o := range over {
		t.Errorf("%s (at most %d: split it into named steps)", o, maxFuncLines)
	}
	for k := range longFuncs {
		if _, ok := long[k]; !ok {
			t.Errorf("%s is no longer over %d lines (or gone): remove it from longFuncs", k, maxFuncLines)
		}
	}
}

// funcName is a function's name, a method's as Type.Method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
