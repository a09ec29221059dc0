// Package webhooktest checks webhook signatures the way a partner's
// receiver does, for the tests of the sender.
package webhooktest

import (
	"crypto/hmac"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/webhook"
)

// Verify checks a signature header against body with secret at now: the
// timestamp within tolerance and one v1 matching, as a receiver does
// (docs/webhooks.md).
func Verify(header string, body []byte, secret string, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("no timestamp")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("timestamp outside the tolerance")
	}
	want := webhook.Sign([]string{secret}, time.Unix(sec, 0), body)
	_, mac, _ := strings.Cut(want, ",v1=")
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(mac)) {
			return nil
		}
	}
	return fmt.Errorf("no matching signature")
}
