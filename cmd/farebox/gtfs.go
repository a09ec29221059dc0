package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/farebox/farebox/internal/app/transit"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/departure"
	"github.com/farebox/farebox/internal/gtfs"
)

const gtfsHelp = `Usage:
  farebox gtfs import --feed-id ID [--realtime-url URL | --realtime-file PATH] [--realtime-interval 30s] FILE.zip
  farebox gtfs list [--json]
  farebox gtfs remove ID`

// gtfsCmd imports, lists and removes GTFS feeds. Every serving instance
// picks up a change within its --gtfs-refresh interval.
func gtfsCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, gtfsHelp)
		return errUsage
	}
	fs, db := newSubcommand("gtfs", args, getenv, stderr)
	feedID := fs.String("feed-id", "", "feed namespace: 1 to 64 letters, digits or hyphens (import)")
	rtURL := fs.String("realtime-url", "", "GTFS-Realtime TripUpdates URL polled by every instance (import)")
	rtFile := fs.String("realtime-file", "", "GTFS-Realtime TripUpdates file read by every instance (import)")
	rtEvery := fs.Duration("realtime-interval", transit.DefaultRealtimeInterval, "poll interval of the realtime source (import)")
	asJSON := fs.Bool("json", false, "print JSON (list)")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	switch args[0] {
	case "import":
		if len(pos) != 1 {
			return errors.New("gtfs import needs exactly one FILE.zip")
		}
		if !departure.ValidFeedID(*feedID) {
			return errors.New("gtfs import: --feed-id must be 1 to 64 letters, digits or hyphens")
		}
		if *rtURL != "" && *rtFile != "" {
			return errors.New("gtfs import: give --realtime-url or --realtime-file, not both")
		}
		src := *rtURL
		if *rtFile != "" {
			abs, err := filepath.Abs(*rtFile)
			if err != nil {
				return err
			}
			src = abs
		}
		if src != "" && !transit.ValidRealtimeSource(src) {
			return errors.New("gtfs import: the realtime source must be an http(s) URL or a file")
		}
		return gtfsImport(ctx, *db, *feedID, pos[0], src, *rtEvery, stdout, stderr)
	case "list", "remove":
		_, s, err := db.openApp(ctx)
		if err != nil {
			return err
		}
		defer s.Close()
		if args[0] == "remove" {
			if len(pos) != 1 {
				return errors.New("gtfs remove needs exactly one feed ID")
			}
			if err := feedsOn(s, clock.System{}, db.prefix).Remove(ctx, pos[0]); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "removed feed %s\n", pos[0])
			return nil
		}
		feeds, err := feedsOn(s, clock.System{}, db.prefix).List(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", " ")
			return enc.Encode(feeds)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "FEED\tVERSION\tUPDATED\tSTOPS\tTRIPS\tSTOP_TIMES\tPROBLEMS\tSNAPSHOT\tREALTIME")
		for _, f := range feeds {
			rt := "-"
			if f.RealtimeSource != "" {
				rt = f.RealtimeSource + " every " + f.RealtimeInterval.String()
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%d\t%.1f MB\t%s\n", f.ID, f.Version, clock.Timestamp(f.UpdatedAt),
				f.Stops, f.Trips, f.StopTimes, f.Problems, float64(f.SnapshotBytes)/1e6, rt)
		}
		return tw.Flush()
	}
	fmt.Fprintln(stderr, gtfsHelp)
	return errUsage
}

// gtfsImport parses and validates the zip (printing every kept problem by
// file and line), then stores the snapshot in one transaction.
func gtfsImport(ctx context.Context, db dbFlags, feedID, path, rtSource string, rtEvery time.Duration, stdout, stderr io.Writer) error {
	start := time.Now()
	f, err := gtfs.ParseFile(path)
	if err != nil {
		return fmt.Errorf("gtfs import %s: %w", path, err)
	}
	parsed := time.Since(start)
	printProblems(stderr, f)
	_, s, err := db.openApp(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	if rtSource == "" {
		rtEvery = 0
	}
	rec, err := feedsOn(s, clock.System{}, db.prefix).Import(ctx, transit.Import{FeedID: feedID, SourceName: filepath.Base(path), Feed: f,
		RealtimeSource: rtSource, RealtimeInterval: rtEvery})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "imported feed %s (version %d) from %s: %d stops, %d trips, %d stop_times, %d services, %d problems; "+
		"snapshot %.1f MB in %d chunk(s); parse %s, total %s\n",
		rec.ID, rec.Version, rec.SourceName, rec.Stops, rec.Trips, rec.StopTimes, len(f.Services), f.ProblemCount,
		float64(rec.SnapshotBytes)/1e6, rec.Chunks, parsed.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if rec.RealtimeSource != "" {
		fmt.Fprintf(stdout, "realtime: %s every %s\n", rec.RealtimeSource, rec.RealtimeInterval)
	}
	return nil
}

// printProblems lists the problems grouped by file in line order, and how
// many each file had.
func printProblems(w io.Writer, f *gtfs.Feed) {
	if f.ProblemCount == 0 {
		return
	}
	ps := append([]gtfs.Problem(nil), f.Problems...)
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].File != ps[j].File {
			return ps[i].File < ps[j].File
		}
		return ps[i].Line < ps[j].Line
	})
	byFile := map[string]int{}
	for _, p := range ps {
		fmt.Fprintf(w, "%s:%d: %s\n", p.File, p.Line, p.Message)
		byFile[p.File]++
	}
	files := make([]string, 0, len(byFile))
	for k := range byFile {
		files = append(files, k)
	}
	sort.Strings(files)
	fmt.Fprintf(w, "%d problem(s), rows skipped or repaired; by file:", f.ProblemCount)
	for _, k := range files {
		fmt.Fprintf(w, " %s %d", k, byFile[k])
	}
	if f.ProblemCount > len(f.Problems) {
		fmt.Fprintf(w, " (first %d listed)", len(f.Problems))
	}
	fmt.Fprintln(w)
}
