package pdf

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"unsafe" // go:linkname to the node slabs, and setting the per-document fields of a shared face

	pdflib "github.com/boxesandglue/baseline-pdf"
	"github.com/boxesandglue/boxesandglue/backend/document"
	"github.com/boxesandglue/boxesandglue/backend/node"
	"github.com/boxesandglue/boxesandglue/frontend"
)

// This file holds what Render needs from boxesandglue v0.2.14 that the
// library offers no API for. Both parts depend on that exact version (see
// go.mod) and are guarded by tests (TestNodeArenaBinding, TestHeapFlat,
// TestSharedFaces): a version bump that changes them fails those tests.
//
//  1. Node slabs. backend/node/arena.go allocates every node (glyph, glue,
//     box ...) from package-level slabs that only grow and are never reset.
//     A glyph points to its font, the font to its face and the face to the
//     PDF writer, so every document ever rendered stayed reachable (about
//     2 MB per invoice). resetNodeArenas empties the slabs after each
//     document. The slabs are also not safe for concurrent use, which is
//     why every render holds renderMu. Upstream has no reset function and
//     the module proxy offers no newer version; a patched copy via replace
//     would mean carrying 2.7 MB of third-party source.
//
//  2. Nothing parsed per document. A face (parsed OpenType tables and the
//     shaper with its GSUB/GPOS lookups) was parsed for every document, and
//     frontend.NewForWriter parses the English hyphenation patterns for
//     every document (a fifth of the render time) although we set German.
//
//     Fonts parsed once. A face (parsed OpenType tables and the shaper with
//     its GSUB/GPOS lookups) was parsed for every document. newFace copies a
//     face parsed once per process and gives it the per-document parts: the
//     PDF writer, its font object and the set of used characters (for
//     subsetting). The shared parts are only read while rendering, under
//     renderMu.
//
//     newFrontend copies a document made once by frontend.NewForWriter
//     (its registered post-line-break callback and default language) and
//     gives the copy a PDF writer and empty maps of its own.

// slab mirrors node.slab[T] (arena.go in boxesandglue v0.2.14).
type slab[T any] struct {
	chunks []*[8192]T
	pos    int
}

// reset drops every chunk but the first and zeroes the part of the first
// one that was used, so no node of an earlier document stays reachable and
// the next document reuses the first chunk without a new allocation.
func (s *slab[T]) reset() {
	if len(s.chunks) == 0 {
		return
	}
	first := s.chunks[0]
	used := s.pos
	if len(s.chunks) > 1 {
		used = len(first)
	}
	clear(first[:used])
	clear(s.chunks[1:])
	s.chunks = s.chunks[:1]
	s.pos = 0
}

//go:linkname glyphSlab github.com/boxesandglue/boxesandglue/backend/node.glyphSlab
var glyphSlab slab[node.Glyph]

//go:linkname glueSlab github.com/boxesandglue/boxesandglue/backend/node.glueSlab
var glueSlab slab[node.Glue]

//go:linkname kernSlab github.com/boxesandglue/boxesandglue/backend/node.kernSlab
var kernSlab slab[node.Kern]

//go:linkname hlistSlab github.com/boxesandglue/boxesandglue/backend/node.hlistSlab
var hlistSlab slab[node.HList]

//go:linkname vlistSlab github.com/boxesandglue/boxesandglue/backend/node.vlistSlab
var vlistSlab slab[node.VList]

//go:linkname penaltySlab github.com/boxesandglue/boxesandglue/backend/node.penaltySlab
var penaltySlab slab[node.Penalty]

//go:linkname ruleSlab github.com/boxesandglue/boxesandglue/backend/node.ruleSlab
var ruleSlab slab[node.Rule]

//go:linkname discSlab github.com/boxesandglue/boxesandglue/backend/node.discSlab
var discSlab slab[node.Disc]

//go:linkname langSlab github.com/boxesandglue/boxesandglue/backend/node.langSlab
var langSlab slab[node.Lang]

//go:linkname startStopSlab github.com/boxesandglue/boxesandglue/backend/node.startStopSlab
var startStopSlab slab[node.StartStop]

//go:linkname imageSlab github.com/boxesandglue/boxesandglue/backend/node.imageSlab
var imageSlab slab[node.Image]

// errArenaLayout reports a library whose slabs are not the ones mirrored
// here; Render refuses to run rather than clear memory it does not own.
var errArenaLayout = errors.New("pdf: boxesandglue's node slabs changed (version bump?); see engine.go")

