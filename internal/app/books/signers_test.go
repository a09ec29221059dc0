package books_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/config/configtest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestConcurrentSigners: two instances on one database (two stores, as
// two processes have), the second's clock an hour behind, sign at the
// same time after every change with the shared books key: each grown
// chain is signed once, the counter runs 1, 2, 3, … without a gap or a
// repeat, a later counter is never dated earlier, and the books verify
// clean. A third instance with a key of its own signs nothing that was
// signed already. Both engines.
func TestConcurrentSigners(t *testing.T) {
	storetest.EachEngineWith(t, newChainBed, func(t *testing.T, b *chainBed) {
		twin, err := store.Open(b.ctx, b.opts)
		if err != nil {
			t.Fatal(err)
		}
		defer twin.Close()
		behind := books.New(store.NewView[books.Queries](twin), clocktest.NewFixed(start.Add(-time.Hour)), "farebox",
			configtest.Defaults().Seller, nil, nil)
		const rounds = 8
		for r := range rounds {
			b.change(t, 100+r)
			var wg sync.WaitGroup
			got := make([][]books.CheckpointJSON, 2)
			errs := make([]error, 2)
			for i, bk := range []*books.Books{b.books, behind} {
				wg.Go(func() { got[i], errs[i] = bk.Checkpoint(b.ctx, b.signer) })
			}
			wg.Wait()
			if errs[0] != nil || errs[1] != nil || len(got[0])+len(got[1]) != 1 {
				t.Fatalf("round %d: the two signers signed %d and %d checkpoints (%v, %v)", r, len(got[0]), len(got[1]), errs[0], errs[1])
			}
		}
		cps, err := b.books.Checkpoints(b.ctx)
		if err != nil || len(cps) != rounds+1 {
			t.Fatalf("%d checkpoints (%v), want %d", len(cps), err, rounds+1)
		}
		for i, c := range cps {
			if c.Counter != int64(i+1) || c.TreeSize != b.size+int64(i) {
				t.Errorf("checkpoint %d: counter %d, size %d", i, c.Counter, c.TreeSize)
			}
			if i > 0 && c.SignedAt.Before(cps[i-1].SignedAt) {
				t.Errorf("checkpoint #%d is dated %s, before #%d (%s)", c.Counter, c.SignedAt, cps[i-1].Counter, cps[i-1].SignedAt)
			}
		}
		b.exports = cps
		expect(t, b.verify(t, true), map[string]int{})

		other, err := books.FileSigner(filepath.Join(t.TempDir(), books.KeyFile), true)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, bk := range []*books.Books{b.books, behind} {
			wg.Go(func() {
				if cps, err := bk.Checkpoint(b.ctx, other); err != nil || len(cps) != 0 {
					t.Errorf("another key signed an unchanged chain again: %+v %v", cps, err)
				}
			})
		}
		wg.Wait()
	})
}
