package app_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
)

// lease is how long a claim of the tests here holds its key.
const lease = 20 * time.Second

// idemKey is a key of the largest length the transport accepts (255
// printable ASCII characters) that starts with name.
func idemKey(name string) string {
	return name + strings.Repeat("~", 255-len(name))
}

// answer is a kept answer whose body has every script in it.
var answer = app.StoredResponse{Status: 201, ContentType: "application/json",
	Body: []byte(`{"name":"Ω Verkehrsverbund 東京 عربى שלום 🚆","null":"\u0000"}`)}

// claims is one account's scope of Idempotency-Keys on a bundle.
type claims struct {
	b     *testBundle
	scope string
}

// claim claims key for the request hashed hash; it fails the test unless
// the key is claimed, and returns the claim the request's use case gets.
func (c claims) claim(t *testing.T, key, hash string) app.Claim {
	t.Helper()
	got, replay, err := c.b.app.ClaimIdempotencyKey(c.b.ctx, c.scope, key, hash, lease)
	if err != nil || replay != nil {
		t.Fatalf("claim of %.20s…: replay %+v, %v", key, replay, err)
	}
	if got != (idempotency.Claim{Scope: c.scope, Key: key}) || !got.Held() {
		t.Fatalf("the claim is %+v", got)
	}
	return got
}

// commit is the request's use case committing its change with its claim.
func (c claims) commit(t *testing.T, claim app.Claim, name string) {
	t.Helper()
	ctx := c.b.ctx
	if err := c.b.store.WriteClaimed(ctx, claim, func(q store.Q) error {
		return q.CreateAccount(ctx, account.Account{ID: "acc_" + name, Name: name, CreatedAt: c.b.clock.Now()})
	}); err != nil {
		t.Fatal(err)
	}
}

func (c claims) complete(t *testing.T, key string) {
	t.Helper()
	if err := c.b.app.CompleteIdempotencyKey(c.b.ctx, c.scope, key, answer); err != nil {
		t.Fatal(err)
	}
}

func (c claims) release(t *testing.T, key string) {
	t.Helper()
	if err := c.b.app.ReleaseIdempotencyKey(c.b.ctx, c.scope, key); err != nil {
		t.Fatal(err)
	}
}

