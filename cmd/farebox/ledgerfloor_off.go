//go:build !ledgerfloor

package main

import (
	"log/slog"

	"github.com/farebox/farebox/internal/usage"
)

// ledgerFloor is nil in every normal build: the ledger is the configured
// one. Built with -tags ledgerfloor (bench/ledger-floor.sh only) it can
// replace the ledger's writer by a wait (ledgerfloor.go).
func ledgerFloor(*slog.Logger) usage.Recorder { return nil }
