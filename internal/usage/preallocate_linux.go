package usage

import (
	"errors"
	"os"
	"syscall"
)

// preallocate reserves size bytes of disk for f (fallocate, or zeros where
// the file system lacks it).
func preallocate(f *os.File, size int) error {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, int64(size))
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return zeroFill(f, size)
	}
	return err
}
