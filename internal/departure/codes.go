package departure

// The error codes of package departure: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeDuplicateFeedID      = "duplicate_feed_id"
	CodeGTFSBadTimezone      = "gtfs_bad_timezone"
	CodeInvalidFeedID        = "invalid_feed_id"
	CodeInvalidMaxDepartures = "invalid_max_departures"
	CodeStationNotFound      = "station_not_found"
	CodeTripNotFound         = "trip_not_found"
)
