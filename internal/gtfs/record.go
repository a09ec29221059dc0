package gtfs

import "time"

// FeedRecord describes one imported feed as it is kept between restarts
// and shared between instances: where it came from, the version of its
// import, the size and hash of its snapshot (the Feed written by
// Feed.Encode, stored apart from the record) and the counts shown to
// operators.
type FeedRecord struct {
	ID            string
	Version       int64 // unique over all imports; changes on every import
	UpdatedAt     time.Time
	SourceName    string // the zip's file name
	FeedVersion   string // feed_info.feed_version
	SnapshotBytes int64
	SnapshotSHA   string // hex SHA-256 of the snapshot
	Chunks        int    // the number of pieces the snapshot is stored in
	Stops         int
	Trips         int
	StopTimes     int64
	Problems      int
	// RealtimeSource is a GTFS-RT TripUpdates URL or file path ("" = none),
	// polled every RealtimeInterval.
	RealtimeSource   string
	RealtimeInterval time.Duration
}
