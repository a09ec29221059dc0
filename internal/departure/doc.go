// Package departure answers departure boards, station searches and trip
// lookups over several static GTFS feeds at once, with predictions from a
// GTFS-Realtime overlay consulted per query.
//
// An Index is immutable apart from its board cache (safe for concurrent
// use; see DeparturesJSON): build a new one with New when a feed changes
// and swap it atomically (atomic.Pointer[Index]). Ids are namespaced per feed and
// URL-safe: stations are "<prefix>-station-<feed>_<stop_id>", trip instances
// "<prefix>-trip-<feed>_<trip_id>_<YYYYMMDD>" (plus "-HHMMSS" of the start for
// frequency-based trips); bytes outside [A-Za-z0-9._-] in GTFS ids are
// written as "~XX" (hex).
//
// Times follow GTFS: a stop time is local noon minus 12 h of its service
// date in the feed's agency time zone, plus its seconds; boards scan the
// service days that can still reach the query time (the feed's largest
// time decides how many days back) and up to MaxDaysAhead days forward.
// Results are ordered by scheduled time, then line name, then trip id.
// A board lists departures scheduled at or after the query instant, plus
// those scheduled up to LateWindow earlier that realtime predicts at or
// after it. Limits: an ADDED realtime trip unknown to the timetable is not shown; shapes.txt
// is not used, so trip geometry is stop-to-stop straight lines.
package departure
