package store

// ClaimJobSQL is the claim statement of engine, for the plans that
// BenchmarkClaimBacklog prints.
func ClaimJobSQL(e Engine) string { return claimJobSQL(e, false) }
