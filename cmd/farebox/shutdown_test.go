package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestGracefulShutdownFinishesInFlightRequests starts a request whose body
// is still arriving, asks the server to stop, then completes the body: the
// request must get its answer and serve must return cleanly.
func TestGracefulShutdownFinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	env := map[string]string{"FAREBOX_DATA_DIR": t.TempDir(), "FAREBOX_ADDR": "127.0.0.1:0", "FAREBOX_LOG_LEVEL": "error"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, nil, envFrom(env), io.Discard, io.Discard, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve ended: %v", err)
	}
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v9/ticketing/coupons/farebox-coupon-x/activate.json", pr)
	req.Header.Set("Content-Type", "application/json")
	type result struct {
		status int
		err    error
	}
	res := make(chan result, 1)
	go func() {
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- result{err: err}
			return
		}
		r.Body.Close()
		res <- result{status: r.StatusCode}
	}()
	if _, err := pw.Write([]byte(`{"identification_medium":`)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the request is now being read by the server
	cancel()
	time.Sleep(100 * time.Millisecond) // shutdown has begun and waits for the request
	select {
	case err := <-done:
		t.Fatalf("serve returned before the in-flight request finished: %v", err)
	default:
	}
	pw.Write([]byte(`{}}`))
	pw.Close()
	r := <-res
	if r.err != nil || r.status != http.StatusNotFound { // the coupon does not exist: a real answer, not a reset
		t.Fatalf("in-flight request: status %d err %v", r.status, r.err)
	}
	select {
	case err := <-done:
		if err != nil && !strings.Contains(err.Error(), "closed") {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return after the last request")
	}
}
