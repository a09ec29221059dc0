package main

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/webhook"
	"github.com/farebox/farebox/internal/webhook/webhooktest"
)

// hookReceipt is one POST the receiver got.
type hookReceipt struct {
	eventID, deliveryID, objectID, typ string
	seq                                int64
	ok                                 bool // answered 2xx
	cancelled                          bool // the sender went away before the answer
}

// TestWebhooksSurviveKill: two real farebox processes on one PostgreSQL
// schema deliver the events of a partner load to a local receiver. While
// the receiver holds every request, one process is killed with SIGKILL
// with deliveries in flight; the other (and the restarted one) take its
// attempts over after the job lease. Afterwards every event was delivered
// (nothing lost), every event came in one delivery (the same delivery and
// event id on every retry: nothing delivered twice except as its
// retries), each signature verifies, and the events of each coupon
// arrived in order. The endpoint is created with `farebox webhooks
// create`, on loopback thanks to --webhook-allow-private.
func TestWebhooksSurviveKill(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Crash)
	env, st := pgEnv(t)
	env["FAREBOX_JOB_LEASE"] = "3s"
	env["FAREBOX_WEBHOOK_ALLOW_PRIVATE"] = "true"
	accountID, key := newKey(t, env)

	var mu sync.Mutex
	var got []hookReceipt
	var hold atomic.Bool
	var held atomic.Int64
	release := make(chan struct{})
	var n atomic.Int64
	var secret string
	sigErrs := atomic.Int64{}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Sequence int64  `json:"sequence"`
			Data     struct {
				ObjectID string `json:"object_id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &ev)
		if err := webhooktest.Verify(r.Header.Get(webhook.SignatureHeader), body, secret, time.Now(), time.Minute); err != nil || ev.ID != r.Header.Get(webhook.EventIDHeader) {
			sigErrs.Add(1)
		}
		rec := hookReceipt{eventID: ev.ID, deliveryID: r.Header.Get(webhook.DeliveryHeader), objectID: ev.Data.ObjectID, typ: ev.Type, seq: ev.Sequence}
		mu.Lock()
		idx := len(got) // arrival order
		got = append(got, rec)
		mu.Unlock()
		cancelled := false
		if hold.Load() {
			held.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
				cancelled = true
			}
			held.Add(-1)
		}
		ok := !cancelled && n.Add(1)%20 != 0 // every twentieth fails: retries too
		if !ok && !cancelled {
			w.WriteHeader(http.StatusInternalServerError)
		}
		mu.Lock()
		got[idx].ok, got[idx].cancelled = ok, cancelled
		mu.Unlock()
	}))
	defer rc.Close()

	var ep map[string]any
	if err := json.Unmarshal([]byte(cli(t, env, "webhooks", "create", "--account", accountID, "--environment", "live",
		"--url", rc.URL+"/hooks", "--events", "*")), &ep); err != nil {
		t.Fatal(err)
	}
	secret = str(ep["secret"])
	if secret == "" || str(ep["status"]) != "enabled" {
		t.Fatalf("created: %v", ep)
	}

	envA, envB := maps.Clone(env), maps.Clone(env)
	envA["FAREBOX_DATA_DIR"], envB["FAREBOX_DATA_DIR"] = t.TempDir(), t.TempDir()
	a, b := startChild(t, envA), startChild(t, envB)
	var aURL atomic.Value
	aURL.Store(a.url())
	ids := products(t, b.url(), key)
	stop := loadUntilStopped(6, func(w, i int) {
		base := b.url()
		if i%2 == 0 {
			base = aURL.Load().(string)
		}
		o := call(base, "POST", "/v9/ticketing/orders.json", key, map[string]any{"product_ids": []string{ids["month/adult"]}}, nil)
		if o.status != 201 {
			return
		}
		cid := str(o.m()["coupons"].([]any)[0].(map[string]any)["id"])
		call(base, "POST", "/v9/ticketing/coupons/"+cid+"/tariff_settings.json", "", map[string]any{"tariff_settings": map[string]any{"german_postal_code": "10115"}}, nil)
		call(base, "POST", "/v9/ticketing/coupons/"+cid+"/activate.json", "", photoID, nil)
	})
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	waitFor(t, 60*time.Second, "deliveries before the hold", func() bool { return count() >= 100 })
	hold.Store(true)
	// Both instances' delivery workers (8 each) end up waiting on the receiver.
	waitFor(t, 60*time.Second, "deliveries held by both instances", func() bool { return held.Load() >= 12 })
	a.kill()
	time.Sleep(200 * time.Millisecond)
	hold.Store(false)
	close(release)
	a2 := startChild(t, envA)
	aURL.Store(a2.url())
	time.Sleep(2 * time.Second)
	stop()

	// Every event of the account reaches the receiver.
	ctx := context.Background()
	var evIDs []string
	for after := int64(0); ; {
		p, err := st.Read().Events(ctx, event.Query{AccountID: accountID, Environment: account.Live, Limit: 100}, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Events {
			evIDs = append(evIDs, e.ID)
			after = e.Seq
		}
		if !p.HasMore {
			break
		}
	}
	waitFor(t, 120*time.Second, "every event delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		ok := map[string]bool{}
		for _, g := range got {
			ok[g.eventID] = ok[g.eventID] || g.ok
		}
		for _, id := range evIDs {
			if !ok[id] {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	deliveries := map[string]map[string]bool{}
	successes := map[string]int{}
	cancelled := 0
	for _, g := range got {
		if deliveries[g.eventID] == nil {
			deliveries[g.eventID] = map[string]bool{}
		}
		deliveries[g.eventID][g.deliveryID] = true
		if g.ok {
			successes[g.eventID]++
		}
		if g.cancelled {
			cancelled++
		}
	}
	if cancelled == 0 {
		t.Errorf("the killed instance had no delivery in flight")
	}
	dup := 0
	for id, ds := range deliveries {
		if len(ds) != 1 {
			t.Errorf("event %s came in %d deliveries", id, len(ds))
		}
		if successes[id] > 1 {
			dup++ // a retry of the one delivery after an answer its sender could not record
		}
	}
	if len(deliveries) != len(evIDs) || sigErrs.Load() != 0 {
		t.Errorf("%d events delivered, %d written; %d bad signatures", len(deliveries), len(evIDs), sigErrs.Load())
	}
	// Order per object: no event of an object arrives before an earlier
	// one of the same object has succeeded.
	seqs := map[string][]int64{} // the sequence numbers of each object's events
	for _, g := range got {
		if !containsSeq(seqs[g.objectID], g.seq) {
			seqs[g.objectID] = append(seqs[g.objectID], g.seq)
		}
	}
	succeeded := map[string]map[int64]bool{}
	for _, g := range got {
		for _, s := range seqs[g.objectID] {
			if s < g.seq && !succeeded[g.objectID][s] {
				t.Errorf("%s %s (seq %d) arrived before seq %d of its object succeeded", g.typ, g.eventID, g.seq, s)
			}
		}
		if g.ok {
			if succeeded[g.objectID] == nil {
				succeeded[g.objectID] = map[int64]bool{}
			}
			succeeded[g.objectID][g.seq] = true
		}
	}
	t.Logf("%d events, %d requests, %d cancelled by the kill, %d events answered 2xx twice (retries of one delivery)", len(evIDs), len(got), cancelled, dup)
}

func containsSeq(s []int64, v int64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
