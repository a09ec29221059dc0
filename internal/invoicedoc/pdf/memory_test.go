package pdf

import (
	"io"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	"github.com/boxesandglue/boxesandglue/backend/node"
	"github.com/boxesandglue/boxesandglue/frontend"

	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/invoicedoc/xrechnung"
	"github.com/farebox/farebox/internal/testtool"
)

// liveHeap is the heap in use after a forced collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestHeapFlat renders a few hundred documents of every flow and fails when
// the live heap after GC keeps growing: the mean of the last third of the
// samples may exceed the first third's by at most 10 % (or 1 MiB on a small
// heap). Before the node slabs were reset every document stayed reachable
// (about 2 MB each, hundreds of MB here).
func TestHeapFlat(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Soak)
	flows := invoicetest.AllFlows()
	ciis := make([][]byte, len(flows))
	for i, f := range flows {
		if f.Doc.HasElectronic() && f.Doc.Kind != invoicedoc.KindPaymentNotice { // as render() in pdf_test.go
			var err error
			if ciis[i], err = xrechnung.EncodeCII(f.Doc); err != nil {
				t.Fatal(err)
			}
		}
	}
	const docs, every = 300, 10
	var samples []uint64
	for n := range docs {
		i := n % len(flows)
		if _, err := Render(flows[i].Doc, ciis[i]); err != nil {
			t.Fatal(err)
		}
		if (n+1)%every == 0 {
			samples = append(samples, liveHeap())
		}
	}
	third := len(samples) / 3
	mean := func(s []uint64) uint64 {
		var sum uint64
		for _, v := range s {
			sum += v
		}
		return sum / uint64(len(s))
	}
	first, last := mean(samples[:third]), mean(samples[len(samples)-third:])
	allowed := max(first/10, 1<<20)
	t.Logf("live heap after GC: first third %.1f MiB, last third %.1f MiB (%d documents)", float64(first)/(1<<20), float64(last)/(1<<20), docs)
	if last > first+allowed {
		t.Errorf("live heap grows with every document: %d → %d bytes over %d documents; samples %v", first, last, docs, samples)
	}
}

// TestNodeArenaBinding proves that the linknamed slabs are the library's
// own: after a render they are empty, and the next node the library
// allocates is the first slot of the kept chunk, which is all zero.
func TestNodeArenaBinding(t *testing.T) {
	if _, err := Render(invoicetest.SingleCustomer(), nil); err != nil {
		t.Fatal(err)
	}
	renderMu.Lock()
	defer renderMu.Unlock()
	defer resetNodeArenas()
	if len(glyphSlab.chunks) != 1 || glyphSlab.pos != 0 {
		t.Fatalf("glyph slab after a render: %d chunks, pos %d; want 1 chunk, pos 0", len(glyphSlab.chunks), glyphSlab.pos)
	}
	for i := range glyphSlab.chunks[0] {
		if !reflect.ValueOf(&glyphSlab.chunks[0][i]).Elem().IsZero() {
			t.Fatalf("glyph slot %d still holds a node of the rendered document", i)
		}
	}
	if err := checkArenas(); err != nil {
		t.Fatal(err)
	}
	if g := node.NewGlyph(); g != &glyphSlab.chunks[0][0] {
		t.Fatal("node.NewGlyph does not allocate from the linknamed slab: the go:linkname binding is broken")
	}
	if glyphSlab.pos != 1 {
		t.Fatalf("slab position %d after one allocation", glyphSlab.pos)
	}
}

