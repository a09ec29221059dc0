package invoicing

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/ticketing"
)

// Audit actions: the changes of a billable item's invoicing state the
// audit log records (docs/books.md).
const (
	AuditAssignmentChanged = "assignment_changed" // customer, split or collection set by PUT
	AuditAddedToCollection = "added_to_collection"
	AuditInvoiced          = "invoiced"          // claimed by an invoice for one customer
	AuditInvoiceCancelled  = "invoice_cancelled" // claims released by a cancellation
)

// AuditEntry is one row of the append-only audit log.
type AuditEntry struct {
	ID          string
	AccountID   string
	Environment account.Environment
	ObjectType  string // billable_item
	ObjectID    string
	Action      string
	Actor       account.Actor
	Detail      map[string]any // before/after, invoice ids: what the action changed
	CreatedAt   time.Time
}

// AuditFilter selects the entries of a list (docs/lists.md); ObjectID,
// when set, keeps one object's entries.
type AuditFilter struct {
	list.Query
	ObjectID *string
}

// StoredFile is a stored file with the hash recorded when it was written
// ("" for files stored before hashes were recorded).
type StoredFile struct {
	InvoiceID string
	Number    string
	Format    string
	SHA256    string
	Body      []byte
}

// NumberGap is a hole in a number series: the numbers From..To (inclusive)
// of Series were never issued, or were removed.
type NumberGap struct {
	Series   string
	From, To int64
}

func (g NumberGap) String() string {
	if g.From == g.To {
		return fmt.Sprintf("series %s: number %s is missing", g.Series, Number(g.Series, g.From))
	}
	return fmt.Sprintf("series %s: numbers %s to %s are missing", g.Series, Number(g.Series, g.From), Number(g.Series, g.To))
}

// SplitNumber is the series and position of a number of Number's form;
// false for a string that is not one.
func SplitNumber(number string) (string, int64, bool) {
	i := strings.LastIndexByte(number, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(number[i+1:], 10, 64)
	if err != nil || n < 1 || Number(number[:i], n) != number {
		return "", 0, false
	}
	return number[:i], n, true
}

// Gaps are the holes of each series given the issued numbers and each
// series' counter (the last number taken): every position from 1 to the
// counter must be issued. Numbers that do not parse are returned as bad.
func Gaps(numbers []string, counters map[string]int64) (gaps []NumberGap, bad []string) {
	seen := map[string]map[int64]bool{}
	last := map[string]int64{}
	for s, n := range counters {
		last[s] = n
	}
	for _, num := range numbers {
		s, n, ok := SplitNumber(num)
		if !ok {
			bad = append(bad, num)
			continue
		}
		if seen[s] == nil {
			seen[s] = map[int64]bool{}
		}
		seen[s][n] = true
		last[s] = max(last[s], n)
	}
	series := make([]string, 0, len(last))
	for s := range last {
		series = append(series, s)
	}
	sort.Strings(series)
	for _, s := range series {
		var from int64
		for n := int64(1); n <= last[s]; n++ {
			switch {
			case !seen[s][n] && from == 0:
				from = n
			case seen[s][n] && from != 0:
				gaps = append(gaps, NumberGap{Series: s, From: from, To: n - 1})
				from = 0
			}
		}
		if from != 0 {
			gaps = append(gaps, NumberGap{Series: s, From: from, To: last[s]})
		}
	}
	return gaps, bad
}

// ChainEntry is one entry of the books' hash chain of an account and
// environment (docs/books.md, "The chain"): the Seq-th record, of Kind
// (invoice, file, audit, receipt) and RecordID, committed to by
// RecordHash (the SHA-256 of its canonical bytes) and Commitment (the
// salted commitment to its personal fields, "" without any), linked to
// its predecessor's EntryHash by PrevHash. Hashes are lower-case hex.
type ChainEntry struct {
	AccountID   string
	Environment account.Environment
	Seq         int64
	Kind        string
	RecordID    string
	RecordHash  string
	Commitment  string
	PrevHash    string
	EntryHash   string
	CreatedAt   time.Time
}

// ChainHead is the size and newest entry hash of one chain.
type ChainHead struct {
	AccountID   string
	Environment account.Environment
	Size        int64
	HeadHash    string
}

// Checkpoint is a signed statement of a chain's size and head hash at
// SignedAt, with the signature counter of the books key KeyID.
type Checkpoint struct {
	AccountID   string
	Environment account.Environment
	TreeSize    int64
	HeadHash    string
	SignedAt    time.Time
	Counter     int64
	KeyID       string
	Signature   string // base64 (standard encoding)
	// TreeHash is the RFC 9162 Merkle tree hash of the chain's first
	// TreeSize entry hashes (hex; "" for a checkpoint signed before
	// migration 00038, whose signed message has none).
	TreeHash string
}

// CheckpointFilter is a page of one chain's checkpoints (the account and
// environment of Query), newest first by size; After and Before are the
// sizes of the cursors (0: none), CreatedGTE and CreatedLT bound the
// signing time.
type CheckpointFilter struct {
	list.Query
	AfterSize, BeforeSize int64
}

// ChainRef names a record of the books: its kind and id.
type ChainRef struct {
	Kind, RecordID string
}

// ChainRecords are the records a page of chain entries names, by id
// (Files by invoice id "/" format), with the salts of their commitments.
type ChainRecords struct {
	Invoices map[string]Invoice
	Files    map[string]StoredFile
	Audit    map[string]AuditEntry
	Receipts map[string]ticketing.CancellationReceipt
	Salts    map[ChainRef]string
}
