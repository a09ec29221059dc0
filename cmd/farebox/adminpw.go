package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/farebox/farebox/internal/app/webusers"
)

// adminPasswordCmd prints the --admin-password-file line for the password
// on the first line of stdin (docs/web.md): "user:$argon2id$v=19$…".
func adminPasswordCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("admin-password", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.String("user", "admin", "the operator's user name")
	if err := fs.Parse(args); err != nil {
		return err
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return err
	}
	pw := strings.TrimRight(line, "\r\n")
	if len(pw) < 12 {
		return fmt.Errorf("the password (first line of stdin) must have at least 12 characters")
	}
	out, err := webusers.HashOperatorPassword(*user, pw)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, out)
	return err
}
