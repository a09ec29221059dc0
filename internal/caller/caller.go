// Package caller is the vocabulary of who a request acts for, which every
// layer reads: the store scopes its rows by account and environment, the
// use cases authorise by it, and the transport limits, scopes
// Idempotency-Keys and bills by it. It is kernel, like the clock and the
// error kinds, so that the transport may read it without a copy per
// use-case package (docs/architecture.md, "Views at the door"); the
// account package, which owns accounts and keys, declares its names as
// aliases of these.
package caller

// Environment separates test from live data. Records never cross environments.
type Environment string

const (
	Live Environment = "live"
	Test Environment = "test"
)

// Principal is the authenticated caller of a request: the account and the
// key it called with, and the key's environment.
type Principal struct {
	AccountID   string
	AccountName string
	KeyID       string
	Environment Environment
}

// Owner is the account and environment a record belongs to: a keyless
// request that names the record (a coupon, a ticket, an invoice document)
// is billed to it.
type Owner struct {
	AccountID   string
	Environment Environment
}
