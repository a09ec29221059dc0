package httpapi

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/ratelimit"
)

// RateLimits is a per-API-key token bucket: Rate requests per second with
// bursts of Burst. Responses to authenticated requests carry the IETF
// RateLimit-Policy and RateLimit fields; a refused request gets 429 with
// Retry-After. The buckets live where Deps.Limits says: in this process
// (each instance limits on its own, so N instances allow N times the
// rate), or shared by every instance (Redis, docs/scaling.md).
type RateLimits struct {
	Rate  float64
	Burst int
}

// maxLimiters bounds the in-process per-key buckets; past it the fullest
// are dropped (they then start full again, which only ever errs on the
// generous side).
const maxLimiters = 100_000

// allow takes a token for key from store, sets the rate-limit headers on h
// and returns a RateLimited error when the bucket is empty.
func (l *RateLimits) allow(ctx context.Context, store ratelimit.Store, key string, h http.Header, now time.Time) error {
	if l == nil || l.Rate <= 0 {
		return nil
	}
	lim := ratelimit.Limit{Rate: l.Rate, Burst: l.Burst}
	got, err := store.Take(ctx, "key:"+key, lim, now)
	if err != nil { // a store without a fallback: the request is not refused for it
		got = ratelimit.Taken{OK: true, Tokens: float64(l.Burst)}
	}
	tokens := got.Tokens
	window := int(math.Ceil(float64(l.Burst) / l.Rate))
	h.Set("RateLimit-Policy", fmt.Sprintf(`"per-key";q=%d;w=%d`, l.Burst, window))
	remaining := int(math.Max(0, math.Floor(tokens)))
	reset := int(math.Ceil((float64(l.Burst) - tokens) / l.Rate))
	h.Set("RateLimit", fmt.Sprintf(`"per-key";r=%d;t=%d`, remaining, reset))
	if got.OK {
		return nil
	}
	wait := int(math.Ceil((1 - tokens) / l.Rate))
	if wait < 1 {
		wait = 1
	}
	h.Set("Retry-After", strconv.Itoa(wait))
	return apperr.E("ratelimit", apperr.RateLimited, CodeRateLimited,
		fmt.Sprintf("too many requests for this API key; retry in %d s", wait))
}
