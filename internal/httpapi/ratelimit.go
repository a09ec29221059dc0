package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"golang.org/x/time/rate"
)

// RateLimits is a per-API-key token bucket (per instance): Rate requests per
// second with bursts of Burst. Responses to authenticated requests carry the
// IETF RateLimit-Policy and RateLimit fields; a refused request gets 429 with
// Retry-After. Instances limit independently, so N instances allow N times
// the rate; cluster-wide quotas would go through the database.
type RateLimits struct {
	Rate  float64
	Burst int

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

// maxLimiters bounds the map; past it the map is reset (keys then start
// with a full bucket, which only ever errs on the generous side).
const maxLimiters = 100_000

func (l *RateLimits) limiter(key string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limiters == nil || len(l.limiters) > maxLimiters {
		l.limiters = map[string]*rate.Limiter{}
	}
	lim := l.limiters[key]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(l.Rate), l.Burst)
		l.limiters[key] = lim
	}
	return lim
}

// allow takes a token for key, sets the rate-limit headers on h and returns
// a RateLimited error when the bucket is empty.
func (l *RateLimits) allow(key string, h http.Header, now time.Time) error {
	if l == nil || l.Rate <= 0 {
		return nil
	}
	lim := l.limiter(key)
	ok := lim.AllowN(now, 1)
	tokens := lim.TokensAt(now)
	window := int(math.Ceil(float64(l.Burst) / l.Rate))
	h.Set("RateLimit-Policy", fmt.Sprintf(`"per-key";q=%d;w=%d`, l.Burst, window))
	remaining := int(math.Max(0, math.Floor(tokens)))
	reset := int(math.Ceil((float64(l.Burst) - tokens) / l.Rate))
	h.Set("RateLimit", fmt.Sprintf(`"per-key";r=%d;t=%d`, remaining, reset))
	if ok {
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
