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
// Bounded: it is emptied when full.
type ownerCache struct {
	mu sync.Mutex
	m  map[ownerKey]app.Owner
}

type ownerKey struct {
	kind       app.Capability
	id, secret string
}

const ownerCacheSize = 16384

func (c *ownerCache) get(k ownerKey) (app.Owner, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.m[k]
	return o, ok
}

func (c *ownerCache) put(k ownerKey, o app.Owner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= ownerCacheSize {
		c.m = make(map[ownerKey]app.Owner, 64)
	}
	c.m[k] = o
}
