package gtfs

// The error codes of package gtfs: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeGTFSBadTimezone     = "gtfs_bad_timezone"
	CodeGTFSMissingFile     = "gtfs_missing_file"
	CodeGTFSNoAgency        = "gtfs_no_agency"
	CodeGTFSNotZip          = "gtfs_not_zip"
	CodeGTFSSnapshotCorrupt = "gtfs_snapshot_corrupt"
	CodeGTFSUnreadable      = "gtfs_unreadable"
)
