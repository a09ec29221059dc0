package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/testtool"
)

// TestKeyCeremony runs the shell blocks of docs/operations.md, "Keys in a
// hardware token", in order with bash and the built binary as `farebox`: a
// scratch SoftHSM2 token is initialized, keys are generated and imported
// inside it, the service starts on it and issues a ticket, the token is
// backed up and restored, an inspection key is rotated and a leaked one
// revoked (the ticket re-signed, the feed entry, the key destroyed in the
// token), and the books key rotated (checkpoints of the old and the new
// key verify clean, the old one named as a key the database records). A
// failing command fails the test with its file:line.
func TestKeyCeremony(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Guides)
	for _, tool := range []string{"bash", "curl", "jq", "openssl", "softhsm2-util", "shred", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: the key ceremony uses it (scripts/test.sh installs it from scripts/apt-packages.txt)", tool)
		}
	}
	src, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	const heading = "## Keys in a hardware token\n"
	start := strings.Index(string(src), heading)
	if start < 0 {
		t.Fatalf("docs/operations.md has no %q", strings.TrimSpace(heading))
	}
	end := strings.Index(string(src[start+len(heading):]), "\n## ")
	section := string(src[start : start+len(heading)+end])
	// parseGuide numbers lines from the section's start: shift them to the file's.
	offset := strings.Count(string(src[:start]), "\n")
	blocks, err := parseGuide("docs/operations.md", []byte(section))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 6 {
		t.Fatalf("the key ceremony has %d shell blocks", len(blocks))
	}
	for i := range blocks {
		blocks[i].line += offset
	}
	script, origin := guideScript(blocks)
	bin := fareboxBinary(t)
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"TMPDIR=" + t.TempDir(), "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"}
	out, err := cmd.CombinedOutput()
	if where, ok := guideOutcome(out, err, origin); !ok {
		log, _ := os.ReadFile(filepath.Join(cmd.Dir, "serve.log"))
		t.Fatalf("key ceremony failed at %s: %v\noutput:\n%s\nserve log (tail):\n%s", where, err, out, lastLines(string(log), 20))
	}
}
