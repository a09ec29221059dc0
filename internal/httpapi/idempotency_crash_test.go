package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"github.com/farebox/farebox/internal/idempotency"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
)

// TestIdempotencyKeyOfACrashedRequest replays what an instance leaves
// behind when it dies mid-request: a claimed Idempotency-Key without a
// stored answer. If the request's transaction had committed (the claim's
// committed flag), a retry after the lease is refused with 409
// idempotency_key_outcome_unknown and nothing runs again; if it had not,
// the retry runs the request once.
func TestIdempotencyKeyOfACrashedRequest(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		body := `{"product_ids":["` + ids["single/adult"] + `"]}`
		path := "/v9/ticketing/orders.json"
		sum := sha256.Sum256([]byte("POST " + path + "?\n" + body))
		hash := hex.EncodeToString(sum[:])
		scope := "account:" + e.AccountID + ":live"
		ctx := context.Background()
		crash := func(key string, committed bool) {
			if err := e.Store.Write(ctx, func(q store.Q) error {
				_, _, err := q.ClaimIdempotencyKey(ctx, scope, key, hash, e.Clock.Now(), time.Minute)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if committed {
				claim := idempotency.Claim{Scope: scope, Key: key}
				if err := e.Store.WriteClaimed(ctx, claim, func(store.Q) error { return nil }); err != nil {
					t.Fatal(err)
				}
			}
		}
		crash("done-before-crash", true)
		crash("nothing-done", false)
		post := func(key string) *apitest.Resp {
			return e.Do(apitest.Req{Method: "POST", Path: path, Key: e.LiveKey, Body: body, Header: map[string]string{"Idempotency-Key": key}})
		}
		// Within the lease both are still in flight.
		for _, k := range []string{"done-before-crash", "nothing-done"} {
			if r := post(k); r.Status != 409 || r.Map(t)["code"] != "idempotency_key_in_flight" {
				t.Errorf("%s within the lease: %d %s", k, r.Status, r.Body)
			}
		}
		e.Clock.Advance(2 * time.Minute)
		before := counts(t, e)
		r := post("done-before-crash")
		if r.Status != 409 || r.Map(t)["code"] != "idempotency_key_outcome_unknown" {
			t.Errorf("committed claim after the lease: %d %s", r.Status, r.Body)
		}
		if after := counts(t, e); after["orders"] != before["orders"] {
			t.Error("a committed request ran again")
		}
		r = post("nothing-done")
		if r.Status != 201 || r.Header.Get("Idempotency-Replayed") != "false" {
			t.Errorf("abandoned claim after the lease: %d %s", r.Status, r.Body)
		}
		if again := post("nothing-done"); again.Status != 201 || string(again.Body) != string(r.Body) || again.Header.Get("Idempotency-Replayed") != "true" {
			t.Errorf("replay of the taken-over key: %d %s", again.Status, again.Body)
		}
		if after := counts(t, e); after["orders"] != before["orders"]+1 {
			t.Errorf("orders %d → %d, want one more", before["orders"], after["orders"])
		}
	})
}
