// Package records holds the records farebox hands to the central reporting
// (issue 31 §3, docs/records.md): the inspectors and their devices, the
// inspection records their devices post, the issuance record of a ticket,
// the closed list of inspection outcomes and the traveller's pseudonym.
// Values and rules only; the store keeps them, internal/app/records
// serves them.
package records

import (
	"time"
)

// The outcomes an inspection device may report: a closed list (an unknown
// one is a 400 naming the field). The first four are barcode.State*'s
// values, so `farebox inspect` posts its verdict as it judged it.
const (
	OutcomeValid      = "valid"
	OutcomeNotYet     = "not_yet_valid"
	OutcomeExpired    = "expired"
	OutcomeNotGenuine = "not_genuine"
	OutcomeRevoked    = "revoked"     // the ticket is in the revocation feed (revoked, or signed with a revoked key)
	OutcomeReplaced   = "replaced"    // restored away: a newer barcode of the ticket exists
	OutcomeCopied     = "copied"      // a dynamic barcode outside its window or on another device (issue 32)
	OutcomeTest       = "test_ticket" // genuine, but of the test environment
	OutcomeUnreadable = "unreadable"  // the device could not read the code
	// OutcomeDataTooOld: the device's keys, revocation feed or blocklist
	// were older than it may use (the inspector app's
	// --inspect-max-data-age), so it confirmed nothing; recorded so that
	// the reporting sees checks refused for that reason (docs/inspect.md).
	OutcomeDataTooOld = "data_too_old"
)

// Outcomes is the closed list, in the order the documentation gives it.
var Outcomes = []string{OutcomeValid, OutcomeNotYet, OutcomeExpired, OutcomeRevoked, OutcomeReplaced,
	OutcomeNotGenuine, OutcomeCopied, OutcomeTest, OutcomeUnreadable, OutcomeDataTooOld}

// KnownOutcome reports whether o is on the closed list.
func KnownOutcome(o string) bool {
	for _, k := range Outcomes {
		if k == o {
			return true
		}
	}
	return false
}

// Inspector is an inspector's account and device credential, created by
// the operator (farebox inspectors add). The device token is stored as its
// SHA-256 only; PasswordHash is the argon2id PHC string of the account's
// password for the inspector web app of issue 32 ("" until one is set).
type Inspector struct {
	ID           string
	Name         string
	TokenHash    string
	TokenPrefix  string // the first characters of the token, to tell devices apart in a list
	PasswordHash string
	CreatedAt    time.Time
	RevokedAt    *time.Time
}

// Inspection is one check an inspection device posted.
type Inspection struct {
	ID             string
	InspectorID    string
	ClientRecordID string // the device's id of the check: a repeat is the same record
	TicketID       string // "" when the device knows only the barcode's digest
	BarcodeSHA256  string // hex SHA-256 of the barcode payload; "" when not sent
	Outcome        string
	CheckedAt      time.Time  // when the check was made (the device's clock, as reported)
	DeviceTime     *time.Time // the device's clock at the post, to judge its skew
	Lat, Lon       *float64
	StopID         string
	ReceivedAt     time.Time // when farebox stored it (the export day is taken from it)
}

// Issued is a ticket as the issuance records read it: derived at export
// time from the stored ticket, so activation writes nothing more.
type Issued struct {
	TicketID    string
	AccountID   string // the selling partner
	ProductID   string
	ValidFrom   time.Time
	ValidUntil  time.Time
	IssuedAt    time.Time
	Medium      []byte // the identification medium as stored (JSON)
	Erased      bool   // the identification medium was erased (retention)
	Invalidated *time.Time
}

// Bounds of a posted batch.
const (
	MaxBatch        = 500       // records per post
	MaxBodyBytes    = 256 << 10 // bytes per post
	MaxRecordID     = 128       // characters of a client record id
	MaxStopID       = 128
	MaxTicketID     = 128
	MaxInspectorLen = 100 // characters of an inspector's name
	// MaxClockSkew bounds how far in the future (by the server's clock) a
	// check may claim to have been made.
	MaxClockSkew = 10 * time.Minute
	// MaxAge bounds how old a posted check may be (a device offline for
	// longer has lost its records' value for the daily export).
	MaxAge = 60 * 24 * time.Hour
)
