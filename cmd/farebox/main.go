// Command farebox is the farebox service and its operator tools.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	_ "time/tzdata" // Europe/Berlin must load in a bare container
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		if err != errUsage && !errors.Is(err, flag.ErrHelp) { // --help printed the flags already
			fmt.Fprintln(os.Stderr, "farebox:", err)
		}
		os.Exit(exitCode(err))
	}
}
