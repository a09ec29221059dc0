package ratelimit_test

import (
	"testing"

	"github.com/farebox/farebox/internal/ratelimit"
	"github.com/farebox/farebox/internal/ratelimit/ratelimittest"
)

func TestLocalConformance(t *testing.T) {
	ratelimittest.Run(t, func(t *testing.T) func() ratelimit.Store {
		s := &ratelimit.Local{}
		return func() ratelimit.Store { return s }
	})
}
