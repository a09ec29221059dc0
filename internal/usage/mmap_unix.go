//go:build unix

package usage

import (
	"os"
	"syscall"
)

// mapSegment preallocates f to size bytes and maps it shared and writable.
func mapSegment(f *os.File, size int) ([]byte, error) {
	if err := preallocate(f, size); err != nil {
		return nil, err
	}
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

func unmapSegment(mem []byte) error { return syscall.Munmap(mem) }

// zeroFill reserves size bytes of disk for f by writing zeros (for file
// systems without fallocate): a mapping over a sparse file would fail with
// SIGBUS on a full disk instead of an error here.
func zeroFill(f *os.File, size int) error {
	zeros := make([]byte, 1<<20)
	for off := 0; off < size; off += len(zeros) {
		n := min(len(zeros), size-off)
		if _, err := f.WriteAt(zeros[:n], int64(off)); err != nil {
			return err
		}
	}
	return nil
}

// lockDir takes an exclusive lock on dir's lock file, held while the
// returned file is open: two processes journaling into one directory would
// roll up each other's open segments.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir+"/lock", os.O_CREATE|os.O_RDWR, 0o640)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, errDirInUse
		}
		return nil, err
	}
	return f, nil
}
