// Package gtfs reads static GTFS feeds (a zip of CSV files) into a compact,
// immutable, struct-of-arrays Feed and encodes that Feed as a binary snapshot
// that loads quickly.
//
// Parsing validates row by row: a bad row is skipped and reported as a
// Problem {file, line, message}; only a missing required file, an unreadable
// zip or an unknown agency time zone fail the whole feed. At most
// MaxProblems problems are kept (ProblemCount counts all of them).
//
// Limits: shapes.txt, transfers, pathways, fares and translations are not
// read; stop_times without times between timed stops are interpolated
// linearly by position (not by shape_dist_traveled); all agencies of a feed
// are assumed to share the first agency's time zone (a differing zone is
// reported as a problem). Ids are kept exactly as in the feed, so several
// feeds with colliding ids must be namespaced by the caller.
package gtfs

// The tz database is embedded so agency time zones load in minimal containers.
import _ "time/tzdata"
