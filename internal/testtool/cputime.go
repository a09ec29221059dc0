package testtool

import (
	"syscall"
	"time"
)

// CPUTime is the user and system CPU time this process has used: a
// measurement's cost that other processes on a shared machine disturb
// far less than its wall time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
