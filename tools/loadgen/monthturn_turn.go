package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// turnStall is how long the turn may go without a new push or pass fetch
// before the run gives up (the job workers retry a failed push after
// seconds, not minutes).
const turnStall = 2 * time.Minute

// turn advances the clock to the renewed cycles' start and, as the pushes
// arrive, lets each pushed device fetch its pass; it returns when every
// device has fetched a pass showing the new cycle.
func (l *turnLoad) turn() error {
	from := l.subs[0].renewedFrom
	for _, s := range l.subs {
		if s.renewedFrom != from {
			return fmt.Errorf("renewed cycles start at %s and %s", from, s.renewedFrom)
		}
	}
	byToken := make(map[string]int, l.n)
	for i, s := range l.subs {
		byToken[s.pushToken] = i
	}
	if err := l.call("POST", "/v1/test_clocks/"+l.clock+"/advance.json", l.key, map[string]any{"frozen_time": from}, 200, nil); err != nil {
		return err
	}
	pushed := make(chan int, l.n)
	var fetched atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < l.conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range pushed {
				if err := l.fetchPass(i); err != nil {
					failed.CompareAndSwap(nil, err)
				}
				fetched.Add(1)
			}
		}()
	}
	err := l.dispatchPushes(byToken, pushed, &fetched)
	close(pushed)
	wg.Wait()
	if err != nil {
		return err
	}
	if e, _ := failed.Load().(error); e != nil {
		return e
	}
	return l.waitReady()
}

// dispatchPushes hands each device's first push to the fetching workers
// until every device has been pushed and has fetched its pass.
func (l *turnLoad) dispatchPushes(byToken map[string]int, pushed chan<- int, fetched *atomic.Int64) error {
	seen, pos := make(map[int]bool, l.n), 0
	progress, last := time.Now(), int64(0)
	for fetched.Load() < int64(l.n) {
		ps := l.apns.Since(pos)
		pos += len(ps)
		for _, p := range ps {
			i, ok := byToken[p.Token]
			if !ok {
				return fmt.Errorf("a push to an unknown device token %s", p.Token)
			}
			if !seen[i] && p.Status == 200 {
				seen[i] = true
				pushed <- i
			}
		}
		if f := fetched.Load(); len(ps) > 0 || f != last {
			progress, last = time.Now(), f
		} else if time.Since(progress) > turnStall {
			return fmt.Errorf("no progress for %s: %d of %d devices pushed, %d passes fetched, APNs: %s", turnStall, len(seen), l.n, f, l.apns)
		}
		if len(ps) == 0 {
			select {
			case <-l.apns.Arrived():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return nil
}

// fetchPass is device i fetching its pass from Apple's web service after
// the push, as Wallet does; the pass must show the renewed cycle.
func (l *turnLoad) fetchPass(i int) error {
	s := l.subs[i]
	status, body, err := sendAuth("GET", l.url()+"/wallet/apple/v1/passes/"+l.passType+"/"+s.first, s.auth, nil)
	if err != nil {
		return err
	}
	if status != 200 {
		return fmt.Errorf("device %d: pass: %d %s", i, status, firstLine(body))
	}
	var pj map[string]any
	if err := passJSON(body, &pj); err != nil {
		return err
	}
	if raw := fmt.Sprint(pj); !bytes.Contains([]byte(raw), []byte(s.renewedFrom)) {
		return fmt.Errorf("device %d: the pushed pass does not show the new cycle (valid from %s)", i, s.renewedFrom)
	}
	return nil
}

// waitReady waits for the clock's advance job to finish.
func (l *turnLoad) waitReady() error {
	began := time.Now()
	for {
		var c struct{ Status string }
		if err := l.call("GET", "/v1/test_clocks/"+l.clock+".json", l.key, nil, 200, &c); err != nil {
			return err
		}
		if c.Status == "ready" {
			return nil
		}
		if time.Since(began) > turnStall {
			return fmt.Errorf("the clock is still %q after %s", c.Status, turnStall)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// check verifies that nothing was lost or duplicated.
func (l *turnLoad) check() error {
	// Late duplicates: a job retried after its push was accepted would
	// push again within its retry delay; give it that long.
	time.Sleep(2 * time.Second)
	var problems []string
	perToken := map[string]int{}
	for _, p := range l.apns.Pushes() {
		if p.Status == 200 {
			perToken[p.Token]++
		}
	}
	pushedOnce, tickets := 0, map[string]bool{}
	for _, s := range l.subs {
		switch perToken[s.pushToken] {
		case 1:
			pushedOnce++
		case 0:
			problems = append(problems, "device of "+s.sub+" not pushed")
		default:
			problems = append(problems, fmt.Sprintf("device of %s pushed %d times", s.sub, perToken[s.pushToken]))
		}
		if tickets[s.renewed] {
			problems = append(problems, "ticket "+s.renewed+" answered twice")
		}
		tickets[s.renewed] = true
	}
	if r := l.apns.Refused(); len(r) > 0 {
		problems = append(problems, fmt.Sprintf("APNs refused %d pushes, e.g. %s", len(r), r[0]))
	}
	cycles, err := l.each(l.checkCycles)
	if err != nil {
		problems = append(problems, err.Error())
	}
	ordered := int64(0)
	for _, c := range cycles {
		ordered += c
	}
	fmt.Fprintf(l.out, "checks: %d subscriptions with exactly two cycles ordered once and activated, %d distinct renewed tickets, %d devices pushed exactly once, %d pushes in all, %d refused\n",
		ordered, len(tickets), pushedOnce, len(l.apns.Pushes()), len(l.apns.Refused()))
	if len(problems) > 0 {
		if len(problems) > 10 {
			problems = append(problems[:10], fmt.Sprintf("… %d more", len(problems)-10))
		}
		return fmt.Errorf("lost or duplicated:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// checkCycles: subscription i has its two cycles ordered (each with its
// own billable item) and activated, and the second starts where the
// renewed ticket does.
func (l *turnLoad) checkCycles(i int) error {
	s := l.subs[i]
	var sub struct {
		Cycles []struct {
			ValidFrom       *string `json:"valid_from"`
			Ordered         bool    `json:"ordered"`
			CouponActivated bool    `json:"coupon_activated"`
			BillableItemID  *string `json:"billable_item_id"`
		} `json:"subscription_cycles"`
	}
	if err := l.call("GET", "/v9/ticketing/subscriptions/"+s.sub+".json", l.key, nil, 200, &sub); err != nil {
		return err
	}
	items := map[string]bool{}
	var starts []string
	for _, c := range sub.Cycles {
		if !c.Ordered {
			continue
		}
		if c.BillableItemID == nil || items[*c.BillableItemID] || !c.CouponActivated || c.ValidFrom == nil {
			return fmt.Errorf("subscription %s: cycle %+v (billable item missing or shared, or not activated)", s.sub, c)
		}
		items[*c.BillableItemID] = true
		starts = append(starts, *c.ValidFrom)
	}
	if len(starts) != 2 || starts[1] != s.renewedFrom {
		return fmt.Errorf("subscription %s: ordered cycles starting %v, want two, the second at %s", s.sub, starts, s.renewedFrom)
	}
	return nil
}
