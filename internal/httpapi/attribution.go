package httpapi

import (
	"net/http"
	"sync"

	"github.com/farebox/farebox/internal/app"
)

// attribute bills a keyless request to the account owning the record its
// route names (the route's billing): before the handler runs, whatever the
// handler answers. A request naming no record (an unknown id, a wrong
// download identifier) is billed to nobody. Keyed requests bill their key
// (authenticate); public documents bill nobody.
func (s *Server) attribute(b billing, r *http.Request) error {
	key, ok := ownerKeyOf(b, r)
	if !ok {
		return nil
	}
	if o, ok := s.owners.get(key); ok {
		billTo(r, o)
		return nil
	}
	o, found, err := s.app.CapabilityOwner(r.Context(), key.kind, key.id, key.secret)
	if err != nil || !found {
		return err
	}
	s.owners.put(key, o)
	billTo(r, o)
	return nil
}

// ownerKeyOf names the record a request bills by (its route's billing);
// false for routes that bill a key or nobody.
func ownerKeyOf(b billing, r *http.Request) (ownerKey, bool) {
	var c app.Capability
	switch b {
	case billCoupon:
		c = app.CapabilityCoupon
	case billTicket:
		c = app.CapabilityTicket
	case billInvoice:
		c = app.CapabilityInvoiceDocument
	default:
		return ownerKey{}, false
	}
	return ownerKey{c, r.PathValue(billParam[b]), r.PathValue("identifier")}, true
}

// ownerCache remembers the owners of recently named records: a record's
// owner never changes and records are never deleted, so an entry never goes
// stale; only records that exist are kept, so guessed ids fill nothing.
// SDKs poll a ticket and its passes, which then costs no extra read.
// Bounded in two generations: when the current one holds
// ownerCacheGeneration entries it becomes the previous one and the one
// before is dropped; a hit in the previous generation moves to the current.
// So it holds between one and two generations once warm, and what is
// polled stays. (Emptied at 16,384 as it was, its memory grew for the
// first 16,384 records and fell to nothing after: the soak's 10 % check
// failed on that climb, issue 33 §5.)
type ownerCache struct {
	mu        sync.Mutex
	cur, prev map[ownerKey]app.Owner
}

type ownerKey struct {
	kind       app.Capability
	id, secret string
}

// ownerCacheGeneration is one generation's size: two hold the records of
// the last few thousand requests that name one (about 0.5 MiB at most).
const ownerCacheGeneration = 2048

func (c *ownerCache) get(k ownerKey) (app.Owner, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o, ok := c.cur[k]; ok {
		return o, true
	}
	o, ok := c.prev[k]
	if ok {
		c.putLocked(k, o)
	}
	return o, ok
}

func (c *ownerCache) put(k ownerKey, o app.Owner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, o)
}

func (c *ownerCache) putLocked(k ownerKey, o app.Owner) {
	if c.cur == nil || len(c.cur) >= ownerCacheGeneration {
		c.prev, c.cur = c.cur, make(map[ownerKey]app.Owner, ownerCacheGeneration)
	}
	c.cur[k] = o
}
