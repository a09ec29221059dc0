package store

import (
	"strconv"

	"github.com/farebox/farebox/internal/account"
)

func itoa(i int) string { return strconv.Itoa(i) }

func accountEnv(s string) account.Environment { return account.Environment(s) }
