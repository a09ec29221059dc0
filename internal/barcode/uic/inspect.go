package uic

import (
	"errors"
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/barcode"
)

// Inspect verifies a 918.3 container against trust and judges it at now,
// in the same Report `farebox inspect` prints for every profile.
func Inspect(b []byte, trust *Trust, now time.Time) barcode.Report {
	notGenuine := func(reason string) barcode.Report {
		return barcode.Report{Reason: reason, State: barcode.StateNotGenuine, At: now}
	}
	t, c, err := Read(b)
	if err != nil {
		return notGenuine("the UIC 918.3 barcode is malformed: " + err.Error())
	}
	var k trusted
	if trust != nil {
		k = trust.keys[[2]int{c.RICS, c.KeyID}]
	}
	if k.pub == nil {
		return notGenuine(fmt.Sprintf("it is signed with an unknown key (company %04d, key %05d)", c.RICS, c.KeyID))
	}
	if err := c.VerifySignature(k.pub); err != nil {
		if errors.Is(err, ErrSignature) {
			return notGenuine("its signature does not verify (forged or altered)")
		}
		return notGenuine(err.Error())
	}
	if k.dev && !t.Test() {
		return notGenuine("a development key signed a ticket that is not marked as specimen")
	}
	dev := ""
	if k.dev {
		dev = " (farebox DEVELOPMENT key, not registered with the UIC)"
	}
	signer := fmt.Sprintf("UIC 918.3 container %02d with U_FLEX (FCB %d.%d), company %04d, key %05d%s",
		c.Version, FCBVersion/10, FCBVersion%10, c.RICS, c.KeyID, dev)
	extra := fmt.Sprintf("Area:        %s\nIssued:      %s\n", t.Area, t.IssuedAt.Format(time.RFC3339))
	return barcode.Report{Genuine: true, Claims: t.Claims, State: barcode.ValidityState(t.Claims, now), Test: t.Test(),
		At: now, Signer: signer, Extra: extra}
}
