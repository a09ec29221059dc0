package uic

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock"
)

// Product is what the catalog adds to a ticket's claims for this profile.
type Product struct {
	Number int    // product number of the product owner (e.g. 9999), 0 = none: the farebox product id is written instead
	Owner  int    // RICS code of the product owner, 0 = the issuer
	Area   string // where the ticket is valid, e.g. "Deutschland"
}

// Ticket is what a UIC 918.3 U_FLEX barcode says about one ticket.
type Ticket struct {
	barcode.Claims        // ProductID is the product number when one was written
	Area           string // validRegionDesc
	RICS           int    // signer (container and securityProviderNum)
	KeyID          int
	ProductOwner   int
	ProductNumber  int // 0 when absent
	IssuedAt       time.Time
	Container      int // container version
}

// Records are read and written in the Berlin calendar: FCB validity times
// are local times with an offset in quarter hours (UTC = local + offset).
var local = clock.Berlin

func claimsErr(msg string) error {
	return apperr.E("uic.Issue", apperr.Invalid, barcode.CodeInvalidBarcodeClaims, msg)
}

// Issue encodes and signs c as a UIC 918.3 container (records U_HEAD and
// U_FLEX). Test tickets and development issuers make specimens.
func Issue(c barcode.Claims, p Product, iss *Issuer, issuedAt time.Time) ([]byte, error) {
	f, head, err := toFCB(c, p, iss, issuedAt)
	if err != nil {
		return nil, err
	}
	flex, err := f.Marshal()
	if err != nil {
		return nil, claimsErr(err.Error())
	}
	return iss.build([]Record{
		{Tag: "U_HEAD", Version: 1, Data: head},
		{Tag: "U_FLEX", Version: FCBVersion, Data: flex},
	})
}

