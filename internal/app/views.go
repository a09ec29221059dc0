package app

import (
	"time"

	"github.com/farebox/farebox/internal/app/kit"
)

// timestamp marshals as RFC 3339 UTC with whole seconds (kit.Timestamp).
type timestamp = kit.Timestamp

func tsPtr(t *time.Time) *timestamp { return kit.TimestampPtr(t) }
