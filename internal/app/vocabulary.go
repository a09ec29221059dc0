package app

import (
	"github.com/farebox/farebox/internal/account"
)

// The vocabulary the transport shares with app: who calls (a principal in
// an environment); how a request is billed is package billing's. The aliases keep one type
// per idea (app's use cases take account.Principal) while the transport
// names only app.

// Principal is an authenticated caller.
type Principal = account.Principal

// Environment is live or test.
type Environment = account.Environment

// Owner is the account and environment a capability record belongs to (the
// route table bills keyless requests to it).
type Owner = account.Owner

// Environments are every environment, in a fixed order (metric series).
var Environments = []Environment{account.Live, account.Test}
