package main

import (
	"testing"
	"time"
)

// TestIdempotencyKeysExpire: serve deletes stored Idempotency-Key
// responses after --idempotency-ttl (they hold coupon ids and restore
// secrets), so the key can be used again for another request afterwards,
// while within the TTL it replays.
func TestIdempotencyKeysExpire(t *testing.T) {
	t.Parallel()
	in, key := servePartner(t, sqliteEnv(t, map[string]string{"FAREBOX_IDEMPOTENCY_TTL": "1s", "FAREBOX_RATE_LIMIT": "0"}))
	ids := products(t, in.url(), key)
	h := map[string]string{"Idempotency-Key": "ttl-1"}
	first := call(in.url(), "POST", "/v9/ticketing/orders.json", key, map[string]any{"product_ids": []string{ids["single/adult"]}}, h)
	again := call(in.url(), "POST", "/v9/ticketing/orders.json", key, map[string]any{"product_ids": []string{ids["single/adult"]}}, h)
	if first.status != 201 || again.header.Get("Idempotency-Replayed") != "true" || string(again.body) != string(first.body) {
		t.Fatalf("within the TTL: %d / %d %q", first.status, again.status, again.header.Get("Idempotency-Replayed"))
	}
	waitFor(t, 20*time.Second, "the key to expire", func() bool {
		r := call(in.url(), "POST", "/v9/ticketing/orders.json", key, map[string]any{"product_ids": []string{ids["day/adult"]}}, h)
		switch r.status {
		case 422: // still stored: another body under the same key
			return false
		case 201:
			if r.header.Get("Idempotency-Replayed") != "false" || r.m()["order_id"] == first.m()["order_id"] {
				t.Fatalf("after the TTL: %s", r.body)
			}
			return true
		}
		t.Fatalf("after the TTL: %d %s", r.status, r.body)
		return false
	})
}
