// Package configtest gives tests the configuration a server has when
// nothing is set.
package configtest

import (
	"io"

	"github.com/farebox/farebox/internal/config"
)

// Defaults returns the configuration with every default.
func Defaults() config.Config {
	c, err := config.Load(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		panic("config: defaults invalid: " + err.Error())
	}
	return c
}
