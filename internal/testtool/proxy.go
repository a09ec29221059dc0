package testtool

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy forwards loopback TCP connections to a server (PostgreSQL, Redis)
// until Cut, which closes every forwarded connection and refuses new ones,
// as a server that went away; Restore listens on the same address again.
type Proxy struct {
	Addr string // where clients connect

	to    string
	mu    sync.Mutex
	ln    net.Listener // nil while cut
	conns map[net.Conn]bool
}

// NewProxy listens on a free loopback port and forwards to to until the
// test ends.
func NewProxy(t testing.TB, to string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), to: to, conns: map[net.Conn]bool{}}
	p.serve(ln)
	t.Cleanup(p.Cut)
	return p
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
}

func (p *Proxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.to)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // cut meanwhile
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close(); c.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
	up.Close()
}

// Cut closes the listener and every forwarded connection: connecting is
// refused until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// Restore listens on the proxy's address again (retrying for up to five
// seconds while the port is still being released). Restoring a proxy that
// is not cut does nothing.
func (p *Proxy) Restore(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	up := p.ln != nil
	p.mu.Unlock()
	if up {
		return
	}
	var err error
	for range 50 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", p.Addr); err == nil {
			p.serve(ln)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("proxy: listen again on %s: %v", p.Addr, err)
}