func civilDays(t time.Time) int64 {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// quarterOffset is the FCB UTC offset of local time t: UTC = local + offset*15min.
func quarterOffset(t time.Time) int {
	_, off := t.Zone()
	return -off / 900
}

func toFCB(c barcode.Claims, p Product, iss *Issuer, issuedAt time.Time) (FCB, []byte, error) {
	if c.TicketID == "" || c.ValidUntil.Before(c.ValidFrom) {
		return FCB{}, nil, claimsErr("a ticket id and valid_from <= valid_until are required")
	}
	if c.Environment != barcode.EnvLive && c.Environment != barcode.EnvTest {
		return FCB{}, nil, claimsErr("environment must be live or test")
	}
	at := issuedAt.UTC()
	from := c.ValidFrom.In(local).Truncate(time.Minute)
	// FCB 1.3 counts validFromDay from the issuing day (UTC) and at most one
	// day back (-1..700). A validity that started earlier (a monthly ticket
	// bought on the 28th is valid from the 1st; a restored ticket keeps its
	// original start) is carried from 00:00 local on the day before the
	// issuing day: the barcode did not exist before, so no inspection can
	// tell, while the issuing time stays the real one (issue 28: it used to
	// be backdated to the start). FCB 3 (-367..700) would carry the start
	// itself; see docs/barcodes.md.
	if earliest := time.Date(at.Year(), at.Month(), at.Day()-1, 0, 0, 0, 0, local); from.Before(earliest) {
		from = earliest
	}
	until := c.ValidUntil.In(local).Truncate(time.Minute)
	f := FCB{
		SecurityProviderNum: iss.RICS, IssuerNum: iss.RICS,
		IssuingYear: at.Year(), IssuingDay: at.YearDay(), IssuingTime: at.Hour()*60 + at.Minute(),
		IssuerName: iss.Name, Specimen: c.Test() || iss.Development, Activated: true,
		FirstName: c.FirstName, LastName: c.LastName,
		ReferenceIA5: c.TicketID, ProductOwnerNum: p.Owner, ProductIDNum: -1,
		ValidRegionDesc: p.Area,
		ValidFromDay:    int(civilDays(from) - civilDays(at)),
		ValidFromTime:   from.Hour()*60 + from.Minute(), ValidFromOffset: quarterOffset(from),
		ValidUntilDay:  int(civilDays(until) - civilDays(from)),
		ValidUntilTime: until.Hour()*60 + until.Minute(), ValidUntilOffset: quarterOffset(until),
		TariffDesc: c.ProductName,
	}
	if f.ProductOwnerNum == 0 {
		f.ProductOwnerNum = iss.RICS
	}
	if p.Number > 0 {
		f.ProductIDNum = p.Number
	} else {
		f.ProductIDIA5 = c.ProductID
	}
	if f.ValidFromDay > 700 {
		return f, nil, claimsErr("valid_from must lie at most 700 days after issue")
	}
	if f.ValidUntilDay > 370 {
		return f, nil, claimsErr("a UIC barcode carries at most 370 days of validity")
	}
	if c.BirthDate != "" {
		b, err := time.Parse(time.DateOnly, c.BirthDate)
		if err != nil || b.Year() < 1901 || b.Year() > 2155 {
			return f, nil, claimsErr("birth_date must be a date YYYY-MM-DD between 1901 and 2155")
		}
		f.YearOfBirth, f.DayOfBirth = b.Year(), b.YearDay()
	}
	if f.Specimen {
		f.InfoText = "TEST - not valid for travel"
	}
	// U_HEAD: company, ticket key (20), issuing time DDMMYYYYHHMM, flags
	// (4 = specimen), language and second language.
	key := strings.ToUpper(strings.NewReplacer("-", "").Replace(c.TicketID))
	key = key[max(0, len(key)-20):]
	flags := 0
	if f.Specimen {
		flags = 4
	}
	head := fmt.Appendf(nil, "%04d%-20s%s%dDEEN", iss.RICS, key, at.Format("020120061504"), flags)
	return f, head, nil
}

// Read decodes a container's U_FLEX record without checking the signature.
func Read(b []byte) (Ticket, Container, error) {
	c, err := Parse(b)
	if err != nil {
		return Ticket{}, c, err
	}
	r, ok := c.Record("U_FLEX")
	if !ok {
		return Ticket{}, c, errors.New("the container has no U_FLEX record")
	}
	if r.Version != FCBVersion {
		return Ticket{}, c, fmt.Errorf("U_FLEX version %02d: farebox reads FCB version %d", r.Version, FCBVersion)
	}
	f, err := UnmarshalFCB(r.Data)
	if err != nil {
		return Ticket{}, c, err
	}
	t := fromFCB(f)
	t.RICS, t.KeyID, t.Container = c.RICS, c.KeyID, c.Version
	return t, c, nil
}

func fromFCB(f FCB) Ticket {
	issued := time.Date(f.IssuingYear, 1, f.IssuingDay, f.IssuingTime/60, f.IssuingTime%60, 0, 0, time.UTC)
	day := time.Date(issued.Year(), issued.Month(), issued.Day(), 0, 0, 0, 0, time.UTC)
	fromDay := day.AddDate(0, 0, f.ValidFromDay)
	from := fromDay.Add(time.Duration(f.ValidFromTime+15*f.ValidFromOffset) * time.Minute)
	until := fromDay.AddDate(0, 0, f.ValidUntilDay).Add(time.Duration(f.ValidUntilTime+15*f.ValidUntilOffset) * time.Minute)
	t := Ticket{
		Claims: barcode.Claims{
			TicketID: f.ReferenceIA5, ProductName: f.TariffDesc, ValidFrom: from, ValidUntil: until,
			FirstName: f.FirstName, LastName: f.LastName, Environment: barcode.EnvLive,
		},
		Area: f.ValidRegionDesc, ProductOwner: f.ProductOwnerNum, IssuedAt: issued,
	}
	if f.Specimen {
		t.Environment = barcode.EnvTest
	}
	if f.ProductIDNum >= 0 {
		t.ProductNumber = f.ProductIDNum
		t.ProductID = strconv.Itoa(f.ProductIDNum)
	} else {
		t.ProductID = f.ProductIDIA5
	}
	if f.YearOfBirth != 0 {
		t.BirthDate = time.Date(f.YearOfBirth, 1, f.DayOfBirth, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	}
	return t
}
