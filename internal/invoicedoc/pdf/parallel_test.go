package pdf

import (
	"bytes"
	"sync"
	"testing"

	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
)

// TestParallelRender renders concurrently (the job queue runs several
// workers); run with -race. The text of every result must be complete.
func TestParallelRender(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	outs := make([][]byte, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := Render(invoicetest.SingleCustomer(), nil)
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
