// Command alertsfeed writes the test service alerts feed
// (testtool.CaltrainAlerts: GTFS-Realtime Alerts on the real Caltrain ids,
// one to three of them on every entry of a Caltrain board from 17:00:30
// PST on 2023-11-07) to a file, for load scripts that run a real server
// with --realtime-alerts (bench/alerts.sh). It prints the time from which
// the agency-wide alert applies, in Unix seconds.
//
//	alertsfeed FILE
package main

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/proto"

	"github.com/farebox/farebox/internal/testtool"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: alertsfeed FILE")
		os.Exit(2)
	}
	b, err := proto.Marshal(testtool.CaltrainAlerts())
	if err == nil {
		err = os.WriteFile(os.Args[1], b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "alertsfeed:", err)
		os.Exit(1)
	}
	fmt.Println(testtool.CaltrainAgencyAlertStart)
}
