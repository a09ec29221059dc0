//go:build unix && !linux

package usage

import "os"

// preallocate reserves size bytes of disk for f.
func preallocate(f *os.File, size int) error { return zeroFill(f, size) }
