package pdf

import (
	"bytes"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
)

// hold takes the renderer through q until release is closed; it returns
// once the renderer is held, and done is closed when it is given back.
func hold(t *testing.T, q *Queue) (release chan struct{}, done chan error) {
	t.Helper()
	entered, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- q.Exclusive(func() error { close(entered); <-release; return nil })
		close(done)
	}()
	<-entered
	return release, done
}

func wantBusy(t *testing.T, what string, err error) {
	t.Helper()
	if ae := apperr.As(err); ae == nil || ae.Code != CodeRendererBusy || ae.Kind != apperr.Unavailable {
		t.Errorf("%s: %v, want %s (unavailable)", what, err, CodeRendererBusy)
	}
}

// TestQueueRefusesWhenFull: with no room to wait, an invoice and a letter
// are refused while another render holds the renderer, and render again
// once it is released; the queue is empty afterwards.
func TestQueueRefusesWhenFull(t *testing.T) {
	q := NewQueue(Limits{Queue: 0, Deadline: time.Hour})
	release, done := hold(t, q)
	_, err := q.Render(invoicetest.SingleCustomer(), nil)
	wantBusy(t, "invoice while the renderer is held", err)
	_, err = q.RenderLetter(Letter{Seller: invoicetest.Seller(), Title: "Kündigungsbestätigung", Reference: "fb-sub-1"})
	wantBusy(t, "letter while the renderer is held", err)
	if n := q.Length(); n != 1 {
		t.Errorf("admitted: %d, want the one holding", n)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, err := q.Render(invoicetest.SingleCustomer(), nil)
	if err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("after the release: %v %.20q", err, b)
	}
	if n := q.Length(); n != 0 {
		t.Errorf("admitted after every render: %d", n)
	}
}

// TestQueueDeadline: a render admitted to wait whose turn does not come
// before its deadline is refused and leaves the queue; the renderer is
// held throughout, so only the deadline can end the wait.
func TestQueueDeadline(t *testing.T) {
	q := NewQueue(Limits{Queue: 4, Deadline: time.Nanosecond})
	release, done := hold(t, q)
	ran := false
	wantBusy(t, "a wait past the deadline", q.Exclusive(func() error { ran = true; return nil }))
	if ran {
		t.Error("the refused render ran")
	}
	if n := q.Length(); n != 1 {
		t.Errorf("admitted after the refusal: %d, want the one holding", n)
	}
	close(release)
	<-done
}

// TestQueueWaits: a render that finds the renderer busy waits its turn
// (queue of one) and runs after the holder is done; a third is refused.
func TestQueueWaits(t *testing.T) {
	q := NewQueue(Limits{Queue: 1, Deadline: time.Hour})
	release, done := hold(t, q)
	order := make(chan string, 2)
	waited := make(chan error, 1)
	go func() { waited <- q.Exclusive(func() error { order <- "waiter"; return nil }) }()
	for q.Length() != 2 { // the waiter is admitted (no assertion on time)
		time.Sleep(time.Millisecond)
	}
	wantBusy(t, "a third render", q.Exclusive(func() error { return nil }))
	order <- "holder"
	close(release)
	<-done
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if a, b := <-order, <-order; a != "holder" || b != "waiter" {
		t.Errorf("order: %s, %s", a, b)
	}
}
