package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestShutdownJoinsBackgroundLoops runs a background loop beside serve's own
// (testLoop) that is still busy when shutdown begins and touches the store
// once it is let go. serve must wait for it, and only then close the store:
// the loop's last query succeeds and serve returns after it. The test is
// driven by events, not by time: the loop is released only once serve logs (at debug level)
// that it waits for the loops; serve returning before that (the store
// closed under a running loop) fails the test.
//
// Not parallel: testLoop is the package's one hook into serve, and a
// sequential test runs while every parallel one waits.
func TestShutdownJoinsBackgroundLoops(t *testing.T) {
	for _, engine := range storetest.Engines {
		t.Run(string(engine), func(t *testing.T) {
			env, _ := engineEnv(t, engine, "FAREBOX_ADDR", "127.0.0.1:0", "FAREBOX_LOG_LEVEL", "debug")
			running := make(chan struct{})
			release := make(chan struct{})
			lastQuery := make(chan error, 1)
			testLoop = func(ctx context.Context, st *store.Store) {
				close(running)
				<-ctx.Done() // shutdown has begun
				<-release
				_, err := st.Read().JobStates(context.Background())
				lastQuery <- err
			}
			t.Cleanup(func() { testLoop = nil })
			logs := &watchWriter{want: "waiting for background loops", seen: make(chan struct{})}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ready := make(chan string, 1)
			done := make(chan error, 1)
			go func() { done <- serve(ctx, nil, envFrom(env), &bytes.Buffer{}, logs, ready) }()
			select {
			case <-ready:
			case err := <-done:
				t.Fatalf("serve ended: %v\n%s", err, logs)
			}
			<-running
			cancel()
			select {
			case err := <-done:
				close(release)
				t.Fatalf("serve returned (and closed the store, err %v) while a background loop was still running", err)
			case <-logs.seen:
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatalf("serve: %v", err)
			}
			select {
			case err := <-lastQuery:
				if err != nil {
					t.Fatalf("the loop's last query, before the store closed: %v", err)
				}
			default:
				t.Fatal("serve returned before the loop ended")
			}
		})
	}
}

// watchWriter collects what is written and closes seen once want appears.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
