package httpapi_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/inspection"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestRotatedKeyPublishedAhead: an inspection device synced keys.json
// yesterday; today the operator rotates the live key. The new key is
// published at once but signs nothing for inspection.KeyPublishAhead (48 h), so
// the device with yesterday's keys still verifies today's revocation feed
// and today's barcodes and rejects the revoked ticket (before: "signed with
// unknown or non-live key 2" for every ticket). When the 48 h have passed
// (injected clock) the new key signs the feed and new tickets, which the
// daily sync of the day after the rotation verifies; tickets issued while
// the key waited keep their key-1 barcode, and pruning keeps key 1 for
// them. Directory and database key stores, both engines.
func TestRotatedKeyPublishedAhead(t *testing.T) {
	t.Parallel()
	for _, src := range keySources {
		for _, engine := range storetest.Engines {
			t.Run(src.name+"/"+string(engine), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				e, s, reload := src.start(t, engine, wallets.Options{})
				keysJSON := func() *barcode.Keyring {
					t.Helper()
					kr, err := barcode.ParseKeySet(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body)
					if err != nil {
						t.Fatal(err)
					}
					return kr
				}
				feedWith := func(kr *barcode.Keyring) (*barcode.Revocations, error) {
					return barcode.VerifyFeed(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/revocations.json"}).Body, kr)
				}
				read := func(tid string) []byte {
					return ticketPayload(t, e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + tid + ".json"}).Map(t))
				}
				// inspect is `farebox inspect --keys K --revocations FEED` on one barcode.
				inspect := func(payload []byte, kr *barcode.Keyring, feed *barcode.Revocations) barcode.Report {
					rep := barcode.Inspect(payload, kr, e.Clock.Now())
					feed.Check(&rep)
					return rep
				}

				// Yesterday: the device syncs keys.json; ticket A is valid,
				// ticket X is revoked.
				_, tidA, _ := activatedTicket(t, e, e.LiveKey)
				_, tidX, _ := activatedTicket(t, e, e.LiveKey)
				yesterday := keysJSON()
				e.Clock.Advance(24 * time.Hour)
				if _, err := e.App.RevokeTicket(ctx, idempotency.Claim{}, tidX, "Fahrgeld erstattet"); err != nil {
					t.Fatal(err)
				}

				// A negative time is refused and writes nothing.
				if _, err := inspectionKeys(e, s).Rotate(ctx, barcode.EnvLive, -time.Hour); apperr.As(err) == nil || apperr.As(err).Code != inspection.CodeInvalidPublishAhead {
					t.Fatalf("negative publish-ahead: %v", err)
				}
				if ids := keysJSON().IDs(); len(ids) != 2 {
					t.Fatalf("a refused rotation changed the keys: %v", ids)
				}

				// Today: rotation, published 48 h ahead.
				rotatedAt := e.Clock.Now()
				r, err := inspectionKeys(e, s).Rotate(ctx, barcode.EnvLive, inspection.KeyPublishAhead)
				if err != nil || r.New.ID != 2 || r.Old != 1 || !r.SignsFrom.Equal(rotatedAt.Add(48*time.Hour)) || len(r.Pruned) != 0 {
					t.Fatalf("rotate: %+v %v", r, err)
				}
				reload()
				today := keysJSON()
				if k, ok := today.Lookup(2); !ok || k.Private != nil {
					t.Fatal("keys.json does not publish the new key")
				}
				var ks barcode.KeySetJSON
				e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).JSON(t, &ks)
				if !activeIn(ks, "1") || activeIn(ks, "2") {
					t.Errorf("keys.json right after the rotation: %+v (want key 1 active, key 2 published only)", ks)
				}
				infos, err := inspectionKeys(e, s).Keys(ctx)
				if err != nil || len(infos) != 3 || infos[1].Kid != 2 || infos[1].Active || infos[1].SignsFrom == nil || !infos[1].SignsFrom.Equal(r.SignsFrom) {
					t.Errorf("keys list after the rotation: %+v %v", infos, err)
				}
				// Yesterday's keys verify today's feed and barcodes.
				feed, err := feedWith(yesterday)
				if err != nil {
					t.Fatalf("today's feed with yesterday's keys: %v", err)
				}
				if rep := inspect(read(tidX), yesterday, feed); rep.Acceptable(false) || rep.Revoked == nil || !strings.Contains(rep.String(), "Fahrgeld erstattet") {
					t.Errorf("the revoked ticket with yesterday's keys: %s", rep)
				}
				if rep := inspect(read(tidA), yesterday, feed); !rep.Acceptable(false) {
					t.Errorf("a valid ticket with yesterday's keys: %s", rep)
				}
				_, tidB, ticketB := activatedTicket(t, e, e.LiveKey) // issued while key 2 waits
				payloadB := ticketPayload(t, ticketB)
				if rep := inspect(payloadB, yesterday, feed); !rep.Acceptable(false) || rep.KeyID != 1 {
					t.Errorf("a ticket issued after the rotation, with yesterday's keys: %s", rep)
				}
				// Pruning keeps the waiting key; a reload a second before its
				// time still signs with key 1.
				if pruned, err := inspectionKeys(e, s).Prune(ctx); err != nil || len(pruned) != 0 {
					t.Errorf("prune deleted %v (%v)", pruned, err)
				}
				e.Clock.Set(r.SignsFrom.Add(-time.Second))
				reload()
				if _, sig := feedKid(t, e); sig != "1" {
					t.Errorf("a second before its time the feed is signed by key %s", sig)
				}
				dayAfter := keysJSON() // the next daily sync

				// 48 h after the rotation: key 2 signs.
				e.Clock.Set(r.SignsFrom)
				reload()
				if _, sig := feedKid(t, e); sig != "2" {
					t.Errorf("at its time the feed is signed by key %s", sig)
				}
				feed2, err := feedWith(dayAfter)
				if err != nil {
					t.Fatalf("the feed signed by key 2 with the keys of the day after the rotation: %v", err)
				}
				if rep := inspect(read(tidX), dayAfter, feed2); rep.Acceptable(false) || rep.Revoked == nil {
					t.Errorf("the revoked ticket: %s", rep)
				}
				if got := read(tidB); !bytes.Equal(got, payloadB) {
					t.Error("the ticket issued while key 2 waited got a new barcode when key 2 started")
				}
				_, _, ticketC := activatedTicket(t, e, e.LiveKey)
				if rep := inspect(ticketPayload(t, ticketC), dayAfter, feed2); !rep.Acceptable(false) || rep.KeyID != 2 {
					t.Errorf("a ticket issued after key 2 started: %s", rep)
				}
				// Key 1 stays while A and B are valid (B is stamped now).
				if pruned, err := inspectionKeys(e, s).Prune(ctx); err != nil || len(pruned) != 0 {
					t.Errorf("prune after key 2 started deleted %v (%v)", pruned, err)
				}
				infos, err = inspectionKeys(e, s).Keys(ctx)
				if err != nil || infos[0].Kid != 1 || infos[0].Tickets != 2 || !infos[1].Active {
					t.Errorf("keys list after key 2 started: %+v %v", infos, err)
				}
				if got := read(tidB); !bytes.Equal(got, payloadB) {
					t.Error("stamping changed the barcode of the ticket issued while key 2 waited")
				}
			})
		}
	}
}

// activeIn reports whether keys.json marks kid active.
func activeIn(ks barcode.KeySetJSON, kid string) bool {
	for _, k := range ks.Keys {
		if k.Kid == kid {
			return k.Active
		}
	}
	return false
}

// feedKid is the served revocation feed and the id of the key that signed it.
func feedKid(t *testing.T, e *apitest.Env) ([]byte, string) {
	t.Helper()
	r := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/revocations.json"})
	var doc struct {
		Signature struct {
			Kid string `json:"kid"`
		} `json:"signature"`
	}
	r.JSON(t, &doc)
	return r.Body, doc.Signature.Kid
}
