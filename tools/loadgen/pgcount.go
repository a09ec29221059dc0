package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// -mode pgcount is a counting proxy in front of PostgreSQL: point farebox's
// --database-url at -listen, run a load, stop the proxy (SIGINT or SIGTERM)
// and it prints (SIGUSR1: prints and starts again from zero), from the client side of the wire protocol, how many round
// trips (each Sync of the extended protocol and each simple Query waits for
// the server's ReadyForQuery) and how many statements (Execute messages and
// simple queries) passed, with the statement texts by count. Divided by the
// operations the load made, these are the round trips and statements per
// operation — pg_stat_statements' numbers without preloading it into the
// server. Plain text connections only (sslmode=disable).

// pgCounts are the proxy's tallies.
type pgCounts struct {
	mu         sync.Mutex
	roundTrips int64
	statements int64
	byText     map[string]int64
}

func (c *pgCounts) add(rt, st int64, text string) {
	c.mu.Lock()
	c.roundTrips += rt
	c.statements += st
	if text != "" {
		c.byText[text] += st
	}
	c.mu.Unlock()
}

func pgCount(listen, upstream string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	counts := &pgCounts{byText: map[string]int64{}}
	go func() {
		for {
			cn, err := ln.Accept()
			if err != nil {
				return
			}
			go proxyConn(cn, upstream, counts)
		}
	}()
	fmt.Fprintf(os.Stderr, "pgcount: %s -> %s\n", listen, upstream)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1)
	for s := range sig {
		counts.print(os.Stdout)
		if s != syscall.SIGUSR1 {
			break
		}
	}
	ln.Close()
	return nil
}

// print writes the tallies and starts them again from zero.
func (c *pgCounts) print(w io.Writer) {
	c.mu.Lock()
	defer func() {
		c.roundTrips, c.statements, c.byText = 0, 0, map[string]int64{}
		c.mu.Unlock()
	}()
	fmt.Fprintf(w, "pgcount: %d round trips, %d statements\n", c.roundTrips, c.statements)
	type row struct {
		text string
		n    int64
	}
	var rows []row
	for t, n := range c.byText {
		rows = append(rows, row{t, n})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].n > rows[j].n })
	for _, r := range rows {
		t := strings.Join(strings.Fields(r.text), " ")
		if len(t) > 110 {
			t = t[:110] + "…"
		}
		fmt.Fprintf(w, "%10d  %s\n", r.n, t)
	}
}

// proxyConn forwards one client connection, reading the client's messages
// to count them; the server's answers are copied as they are.
func proxyConn(cn net.Conn, upstream string, counts *pgCounts) {
	defer cn.Close()
	up, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(cn, up); cn.Close() }()
	// The startup message has no type byte.
	var hdr [5]byte
	if _, err := io.ReadFull(cn, hdr[:4]); err != nil {
		return
	}
	n := int(binary.BigEndian.Uint32(hdr[:4]))
	body := make([]byte, n-4)
	if _, err := io.ReadFull(cn, body); err != nil {
		return
	}
	if _, err := up.Write(append(hdr[:4:4], body...)); err != nil {
		return
	}
	prepared := map[string]string{} // statement name -> text (this connection)
	bound := ""                     // text of the last Bind's statement
	for {
		if _, err := io.ReadFull(cn, hdr[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(hdr[1:]))
		body := make([]byte, n-4)
		if _, err := io.ReadFull(cn, body); err != nil {
			return
		}
		switch hdr[0] {
		case 'Q': // simple query
			counts.add(1, 1, cstr(body))
		case 'P': // Parse: name, text
			name := cstr(body)
			prepared[name] = cstr(body[len(name)+1:])
		case 'B': // Bind: portal, statement
			portal := cstr(body)
			bound = prepared[cstr(body[len(portal)+1:])]
		case 'E':
			counts.add(0, 1, bound)
		case 'S':
			counts.add(1, 0, "")
		}
		if _, err := up.Write(append(hdr[:5:5], body...)); err != nil {
			return
		}
	}
}

// cstr is the NUL-terminated string at the start of b.
func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
