package pdf

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
)

// TestParallelRender renders concurrently (the job queue runs several
// workers), half of the documents in other scripts, while Drawable checks
// text as the API does; run with -race. The text of every result must be complete.
func TestParallelRender(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	outs := make([][]byte, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := invoicetest.SingleCustomer()
			if i%2 == 1 {
				// scripts set by text.go, with fonts loaded on first use
				d.Texts.Notes = "הערה 12 · عنوان · 東京 · 😀 · 𝔘𝔫𝔦"
			}
			// the API checks text while documents render
			if _, ok := Drawable("שלום 中文 😀 𝔘"); !ok {
				errs <- errors.New("Drawable refused drawable text")
				return
			}
			b, err := Render(d, nil)
			if err != nil {
				errs <- err
				return
			}
			outs[i] = b
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, b := range outs {
		if !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.Contains(b, []byte("%%EOF")) {
			t.Errorf("render %d incomplete", i)
		}
	}
}
