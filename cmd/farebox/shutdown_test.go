package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// TestGracefulShutdownFinishesInFlightRequests starts a request whose body
// is still arriving, asks the server to stop, then completes the body: the
// request must get its answer and serve must return cleanly. It is driven
// by events, not by time: the request asks for 100-continue, which the
// server sends once the handler reads the body (the request is in
// flight), and the rest of the body goes only once serve has logged that
// it is shutting down.
func TestGracefulShutdownFinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	env := map[string]string{"FAREBOX_DATA_DIR": t.TempDir(), "FAREBOX_ADDR": "127.0.0.1:0", "FAREBOX_LOG_LEVEL": "info"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	logs := &watchWriter{want: "shutting down: finishing in-flight requests", seen: make(chan struct{})}
	go func() { done <- serve(ctx, nil, envFrom(env), io.Discard, logs, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve ended: %v", err)
	}
	pr, pw := io.Pipe()
	continued := make(chan struct{})
	trace := &httptrace.ClientTrace{Got100Continue: func() { close(continued) }}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
		http.MethodPost, "http://"+addr+"/v9/ticketing/coupons/farebox-coupon-x/activate.json", pr)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	// The client sends the body without waiting once this passes; a long
	// one, so that only the server's 100 Continue lets it go.
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Hour}}
	type result struct {
		status int
		err    error
	}
	res := make(chan result, 1)
	go func() {
		r, err := client.Do(req)
		if err != nil {
			res <- result{err: err}
			return
		}
		r.Body.Close()
		res <- result{status: r.StatusCode}
	}()
	select {
	case <-continued: // the handler reads the body: the request is in flight
	case r := <-res:
		t.Fatalf("the request ended before its body was read: status %d err %v", r.status, r.err)
	}
	if _, err := pw.Write([]byte(`{"identification_medium":`)); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-logs.seen // shutdown has begun and waits for the request
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
			t.Fatalf("serve: %v\n%s", err, logs)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return after the last request")
	}
}
