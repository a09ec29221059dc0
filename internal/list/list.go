// Package list holds what every cursor-paginated list of an account's
// records shares (docs/lists.md): the query, the cursor and the page.
package list

import (
	"time"

	"github.com/farebox/farebox/internal/account"
)

// Cursor is the position of a record in a list: lists are newest first by
// (CreatedAt, ID).
type Cursor struct {
	CreatedAt time.Time
	ID        string
}

// Query is the part of a list request common to all lists.
type Query struct {
	AccountID   string
	Environment account.Environment
	// Limit is the page size; After and Before (at most one set) are the
	// cursors of starting_after and ending_before.
	Limit         int
	After, Before *Cursor
	// CreatedGTE and CreatedLT bound the creation time when set.
	CreatedGTE, CreatedLT *time.Time
}

// Page is one page of a list, newest first. HasMore says whether more
// records lie beyond it in the direction of the request (older for a first
// page or starting_after, newer for ending_before).
type Page[T any] struct {
	Items   []T
	HasMore bool
}
