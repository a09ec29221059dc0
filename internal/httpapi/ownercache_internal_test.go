package httpapi

import (
	"fmt"
	"testing"

	"github.com/farebox/farebox/internal/app"
)

// TestOwnerCacheBounded: however many records are named, the cache holds
// at most two generations; the last generation's records are hit, long
// forgotten ones are not, and a record polled all along stays.
func TestOwnerCacheBounded(t *testing.T) {
	t.Parallel()
	var c ownerCache
	key := func(i int) ownerKey { return ownerKey{app.CapabilityTicket, fmt.Sprint("t", i), "s"} }
	polled := ownerKey{app.CapabilityInvoiceDocument, "polled", "s"}
	c.put(polled, app.Owner{AccountID: "acc-polled"})
	const n = 10 * ownerCacheGeneration
	for i := range n {
		c.put(key(i), app.Owner{AccountID: fmt.Sprint("acc", i)})
		if i%100 == 0 {
			if o, ok := c.get(polled); !ok || o.AccountID != "acc-polled" {
				t.Fatalf("the polled record fell out after %d others", i)
			}
		}
		if size := len(c.cur) + len(c.prev); size > 2*ownerCacheGeneration {
			t.Fatalf("%d entries after %d records", size, i+1)
		}
	}
	for i := n - ownerCacheGeneration/2; i < n; i++ {
		if o, ok := c.get(key(i)); !ok || o.AccountID != fmt.Sprint("acc", i) {
			t.Fatalf("recent record %d: %v %v", i, o, ok)
		}
	}
	if _, ok := c.get(key(0)); ok {
		t.Error("the first record is still cached after ten generations")
	}
}
