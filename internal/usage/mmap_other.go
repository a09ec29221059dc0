//go:build !unix

package usage

import (
	"errors"
	"os"
)

var errNoMmap = errors.New("the embedded usage journal needs a Unix system (memory-mapped files); use PostgreSQL or --usage-ledger=false")

func mapSegment(*os.File, int) ([]byte, error) { return nil, errNoMmap }

func unmapSegment([]byte) error { return nil }

func lockDir(string) (*os.File, error) { return nil, errNoMmap }