// TestClaimIdempotencyKey is the claim of an Idempotency-Key in every
// state the key can be in when a request with it arrives, on both
// engines; each scenario has a key of the largest length of its own. The
// lease ends at its exact instant: a take-over needs the lease to have
// run out, not just to have reached its end.
func TestClaimIdempotencyKey(t *testing.T) {
	const one, two = "hash-one", "hash-two"
	inFlight := func(t *testing.T, c claims, k string) { c.claim(t, k, one) }
	answered := func(t *testing.T, c claims, k string) { c.claim(t, k, one); c.complete(t, k) }
	released := func(t *testing.T, c claims, k string) { c.claim(t, k, one); c.release(t, k) }
	committed := func(t *testing.T, c claims, k string) { c.commit(t, c.claim(t, k, one), k) }
	erased := func(t *testing.T, c claims, k string) {
		answered(t, c, k)
		if err := c.b.store.Write(c.b.ctx, func(q store.Q) error { return q.EraseAnswer(c.b.ctx, c.scope, k) }); err != nil {
			t.Fatal(err)
		}
	}
	scenarios := []struct {
		name string
		// before brings the key (claims.scope, key) into its state; the
		// request with hash one or two then arrives after wait.
		before func(t *testing.T, c claims, key string)
		wait   time.Duration
		hash   string
		// want is the outcome: "claimed", "replay" or an error code.
		want string
	}{
		{"a new key", nil, 0, one, "claimed"},
		{"in flight, the same request", inFlight, 0, one, app.CodeIdempotencyKeyInFlight},
		{"in flight, another request", inFlight, 0, two, app.CodeIdempotencyKeyReused},
		{"answered, the same request", answered, 0, one, "replay"},
		{"answered, the same request a day later", answered, 24 * time.Hour, one, "replay"},
		{"answered, another request", answered, 0, two, app.CodeIdempotencyKeyReused},
		{"released", released, 0, one, "claimed"},
		{"released, another request", released, 0, two, "claimed"},
		{"abandoned, at the lease's end", inFlight, lease, one, app.CodeIdempotencyKeyInFlight},
		{"abandoned, a microsecond after the lease", inFlight, lease + time.Microsecond, one, "claimed"},
		{"abandoned, another request after the lease", inFlight, lease + time.Microsecond, two, app.CodeIdempotencyKeyReused},
		{"committed, within the lease", committed, 0, one, app.CodeIdempotencyKeyInFlight},
		{"committed, at the lease's end", committed, lease, one, app.CodeIdempotencyKeyInFlight},
		{"committed, answer lost after the lease", committed, lease + time.Microsecond, one, app.CodeIdempotencyKeyOutcomeUnknown},
		{"committed, then released by a failure", func(t *testing.T, c claims, k string) {
			committed(t, c, k)
			c.release(t, k)
		}, lease + time.Microsecond, one, app.CodeIdempotencyKeyOutcomeUnknown},
		{"committed by another write than the claimed one", func(t *testing.T, c claims, k string) {
			c.claim(t, k, one)
			ctx := c.b.ctx
			if err := c.b.store.Write(ctx, func(q store.Q) error {
				return q.CreateAccount(ctx, account.Account{ID: "acc_unclaimed", Name: "x", CreatedAt: c.b.clock.Now()})
			}); err != nil {
				t.Fatal(err)
			}
		}, lease + time.Microsecond, one, "claimed"},
		{"answer erased", erased, 0, one, app.CodeIdempotencyKeyOutcomeUnknown},
		{"answer erased, another request", erased, 0, two, app.CodeIdempotencyKeyReused},
		{"answered in another scope", func(t *testing.T, c claims, k string) {
			answered(t, claims{b: c.b, scope: app.IdempotencyScope(c.b.live)}, k)
		}, 0, one, "claimed"},
	}
	eachEngine(t, func(t *testing.T, b *testBundle) {
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				c := claims{b: b, scope: app.IdempotencyScope(b.test)}
				key := idemKey(strings.ReplaceAll(sc.name, " ", "-"))
				if sc.before != nil {
					sc.before(t, c, key)
				}
				b.clock.Advance(sc.wait)
				ctx, replay, err := b.app.ClaimIdempotencyKey(b.ctx, c.scope, key, sc.hash, lease)
				var got string
				switch {
				case err != nil:
					got = apperr.As(err).Code
				case replay != nil:
					got = "replay"
					if replay.Status != answer.Status || replay.ContentType != answer.ContentType || string(replay.Body) != string(answer.Body) {
						t.Errorf("replayed %+v, want %+v", replay, answer)
					}
				case ctx == idempotency.Claim{Scope: c.scope, Key: key}:
					got = "claimed"
				}
				if got != sc.want {
					t.Fatalf("claim = %q (%v), want %q", got, err, sc.want)
				}
				want := map[string]apperr.Kind{app.CodeIdempotencyKeyReused: apperr.Unprocessable,
					app.CodeIdempotencyKeyInFlight: apperr.Conflict, app.CodeIdempotencyKeyOutcomeUnknown: apperr.Conflict}[got]
				if err != nil && (apperr.KindOf(err) != want || ctx.Held() || replay != nil) {
					t.Errorf("refusal %v of kind %v, claim %v, replay %v", err, apperr.KindOf(err), ctx, replay)
				}
			})
		}
	})
}

// TestClaimIdempotencyKeyTwins: requests with one key arriving at once,
// the same request twice: exactly one holds the claim, the other is told
// it is in flight; then the holder's answer is what every later one gets.
func TestClaimIdempotencyKeyTwins(t *testing.T) {
	const keys, twins = 4, 2
	eachEngine(t, func(t *testing.T, b *testBundle) {
		scope := app.IdempotencyScope(b.test)
		var wg sync.WaitGroup
		var mu sync.Mutex
		held := map[string]int{}
		for k := 0; k < keys; k++ {
			key := idemKey("twin-" + string(rune('a'+k)))
			for i := 0; i < twins; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, replay, err := b.app.ClaimIdempotencyKey(b.ctx, scope, key, "same", lease)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil && replay == nil && ctx.Key == key:
						held[key]++
					case apperr.As(err) == nil || apperr.As(err).Code != app.CodeIdempotencyKeyInFlight:
						t.Errorf("twin of %.8s…: replay %+v, %v", key, replay, err)
					}
				}()
			}
		}
		wg.Wait()
		if len(held) != keys {
			t.Fatalf("keys claimed: %v", held)
		}
		for key, n := range held {
			if n != 1 {
				t.Errorf("%.8s… held by %d twins", key, n)
			}
			c := claims{b: b, scope: scope}
			c.complete(t, key)
			if _, replay, err := b.app.ClaimIdempotencyKey(b.ctx, scope, key, "same", lease); err != nil || replay == nil || replay.Status != answer.Status {
				t.Errorf("after the answer: %+v, %v", replay, err)
			}
		}
	})
}