// TestSharedFaces checks that a document's face shares the parsed tables
// and the shaper with the process-wide prototype but is its own object.
func TestSharedFaces(t *testing.T) {
	renderMu.Lock()
	defer renderMu.Unlock()
	defer resetNodeArenas()
	proto, err := regularFace.parsed()
	if err != nil {
		t.Fatal(err)
	}
	var faces []any
	for range 2 {
		fe := testtool.Must(frontend.NewForWriter(io.Discard))(t)
		f := testtool.Must(fe.LoadFace(testtool.Must(regularFace.source(fe))(t)))(t)
		if f == proto || f.Shaper != proto.Shaper || f.OTFace() != proto.OTFace() {
			t.Fatalf("document face %p: shaper shared %v, tables shared %v", f, f.Shaper == proto.Shaper, f.OTFace() == proto.OTFace())
		}
		if len(fe.Doc.Faces) != 1 || fe.Doc.Faces[0] != f {
			t.Fatalf("face not registered with the document: %v", fe.Doc.Faces)
		}
		faces = append(faces, f)
	}
	if faces[0] == faces[1] {
		t.Fatal("two documents got the same face object")
	}
}

// TestNewFrontendMatchesLibrary compares a document from newFrontend with
// one from frontend.NewForWriter field by field: the same maps (new and
// empty), slices (the same callbacks), default language and other values,
// and a PDF document of its own. A library version that sets up anything
// else fails here.
func TestNewFrontendMatchesLibrary(t *testing.T) {
	renderMu.Lock()
	defer renderMu.Unlock()
	lib, err := frontend.NewForWriter(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := frontendTemplate()
	if err != nil {
		t.Fatal(err)
	}
	a, err := newFrontend(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newFrontend(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	va, vb, vl, vt := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem(), reflect.ValueOf(lib).Elem(), reflect.ValueOf(tpl).Elem()
	for i := range va.NumField() {
		name := va.Type().Field(i).Name
		fa, fb, fl, ft := va.Field(i), vb.Field(i), vl.Field(i), vt.Field(i)
		switch fa.Kind() {
		case reflect.Map:
			if fa.IsNil() || fa.Len() != 0 || fa.UnsafePointer() == fb.UnsafePointer() || fa.UnsafePointer() == ft.UnsafePointer() {
				t.Errorf("%s: want a new empty map per document", name)
			}
		case reflect.Slice:
			if fa.Len() != fl.Len() || (fa.Len() > 0 && fa.UnsafePointer() == ft.UnsafePointer()) {
				t.Errorf("%s: %d entries (library %d), shared with the template %v", name, fa.Len(), fl.Len(), fa.Len() > 0 && fa.UnsafePointer() == ft.UnsafePointer())
			}
		case reflect.Pointer:
			if name == "Doc" {
				if a.Doc == b.Doc || a.Doc == tpl.Doc || a.Doc.PDFWriter == nil {
					t.Error("Doc: want a PDF document per frontend document")
				}
				if a.Doc.DefaultLanguage == nil || a.Doc.DefaultLanguage.Name != lib.Doc.DefaultLanguage.Name {
					t.Errorf("default language %v, library %v", a.Doc.DefaultLanguage, lib.Doc.DefaultLanguage)
				}
				continue
			}
			if fa.IsNil() != fl.IsNil() {
				t.Errorf("%s: nil %v, library nil %v", name, fa.IsNil(), fl.IsNil())
			}
		case reflect.Func, reflect.Interface:
			if fa.IsNil() != fl.IsNil() {
				t.Errorf("%s: nil %v, library nil %v", name, fa.IsNil(), fl.IsNil())
			}
		default:
			if !reflect.DeepEqual(reflect.NewAt(fa.Type(), unsafe.Pointer(fa.UnsafeAddr())).Elem().Interface(),
				reflect.NewAt(fl.Type(), unsafe.Pointer(fl.UnsafeAddr())).Elem().Interface()) {
				t.Errorf("%s differs from the library's", name)
			}
		}
	}
}

// source returns a font source for the document whose face is docFace's.
func (p *faceProto) source(fe *frontend.Document) (*frontend.FontSource, error) {
	f, err := p.docFace(fe)
	if err != nil {
		return nil, err
	}
	return p.sourceFor(f)
}
