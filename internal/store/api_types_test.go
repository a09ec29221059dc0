package store_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/store"
)

// TestAPIHandsOutDomainTypes: the store maps rows to the types of the
// package that owns the concept (ticketing, invoicing, gtfs, idempotency,
// jobs, ...) and nothing else. No exported method of Q, JobQueue or Store
// takes or returns a record type of package store or a database/sql type,
// at any depth (slices, maps, pointers, functions, struct fields of the
// domain types), so no row type or NULL wrapper reaches app or the handlers.
// Only the store's own handles and settings may appear, and DB/ReaderDB,
// which hand the pool to the process (metrics) and to tests.
func TestAPIHandsOutDomainTypes(t *testing.T) {
	const storePkg = "github.com/farebox/farebox/internal/store"
	handles := map[string]bool{"Q": true, "Store": true, "JobQueue": true, "Engine": true, "Options": true, "LedgerDurability": true}
	poolAccess := map[string]bool{"Store.DB": true, "Store.ReaderDB": true}
	checked := 0
	for _, recv := range []reflect.Type{reflect.TypeOf(store.Q{}), reflect.TypeOf(&store.Store{}), reflect.TypeOf(store.JobQueue{})} {
		name := strings.TrimPrefix(recv.String(), "*store.")
		name = strings.TrimPrefix(name, "store.")
		for i := 0; i < recv.NumMethod(); i++ {
			m := recv.Method(i)
			where := name + "." + m.Name
			if poolAccess[where] {
				continue
			}
			seen := map[reflect.Type]bool{}
			var walk func(t reflect.Type, path string)
			walk = func(ty reflect.Type, path string) {
				if seen[ty] {
					return
				}
				seen[ty] = true
				checked++
				pkg := ty.PkgPath()
				switch {
				case pkg == storePkg && !handles[ty.Name()]:
					t.Errorf("%s: %s is store.%s; define the record in its domain package and map rows to it", where, path, ty.Name())
				case pkg == "database/sql" || strings.HasPrefix(pkg, "database/sql/"):
					t.Errorf("%s: %s is %s; convert to a Go or domain type inside the store", where, path, ty)
				}
				switch ty.Kind() {
				case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
					walk(ty.Elem(), path+"[elem]")
				case reflect.Map:
					walk(ty.Key(), path+"[key]")
					walk(ty.Elem(), path+"[value]")
				case reflect.Func:
					for j := 0; j < ty.NumIn(); j++ {
						walk(ty.In(j), path+"(in)")
					}
					for j := 0; j < ty.NumOut(); j++ {
						walk(ty.Out(j), path+"(out)")
					}
				case reflect.Struct:
					if pkg == storePkg || !strings.HasPrefix(pkg, "github.com/farebox/farebox/") {
						return // the store's handles, and library types (time.Time)
					}
					for _, f := range reflect.VisibleFields(ty) {
						if f.IsExported() {
							walk(f.Type, path+"."+f.Name)
						}
					}
				}
			}
			// In(0) is the receiver.
			for j := 1; j < m.Type.NumIn(); j++ {
				walk(m.Type.In(j), "parameter "+m.Type.In(j).String())
			}
			for j := 0; j < m.Type.NumOut(); j++ {
				walk(m.Type.Out(j), "result "+m.Type.Out(j).String())
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d types checked; is the walk broken?", checked)
	}
}
