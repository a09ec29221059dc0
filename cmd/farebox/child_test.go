package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/testtool"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// fareboxBinary builds this command once per test binary run into a
// temporary directory (removed by TestMain) and returns its path.
func fareboxBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "farebox-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "farebox")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = &buildError{err: err, out: string(out)}
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v", binErr)
	}
	return binPath
}

// TestMain removes the built binary after the tests, and fails the run
// when a test left a ./farebox-data directory in the source tree (a
// command or serve ran without a data dir of the test's own; such files
// were once committed by accident).
//
// The command's tests wait on servers, child processes and timers far more
// than on the CPU, so in the fast tier up to eight run at once (every test is
// parallel) unless -parallel says otherwise (testtool.WaitBound).
func TestMain(m *testing.M) {
	testtool.WaitBound(8)
	_, statErr := os.Stat("farebox-data")
	existed := statErr == nil
	code := m.Run()
	if _, err := os.Stat("farebox-data"); err == nil && !existed {
		fmt.Fprintln(os.Stderr, "a test created cmd/farebox/farebox-data: give it FAREBOX_DATA_DIR=t.TempDir()")
		os.RemoveAll("farebox-data")
		code = 1
	}
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// child is `farebox serve` running as a real process of the test.
type child struct {
	cmd  *exec.Cmd
	addr string
	logs *syncBuffer
	done chan struct{}
}

// startChild starts the binary with env on a free loopback port and waits
// for its "farebox listening" log line.
func startChild(t *testing.T, env map[string]string) *child {
	t.Helper()
	cmd := serveCommand(t, env)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, logs: &syncBuffer{}, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			c.logs.Write(append(append([]byte{}, line...), '\n'))
			var m struct{ Msg, Addr string }
			if json.Unmarshal(line, &m) == nil && m.Msg == "farebox listening" {
				addr <- m.Addr
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		close(c.done)
	}()
	select {
	case c.addr = <-addr:
	case <-c.done:
		t.Fatalf("farebox serve exited at start:\n%s", c.logs.String())
	case <-time.After(60 * time.Second):
		c.kill()
		t.Fatalf("farebox serve did not start:\n%s", c.logs.String())
	}
	t.Cleanup(c.kill)
	return c
}

// serveCommand is `farebox serve` of the built binary with env, on a free
// loopback port, logging JSON.
func serveCommand(t *testing.T, env map[string]string) *exec.Cmd {
	cmd := exec.Command(fareboxBinary(t), "serve")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "FAREBOX_ADDR=127.0.0.1:0", "FAREBOX_LOG_FORMAT=json"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

func (c *child) url() string { return "http://" + c.addr }

// kill sends SIGKILL (no graceful shutdown) and waits for the process.
func (c *child) kill() {
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-c.done
}

// term sends SIGTERM and waits for the graceful exit.
func (c *child) term() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	<-c.done
}
