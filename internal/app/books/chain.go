package books

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/ticketing"
)

// The kinds of record the chain holds (books_chain.kind).
const (
	KindInvoice = "invoice" // an invoice, cancellation or payment notice
	KindFile    = "file"    // a stored file of one (record id: invoice id "/" format)
	KindAudit   = "audit"   // an audit entry (a change of a billable item)
	KindReceipt = "receipt" // a cancellation receipt
)

// genesis is the predecessor hash of a chain's first entry.
var genesis = hex.EncodeToString(make([]byte, sha256.Size))

// canon builds the canonical bytes of a record (docs/books.md, "Canonical
// bytes"): a domain tag, then each field in a fixed order as its length
// (unsigned varint) and its bytes; numbers as decimal text, times as
// microseconds since the Unix epoch (what both engines keep), an absent
// optional field as a single 0xff byte.
type canon struct{ b bytes.Buffer }

func newCanon(tag string) *canon {
	c := &canon{}
	c.str("farebox-books/v1/" + tag)
	return c
}

func (c *canon) raw(p []byte) {
	c.b.Write(binary.AppendUvarint(nil, uint64(len(p))))
	c.b.Write(p)
}

func (c *canon) str(ss ...string) {
	for _, s := range ss {
		c.raw([]byte(s))
	}
}

func (c *canon) opt(s *string) {
	if s == nil {
		c.b.WriteByte(0xff)
		return
	}
	c.str(*s)
}

func (c *canon) int(n int64) { c.b.Write(binary.AppendVarint(nil, n)) }

func (c *canon) time(t time.Time) { c.int(t.UTC().Truncate(time.Microsecond).UnixMicro()) }

// json writes v as JSON normalised through a generic value: object keys
// sorted, numbers as JSON writes float64, so that what the store reads
// back encodes to the same bytes as what was written.
func (c *canon) json(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var g any
	if err := json.Unmarshal(b, &g); err != nil {
		return err
	}
	b, err = json.Marshal(g)
	c.raw(b)
	return err
}

func (c *canon) sum() string {
	s := sha256.Sum256(c.b.Bytes())
	return hex.EncodeToString(s[:])
}

// chained is what an entry commits to about its record.
type chained struct {
	accountID  string
	env        account.Environment
	ref        invoicing.ChainRef
	recordHash string
	commitment string // "" without personal fields
	salt       string // the commitment's salt (hex), "" without
}

// invoiceHash is the hash of an issued document's canonical bytes: every
// column but cancelled_by (set once, later, by its cancellation) and the
// document without its personal fields (publicDocument), which enter
// through the commitment.
func invoiceHash(inv invoicing.Invoice) (string, error) {
	c := newCanon(KindInvoice)
	c.str(inv.ID, inv.AccountID, string(inv.Environment), inv.Kind.String(), inv.Number, inv.Identifier)
	c.opt(inv.CustomerID)
	c.opt(inv.CollectionID)
	c.opt(inv.RefersTo)
	c.str(map[bool]string{true: "electronic", false: "pdf"}[inv.Electronic])
	c.int(int64(inv.GrossCents))
	c.time(inv.CreatedAt)
	err := c.json(publicDocument(inv.Document))
	return c.sum(), err
}

// publicDocument is d without its personal fields: the buyer (address
// lines, electronic address and contact) and the names of the
// participants of split lines.
func publicDocument(d invoicedoc.Document) invoicedoc.Document {
	d.Buyer = nil
	d.Lines = append([]invoicedoc.Line(nil), d.Lines...)
	for i := range d.Lines {
		split := append([]invoicedoc.Share(nil), d.Lines[i].Split...)
		for j := range split {
			split[j].Name = ""
		}
		d.Lines[i].Split = split
	}
	return d
}

// personal are d's personal fields (nil without any): the buyer and the
// participants' names of each split line.
func personal(d invoicedoc.Document) any {
	var names [][]string
	some := d.Buyer != nil
	for _, l := range d.Lines {
		var n []string
		for _, sh := range l.Split {
			n = append(n, sh.Name)
			some = some || sh.Name != ""
		}
		names = append(names, n)
	}
	if !some {
		return nil
	}
	return map[string]any{"buyer": d.Buyer, "split_names": names}
}

// commitment is the salted commitment to an issued document's personal
// fields (personal); "" for a document without any.
func commitment(d invoicedoc.Document, salt string) (string, error) {
	p := personal(d)
	if p == nil {
		return "", nil
	}
	c := newCanon("commitment")
	c.str(salt)
	err := c.json(p)
	return c.sum(), err
}

// newSalt is 16 random bytes in hex.
func newSalt() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b)
}

// fileHash is the hash of a stored file's canonical bytes: its invoice,
// format and the SHA-256 of its body (the content type follows from the
// format).
func fileHash(invoiceID, format, bodySHA256 string) string {
	c := newCanon(KindFile)
	c.str(invoiceID, format, bodySHA256)
	return c.sum()
}

// auditHash is the hash of an audit entry's canonical bytes.
func auditHash(e invoicing.AuditEntry) (string, error) {
	c := newCanon(KindAudit)
	c.str(e.ID, e.AccountID, string(e.Environment), e.ObjectType, e.ObjectID, e.Action, string(e.Actor.Type), e.Actor.ID)
	d := e.Detail
	if d == nil {
		d = map[string]any{}
	}
	err := c.json(d)
	c.time(e.CreatedAt)
	return c.sum(), err
}

// receiptHash is the hash of a cancellation receipt's canonical bytes.
func receiptHash(r ticketing.CancellationReceipt) string {
	c := newCanon(KindReceipt)
	c.str(r.ID, r.SubscriptionID, r.AccountID, string(r.Environment), r.ProductID, r.ProductName, r.Type,
		string(r.Actor.Type), r.Actor.ID)
	c.time(r.ReceivedAt)
	c.time(r.EffectiveEnd)
	c.time(r.CreatedAt)
	return c.sum()
}

// entryHash is the hash of a chain entry: its chain, position, record
// (kind, id, record hash, commitment), time and predecessor.
func entryHash(e invoicing.ChainEntry) string {
	c := newCanon("entry")
	c.str(e.AccountID, string(e.Environment))
	c.int(e.Seq)
	c.str(e.Kind, e.RecordID, e.RecordHash, e.Commitment, e.PrevHash)
	c.time(e.CreatedAt)
	return c.sum()
}
