package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/farebox/farebox/internal/app/fares"
	productsapp "github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/app/transit"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/config"
)

const faresHelp = `Usage:
  farebox fares export --format netex [--area-id ID] [--output FILE]
  farebox fares export --format gtfs-fares-v2 --feed-id ID [--area-id ID] [--output FILE.zip | --output DIR/]

Writes the catalog's fares (docs/fares.md) to standard output unless --output
names a file; a GTFS export to a directory (an existing one, or a path ending
in /) writes the .txt files there instead of a zip.`

// faresOn is the fare publication over the loaded catalog and, for GTFS,
// the stations of tr's loaded feeds (nil: none).
func faresOn(prods *productsapp.Service, tr *transit.Service, prefix, seller string, c clock.Clock) *fares.Service {
	var stations fares.Stations
	if tr != nil {
		stations = func(id string) (fares.Feed, error) {
			f, err := tr.FeedStations(id)
			return fares.Feed(f), err
		}
	}
	return fares.New(prods.Loaded, stations, prefix, seller, c)
}

// faresCmd exports the fares of the stored catalog (and feeds).
func faresCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(stderr, faresHelp)
		return errUsage
	}
	fs, db := newSubcommand("fares", args, getenv, stderr)
	format := fs.String("format", "", "netex or gtfs-fares-v2")
	output := fs.String("output", "", "file (or, for gtfs-fares-v2, directory) to write; default standard output")
	areaID := fs.String("area-id", "", "export only this area and its products")
	feedID := fs.String("feed-id", "", "the loaded GTFS feed whose stations stop_areas.txt lists (gtfs-fares-v2)")
	seller := fs.String("seller", sellerName(getenv), "the publishing organisation (env FAREBOX_SELLER_NAME)")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return errors.New("fares export takes no arguments; name the file with --output")
	}
	req := fares.Request{Format: *format, AreaID: *areaID, FeedID: *feedID}
	if err := req.Check(); err != nil {
		return err
	}
	s, err := db.openStore(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	prods := productsOn(s, db.prefix)
	if err := prods.Load(ctx); err != nil {
		return err
	}
	var tr *transit.Service
	if req.Format == fares.FormatGTFS {
		tr = feedsOn(s, clock.System{}, db.prefix).Serve(transit.Options{})
		defer tr.Close()
		if err := tr.Refresh(ctx); err != nil {
			return err
		}
	}
	ex, err := faresOn(prods, tr, db.prefix, *seller, clock.System{}).Prepare(req)
	if err != nil {
		return err
	}
	return writeExport(ex, req.Format, *output, stdout)
}

// writeExport writes ex to out: standard output when out is empty, a GTFS
// export's files into out when it is a directory (or ends in /), else the
// file out.
func writeExport(ex fares.Export, format, out string, stdout io.Writer) error {
	if out == "" {
		return ex.Write(stdout)
	}
	if fi, err := os.Stat(out); format == fares.FormatGTFS && ((err == nil && fi.IsDir()) || strings.HasSuffix(out, "/")) {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		return ex.WriteDir(out)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := ex.Write(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func sellerName(getenv func(string) string) string {
	if n := getenv("FAREBOX_SELLER_NAME"); n != "" {
		return n
	}
	return config.DevSellerName
}
