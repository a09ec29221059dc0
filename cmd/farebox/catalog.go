package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
)

func catalogCmd(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	const help = "Usage: farebox catalog import FILE (- for stdin) | export"
	if len(args) == 0 {
		fmt.Fprintln(stderr, help)
		return errUsage
	}
	fs, db := newSubcommand("catalog", args, getenv, stderr)
	pos, _, s, err := db.parseAndOpen(ctx, fs, args[1:])
	if err != nil {
		return err
	}
	defer s.Close()
	prods := productsOn(s, db.prefix)
	switch args[0] {
	case "import":
		if len(pos) != 1 {
			return errors.New("catalog import needs exactly one FILE")
		}
		var raw []byte
		if pos[0] == "-" {
			raw, err = io.ReadAll(stdin)
		} else {
			raw, err = os.ReadFile(pos[0])
		}
		if err != nil {
			return err
		}
		f, err := catalog.Parse(raw)
		if err != nil {
			return err
		}
		if err := prods.Import(ctx, f); err != nil {
			if ae := apperr.As(err); ae != nil && len(ae.Details) > 0 {
				for _, d := range ae.Details {
					fmt.Fprintf(stderr, "%s: %s\n", d.Field, d.Message)
				}
			}
			return err
		}
		fmt.Fprintf(stdout, "imported %d areas and %d products\n", len(f.Areas), len(f.Products))
		return nil
	case "export":
		if err := prods.Load(ctx); err != nil {
			return err
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		enc.SetEscapeHTML(false)
		return enc.Encode(prods.Catalog().File())
	}
	fmt.Fprintln(stderr, help)
	return errUsage
}
