package main

import (
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL driver (pg_stat_activity)
)

// CPU per operation of the timed phase of -mode order and activate (not of
// the activation run's ordering of its coupons first): with -cpu-pid, the
// farebox processes' CPU (utime+stime from /proc/<pid>/stat, comma
// separated pids), and with -cpu-pg-db, the CPU of PostgreSQL's backends
// connected to that database (listed in pg_stat_activity; a loopback
// server, so their /proc entries are on this machine). A backend that
// starts during the phase counts from zero; one that ends is lost (the
// server's pools keep their connections).

// clkTck is the kernel's clock tick (USER_HZ), 100 on Linux.
const clkTck = 100

type cpuProbe struct {
	pids  []int
	urls  int // instances the workers are spread over (worker w: w % urls)
	fbs0  []int64
	pg    *sql.DB
	pgDB  string
	fb0   int64
	pg0   map[int]int64
	start time.Time
}

func newCPUProbe(pids, pgURL, pgDB string) (*cpuProbe, error) {
	p := &cpuProbe{pgDB: pgDB}
	for _, s := range strings.Split(pids, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("-cpu-pid: %w", err)
		}
		p.pids = append(p.pids, n)
	}
	if pgDB != "" {
		db, err := sql.Open("pgx", pgURL)
		if err != nil {
			return nil, err
		}
		p.pg = db
	}
	return p, nil
}

// procTicks is a process's utime+stime in clock ticks (0 when it is gone).
func procTicks(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

// backends are the CPU ticks of the database's backends by pid; nil when
// pg_stat_activity could not be read (a shared server out of connections
// for longer than the retries wait).
func (p *cpuProbe) backends() map[int]int64 {
	if p.pg == nil {
		return nil
	}
	var err error
	for try := 0; try < 10; try++ {
		var out map[int]int64
		if out, err = p.readBackends(); err == nil {
			return out
		}
		time.Sleep(300 * time.Millisecond)
	}
	fmt.Fprintln(os.Stderr, "loadgen: pg_stat_activity:", err)
	return nil
}

func (p *cpuProbe) readBackends() (map[int]int64, error) {
	rows, err := p.pg.Query(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, p.pgDB)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int]int64{}
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return nil, err
		}
		out[pid] = procTicks(pid)
	}
	return out, rows.Err()
}

func (p *cpuProbe) farebox() int64 {
	var t int64
	for _, pid := range p.pids {
		t += procTicks(pid)
	}
	return t
}

// split tells the probe that the load goes to len(urls) instances; with
// as many -cpu-pid as URLs, each process's CPU is divided by the
// operations its instance served.
func (p *cpuProbe) split(urls []string) {
	if p != nil {
		p.urls = len(urls)
	}
}

func (p *cpuProbe) begin() {
	if p == nil {
		return
	}
	p.fbs0 = p.fbs0[:0]
	for _, pid := range p.pids {
		p.fbs0 = append(p.fbs0, procTicks(pid))
	}
	p.fb0, p.pg0, p.start = p.farebox(), p.backends(), time.Now()
}

// end is the CPU milliseconds per operation of run r since begin: of all
// farebox processes together, of each (when there is one per instance) and
// of PostgreSQL's backends.
func (p *cpuProbe) end(r result) string {
	if p == nil || r.n == 0 {
		return ""
	}
	n := r.n
	ms := func(ticks, n int64) float64 {
		if n == 0 {
			return 0
		}
		return 1000 * float64(ticks) / clkTck / float64(n)
	}
	line := ""
	if len(p.pids) > 0 {
		line += fmt.Sprintf("   farebox %.3f ms/op", ms(p.farebox()-p.fb0, n))
	}
	if len(p.pids) > 1 && len(p.pids) == p.urls {
		served := make([]int64, p.urls)
		for w, k := range r.perWorker {
			served[w%p.urls] += k
		}
		for i, pid := range p.pids {
			line += fmt.Sprintf(" [pid %d: %d ops, %.3f ms/op]", pid, served[i], ms(procTicks(pid)-p.fbs0[i], served[i]))
		}
	}
	if p.pg != nil {
		now := p.backends()
		if now == nil || p.pg0 == nil {
			return line + "   postgres unmeasured"
		}
		var t int64
		for pid, ticks := range now {
			t += ticks - p.pg0[pid]
		}
		line += fmt.Sprintf("   postgres %.3f ms/op", ms(t, n))
	}
	return line
}
