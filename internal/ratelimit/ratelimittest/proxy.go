package ratelimittest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a server (Redis) until Cut, which
// closes every connection and refuses new ones, as a Redis that went away
// mid-run; Restore lets connections through again.
type Proxy struct {
	Addr string // where clients connect

	to    string
	ln    net.Listener
	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
}

// NewProxy listens on a free loopback port and forwards to to until the
// test ends.
func NewProxy(t testing.TB, to string) *Proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), to: to, ln: ln, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.Cut() })
	return p
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.mu.Unlock()
		go p.pipe(c)
	}
}

func (p *Proxy) pipe(c net.Conn) {
	s, err := net.Dial("tcp", p.to)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	go func() { io.Copy(s, c); s.Close() }()
	io.Copy(c, s)
	c.Close()
}

// Cut closes every forwarded connection and refuses new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Restore forwards new connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}
