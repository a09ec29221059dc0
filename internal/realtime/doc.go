// Package realtime reads GTFS-Realtime TripUpdates feeds into immutable
// snapshots, keeps the latest good snapshot per feed in a Hub and polls
// sources (an http(s) URL or a file) with a Poller.
//
// Only FULL_DATASET feeds are supported: every fetch replaces the whole set.
// A snapshot older than the Hub's MaxAge (by its header timestamp, or the
// time it was received when the header has none) is treated as absent, so
// stale predictions expire. A failing source keeps the last good snapshot
// (until it expires) and records the error for Status. Matching updates to
// static trips and propagating delays is done by package departure, which
// knows the timetable; this package only decodes and stores.
// VehiclePositions and Alerts entities are ignored.
package realtime
