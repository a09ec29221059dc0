package clearing_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// backendCPU is the CPU time (user and system) the PostgreSQL backends
// serving db's open connections have used so far, by backend process id,
// read from /proc (the server runs on this machine in tests). It holds
// every open connection at once to ask each for its backend's id.
func backendCPU(ctx context.Context, db *sql.DB) (map[int]time.Duration, error) {
	n := db.Stats().OpenConnections
	conns := make([]*sql.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	out := map[int]time.Duration{}
	for range n {
		c, err := db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		conns = append(conns, c)
		var pid int
		if err := c.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			return nil, err
		}
		cpu, err := procCPU(pid)
		if err != nil {
			return nil, err
		}
		out[pid] = cpu
	}
	return out, nil
}

// procCPU is process pid's user and system CPU time (/proc/PID/stat,
// fields 14 and 15, in clock ticks of 10 ms).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // after the command's name: field 3 on
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// backendCPUSince is how much CPU time db's backends used since before (a
// backend opened since counts from its start).
func backendCPUSince(ctx context.Context, db *sql.DB, before map[int]time.Duration) (time.Duration, error) {
	after, err := backendCPU(ctx, db)
	var sum time.Duration
	for pid, cpu := range after {
		sum += cpu - before[pid]
	}
	return sum, err
}

// loadAvg is the machine's load average over 1, 5 and 15 minutes, to log
// beside a time measured on a shared machine.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
