// Package ident makes record identifiers of the form <prefix>-<kind>-<uuid>.
// The uuid is version 4 from crypto/rand, because coupon, ticket,
// restore-secret and download identifiers are capabilities: knowing one is
// the permission to use it, so they must be unguessable.
package ident

import (
	"strings"

	"github.com/google/uuid"
)

// Prefix makes identifiers with a fixed, service-specific prefix.
type Prefix string

// New returns "<prefix>-<kind>-<uuid v4>".
func (p Prefix) New(kind string) string {
	return string(p) + "-" + kind + "-" + uuid.NewString()
}

// Is reports whether id has the shape p.New(kind) produces.
func (p Prefix) Is(id, kind string) bool {
	head := string(p) + "-" + kind + "-"
	if !strings.HasPrefix(id, head) {
		return false
	}
	_, err := uuid.Parse(id[len(head):])
	return err == nil && len(id)-len(head) == 36
}