// checkArenas verifies once per process, before the first reset, that the
// mirrored slab is the library's and its chunks hold exactly 8192 nodes: it
// allocates glyphs until a chunk starts, then checks that the next 8191 come
// from that chunk in order and the one after from a new chunk. Nothing is
// written through the mirror before this has passed.
var checkArenas = sync.OnceValue(func() error {
	for n := 0; ; n++ {
		if n > 8192 {
			return errArenaLayout
		}
		before := len(glyphSlab.chunks)
		g := node.NewGlyph()
		if len(glyphSlab.chunks) == before {
			continue
		}
		if glyphSlab.pos != 1 || g != &glyphSlab.chunks[len(glyphSlab.chunks)-1][0] {
			return errArenaLayout
		}
		break
	}
	chunk := glyphSlab.chunks[len(glyphSlab.chunks)-1]
	for i := 1; i < len(chunk); i++ {
		if node.NewGlyph() != &chunk[i] {
			return errArenaLayout
		}
	}
	chunks := len(glyphSlab.chunks)
	if node.NewGlyph() != &glyphSlab.chunks[len(glyphSlab.chunks)-1][0] || len(glyphSlab.chunks) != chunks+1 {
		return errArenaLayout
	}
	return nil
})

// resetNodeArenas releases every node allocated so far. Call it only while
// holding renderMu and when no node of the finished document is used again.
func resetNodeArenas() {
	glyphSlab.reset()
	glueSlab.reset()
	kernSlab.reset()
	hlistSlab.reset()
	vlistSlab.reset()
	penaltySlab.reset()
	ruleSlab.reset()
	discSlab.reset()
	langSlab.reset()
	startStopSlab.reset()
	imageSlab.reset()
}

// faceProto is a font parsed once per process: embedded (data) or read
// from the font directory (path relative to it, index in a collection).
type faceProto struct {
	name  string
	data  []byte
	path  string
	index int
	once  sync.Once
	face  *pdflib.Face
	err   error
}

var (
	regularFace = &faceProto{name: "DejaVuSans", data: fontRegular}
	boldFace    = &faceProto{name: "DejaVuSans-Bold", data: fontBold}
)

func (p *faceProto) parsed() (*pdflib.Face, error) {
	p.once.Do(func() {
		data := p.data
		if data == nil {
			if data, p.err = os.ReadFile(filepath.Join(fontDir(), p.path)); p.err != nil {
				return
			}
			p.data = data
		}
		p.face, p.err = pdflib.NewPDFWriter(io.Discard).NewFaceFromData(data, p.index)
	})
	return p.face, p.err
}

// docFace returns a face for the document that shares the parsed tables
// and shaper with every other document and is registered with the
// document, so that its used glyphs are subset into the PDF.
func (p *faceProto) docFace(fe *frontend.Document) (*pdflib.Face, error) {
	proto, err := p.parsed()
	if err != nil {
		return nil, err
	}
	f := new(pdflib.Face)
	*f = *proto // the prototype never subsets, so its glyph map stays nil
	pw := fe.Doc.PDFWriter
	for _, set := range []struct {
		field string
		value any
	}{{"pw", pw}, {"fontobject", pw.NewObject()}, {"usedChar", map[int]bool{}}} {
		if err := setField(f, set.field, set.value); err != nil {
			return nil, err
		}
	}
	fe.Doc.Faces = append(fe.Doc.Faces, f)
	return f, nil
}

// sourceFor returns a font source whose face is f (a docFace of p).
func (p *faceProto) sourceFor(f *pdflib.Face) (*frontend.FontSource, error) {
	fs := &frontend.FontSource{Name: p.name, Data: p.data, FontFeatures: noLigatures}
	if err := setField(fs, "face", f); err != nil {
		return nil, err
	}
	return fs, nil
}

// setField sets the unexported field name of *ptr; the value's type must be
// the field's type exactly.
func setField(ptr any, name string, value any) error {
	v := reflect.ValueOf(ptr).Elem()
	f := v.FieldByName(name)
	nv := reflect.ValueOf(value)
	if !f.IsValid() || f.Type() != nv.Type() {
		return fmt.Errorf("pdf: %s has no field %s of type %s (boxesandglue version changed?)", v.Type(), name, nv.Type())
	}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(nv)
	return nil
}

// frontendTemplate is a frontend document made once, never written.
var frontendTemplate = sync.OnceValues(func() (*frontend.Document, error) {
	return frontend.NewForWriter(io.Discard)
})

// newFrontend is frontend.NewForWriter(w) without parsing hyphenation
// patterns again: a copy of the template with its own PDF document, every
// map (font families, fonts and colours used) new and empty, and every
// slice (the callbacks) copied.
func newFrontend(w io.Writer) (*frontend.Document, error) {
	tpl, err := frontendTemplate()
	if err != nil {
		return nil, err
	}
	fe := new(frontend.Document)
	*fe = *tpl
	v := reflect.ValueOf(fe).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
		switch f.Kind() {
		case reflect.Map:
			f.Set(reflect.MakeMap(f.Type()))
		case reflect.Slice:
			if !f.IsNil() {
				f.Set(reflect.AppendSlice(reflect.MakeSlice(f.Type(), 0, f.Len()), f))
			}
		}
	}
	lang := tpl.Doc.DefaultLanguage
	fe.Doc = document.NewDocument(w)
	fe.Doc.DefaultLanguage = lang
	return fe, nil
}
