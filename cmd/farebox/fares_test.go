package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/testtool"
)

// TestFaresExport: `farebox fares export` writes the stored catalog as
// NeTEx to standard output or a file, and the GTFS Fares v2 files of an
// imported feed as a zip or into a directory; bad flags name the problem
// and write nothing.
func TestFaresExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"FAREBOX_DATA_DIR": dir, "FAREBOX_SELLER_NAME": "Verkehrsverbund Test GmbH"}
	cli(t, env, "migrate", "--create")
	cli(t, env, "gtfs", "import", "--feed-id", "sample", gtfsData+"sample-gtfs-feed-0.13.0.zip")
	out := cli(t, env, "fares", "export", "--format", "netex")
	testtool.Contains(t, out, `<PublicationDelivery xmlns="http://www.netex.org.uk/netex"`, "<Name>Verkehrsverbund Test GmbH</Name>", "<Amount>49.00</Amount>")
	file := filepath.Join(dir, "fares.xml")
	cli(t, env, "fares", "export", "--format", "netex", "--output", file)
	if b, err := os.ReadFile(file); err != nil || string(b) != out {
		t.Errorf("--output differs from standard output (%v)", err)
	}
	zipFile := filepath.Join(dir, "fares.zip")
	cli(t, env, "fares", "export", "--format", "gtfs-fares-v2", "--feed-id", "sample", "--output", zipFile)
	files := testtool.Must(testtool.GTFSFaresZip(testtool.Must(os.ReadFile(zipFile))(t)))(t)
	stops := map[string]bool{}
	for _, id := range testtool.GTFSFeed(t, "sample-gtfs-feed-0.13.0.zip").Stops.ID {
		stops[id] = true
	}
	for _, p := range testtool.CheckGTFSFares(files, stops) {
		t.Error(p)
	}
	outDir := filepath.Join(dir, "gtfs-fares") + "/"
	cli(t, env, "fares", "export", "--format", "gtfs-fares-v2", "--feed-id", "sample", "--output", outDir)
	for name, want := range files {
		if got, err := os.ReadFile(filepath.Join(outDir, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s in the directory differs from the zip's (%v)", name, err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fares", "export"}, "format must be netex or gtfs-fares-v2"},
		{[]string{"fares", "export", "--format", "gtfs-fares-v2"}, "feed_id is required"},
		{[]string{"fares", "export", "--format", "gtfs-fares-v2", "--feed-id", "nope"}, `no GTFS feed "nope" is loaded`},
		{[]string{"fares", "export", "--format", "netex", "--area-id", "farebox-area-x"}, "no area with this id"},
		{[]string{"fares", "list"}, "Usage:"},
	} {
		var o, e bytes.Buffer
		err := run(context.Background(), c.args, envFrom(env), nil, &o, &e)
		if err == nil || !strings.Contains(err.Error()+e.String(), c.want) || o.Len() != 0 {
			t.Errorf("%v: err=%v stderr=%q stdout %d bytes; want an error saying %q", c.args, err, e.String(), o.Len(), c.want)
		}
	}
}
