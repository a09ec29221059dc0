package barcodetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// KitineraryExtractor is where Debian's libkpimitinerary-bin (22.12)
// installs KDE Itinerary's extractor: not on PATH (scripts/apt-packages.txt
// names it so scripts/test.sh installs the package).
const KitineraryExtractor = "/usr/lib/x86_64-linux-gnu/libexec/kf5/kitinerary-extractor"

// KitTicket is the part of kitinerary-extractor's JSON-LD a ticket check reads.
type KitTicket struct {
	Type     string `json:"@type"`
	Name     string `json:"name"`
	IssuedBy struct {
		Identifier string `json:"identifier"`
		Name       string `json:"name"`
	} `json:"issuedBy"`
	TicketNumber string `json:"ticketNumber"`
	UnderName    struct {
		GivenName  string `json:"givenName"`
		FamilyName string `json:"familyName"`
	} `json:"underName"`
	ValidFrom  string `json:"validFrom"`
	ValidUntil string `json:"validUntil"`
}

// Kitinerary runs kitinerary-extractor on a file (a raw barcode, an image
// of one, a PDF). A missing extractor fails the test. --no-validation:
// 22.12's result validator drops a Ticket without a reservation (a pass
// such as the Deutschlandticket) although it decoded it.
func Kitinerary(t testing.TB, path string) []KitTicket {
	t.Helper()
	res, _ := KitineraryLog(t, path)
	return res
}

// KitineraryLog is Kitinerary with the library's log (its debug and
// warning messages, on standard error) returned as well.
func KitineraryLog(t testing.TB, path string) ([]KitTicket, string) {
	t.Helper()
	bin := KitineraryExtractor
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath("kitinerary-extractor"); err != nil {
			t.Fatal("kitinerary-extractor not installed (apt-get install libkpimitinerary-bin; scripts/test.sh does)")
		}
	}
	cmd := exec.Command(bin, "--no-validation", path)
	cmd.Env = append(os.Environ(), "QT_QPA_PLATFORM=offscreen", "QT_LOGGING_RULES=org.kde.kitinerary*=true")
	var log strings.Builder
	cmd.Stderr = &log
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kitinerary-extractor %s: %v", path, err)
	}
	var res []KitTicket
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("kitinerary output: %v\n%s", err, out)
	}
	return res, log.String()
}
