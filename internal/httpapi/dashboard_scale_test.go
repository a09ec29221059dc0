package httpapi

import "testing"

// TestNiceScale: the usage chart's scale ends at a round value in four
// equal round steps, never below the largest day (issue 34: no 0/1/3 or
// 0/16/33 ticks).
func TestNiceScale(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ top, max, step int64 }{
		{0, 4, 1}, {1, 4, 1}, {3, 4, 1}, {4, 4, 1}, {5, 8, 2}, {33, 40, 10}, {99, 100, 25}, {101, 200, 50},
		{1000, 1000, 250}, {1001, 2000, 500}, {123456, 200000, 50000}, {9_000_000_000, 10_000_000_000, 2_500_000_000},
	} {
		max, step := niceScale(c.top)
		if max != c.max || step != c.step || max < c.top {
			t.Errorf("niceScale(%d) = %d, %d; want %d, %d", c.top, max, step, c.max, c.step)
		}
	}
}
