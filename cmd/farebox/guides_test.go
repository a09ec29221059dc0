package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/shareddata"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
)

// guideFiles are the documents whose ```sh blocks TestGuidesRun executes.
func guideFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../../docs/quickstart.md"}
	more, err := filepath.Glob("../../docs/guides/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("guide %s: %v", f, err)
		}
	}
	if len(files) < 5 {
		t.Fatalf("expected docs/quickstart.md and the four flow guides in docs/guides, found %v", files)
	}
	return files
}

// shBlock is one ```sh block of a guide: its first command line (1-based)
// in the file, its lines, and why it is not run (empty: it runs).
type shBlock struct {
	file  string
	line  int
	lines []string
	norun string
}

var norunRe = regexp.MustCompile(`^<!--\s*norun:\s*(.*?)\s*-->$`)

// parseGuide returns the ```sh blocks of a Markdown file. A block preceded
// by `<!-- norun: REASON -->` is not run; the reason is mandatory, so every
// skipped block says why. Other fences (```json, ```text) are output shown
// to the reader and are never run.
func parseGuide(name string, src []byte) ([]shBlock, error) {
	var blocks []shBlock
	var cur *shBlock
	inOther := false
	prev := ""
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur != nil && trimmed == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		case inOther:
			if trimmed == "```" {
				inOther = false
			}
		case trimmed == "```sh" || trimmed == "```bash":
			cur = &shBlock{file: name, line: n + 1}
			if strings.HasPrefix(prev, "<!--") && strings.Contains(prev, "norun") {
				m := norunRe.FindStringSubmatch(prev)
				if m == nil || m[1] == "" {
					return nil, fmt.Errorf("%s:%d: a norun marker must read <!-- norun: REASON -->", name, n-1)
				}
				cur.norun = m[1]
			}
		case strings.HasPrefix(trimmed, "```sh") || strings.HasPrefix(trimmed, "```bash"):
			return nil, fmt.Errorf("%s:%d: unknown shell fence %q: use ```sh, preceded by <!-- norun: REASON --> when it must not run", name, n, trimmed)
		case strings.HasPrefix(trimmed, "```"):
			inOther = true
		}
		if trimmed != "" {
			prev = trimmed
		}
	}
	if cur != nil || inOther {
		return nil, fmt.Errorf("%s: unterminated code block", name)
	}
	return blocks, sc.Err()
}

// TestParseGuide pins the extraction: runnable and norun blocks with their
// line numbers, other fences ignored, a norun without reason refused.
func TestParseGuide(t *testing.T) {
	t.Parallel()
	src := "# T\n\n<!-- norun: the test starts its own server -->\n```sh\nfarebox serve\n```\n\n```json\n{\"a\":1}\n```\n\n```sh\necho one\necho two\n```\n"
	blocks, err := parseGuide("g.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0].norun != "the test starts its own server" || blocks[0].line != 5 ||
		blocks[1].norun != "" || blocks[1].line != 13 || strings.Join(blocks[1].lines, ";") != "echo one;echo two" {
		t.Fatalf("blocks = %+v", blocks)
	}
	if _, err := parseGuide("g.md", []byte("<!-- norun -->\n```sh\nx\n```\n")); err == nil {
		t.Fatal("a norun marker without a reason was accepted")
	}
	if _, err := parseGuide("g.md", []byte("```sh {norun}\nx\n```\n")); err == nil {
		t.Fatal("an unknown fence info string was accepted")
	}
}

// guideScript joins the runnable blocks of one guide into one bash script,
// as a reader pasting them into one terminal would run them (variables
// carry over from block to block), and returns for every script line the
// guide's file:line it came from. Any failing command stops the script
// (errexit, pipefail) and the ERR trap names its script line.
func guideScript(blocks []shBlock) (string, []string) {
	var b strings.Builder
	origin := []string{""} // script lines are 1-based
	add := func(s, from string) {
		b.WriteString(s)
		b.WriteByte('\n')
		origin = append(origin, from)
	}
	add(`set -e -o pipefail`, "")
	add(`trap 'echo "__guide_failed__ $LINENO $?" >&2' ERR`, "")
	for _, bl := range blocks {
		if bl.norun != "" {
			continue
		}
		for i, l := range bl.lines {
			add(l, fmt.Sprintf("%s:%d", bl.file, bl.line+i))
		}
	}
	add(`echo __guide_done__`, "")
	return b.String(), origin
}

var failedRe = regexp.MustCompile(`__guide_failed__ (\d+) (\d+)`)

// TestGuidesRun executes every ```sh block of docs/quickstart.md and
// docs/guides/*.md with bash against a fresh `farebox serve` (the built
// binary, on PATH as `farebox`), on both engines, so the guides never rot.
// A failing command fails the test with its file:line and the output.
func TestGuidesRun(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Guides)
	for _, tool := range []string{"bash", "curl", "jq", "unzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: the guides use it (scripts/test.sh installs it from scripts/apt-packages.txt)", tool)
		}
	}
	bin := fareboxBinary(t)
	// The guides' FAREBOX_CHECKOUT: the quickstart imports the feed the
	// repository carries, the departures guide fetches Caltrain's into
	// testdata/ with tools/testdata; neither reads ../shared.
	checkout, ok := shareddata.Root()
	if !ok {
		t.Fatal("module root not found above the working directory")
	}
	if _, err := os.Stat(filepath.Join(checkout, "testdata", "gtfs", "sample-gtfs-feed-0.13.0.zip")); err != nil {
		t.Fatalf("the quickstart's feed: %v", err)
	}
	for _, file := range guideFiles(t) {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(file, "../../")
		blocks, err := parseGuide(name, src)
		if err != nil {
			t.Fatal(err)
		}
		runnable := 0
		for _, bl := range blocks {
			if bl.norun != "" {
				t.Logf("%s:%d not run: %s", bl.file, bl.line, bl.norun)
			} else {
				runnable++
			}
		}
		if runnable == 0 {
			t.Fatalf("%s has no runnable ```sh block", name)
		}
		script, origin := guideScript(blocks)
		outputs := outputBlocks(src)
		for _, engine := range []store.Engine{store.SQLite, store.Postgres} {
			t.Run(strings.TrimSuffix(filepath.Base(name), ".md")+"/"+string(engine), func(t *testing.T) {
				out, dir := runGuide(t, bin, checkout, engine, script, origin)
				// The output the page shows is what the commands print.
				for _, o := range outputs {
					if !bytes.Contains(out, []byte(o)) {
						t.Errorf("%s shows output the commands did not print:\n%s\noutput:\n%s", name, o, out)
					}
				}
				// The commands write their files into a temporary
				// directory, not into the checkout they run in.
				if entries, _ := os.ReadDir(dir); len(entries) > 0 && writesNoFiles[name] {
					var names []string
					for _, e := range entries {
						names = append(names, e.Name())
					}
					t.Errorf("%s left files in the directory it runs in (the checkout): %v", name, names)
				}
			})
		}
	}
}

// writesNoFiles are the guides whose commands keep the directory they run
// in (the reader's checkout) clean.
var writesNoFiles = map[string]bool{"docs/quickstart.md": true, "docs/guides/departures.md": true}

var outputMarkRe = regexp.MustCompile(`^<!--\s*output:.*-->$`)

// outputBlocks returns the fenced blocks of a guide marked as the output of
// the commands before them (`<!-- output: ... -->` on the line before).
func outputBlocks(src []byte) []string {
	var blocks []string
	lines := strings.Split(string(src), "\n")
	for i := 1; i < len(lines); i++ {
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), "```") || !outputMarkRe.MatchString(strings.TrimSpace(lines[i-1])) {
			continue
		}
		var b []string
		for j := i + 1; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			b = append(b, lines[j])
		}
		blocks = append(blocks, strings.Join(b, "\n"))
	}
	return blocks
}

// runGuide runs a guide's script in a fresh directory and returns its
// output and that directory.
func runGuide(t *testing.T, bin, checkout string, engine store.Engine, script string, origin []string) ([]byte, string) {
	env := map[string]string{"FAREBOX_DATA_DIR": t.TempDir(),
		// A feed imported while the server runs is picked up within this
		// interval (default 10 s); the departures guide waits for it.
		"FAREBOX_GTFS_REFRESH": "1s"}
	if engine == store.Postgres {
		opts := storetest.Options(t, store.Postgres)
		env["FAREBOX_DATABASE_URL"] = opts.URL + "&search_path=" + opts.Schema
	}
	srv := startChild(t, env)
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"TMPDIR=" + t.TempDir(), "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8",
		"FAREBOX_URL=" + srv.url(), "FAREBOX_CHECKOUT=" + checkout}
	for _, kv := range os.Environ() { // `go run ./tools/testdata` in the departures guide
		if strings.HasPrefix(kv, "GO") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	where, ok := guideOutcome(out, err, origin)
	if ok {
		return out, cmd.Dir
	}
	tail := out
	if len(tail) > 6000 {
		tail = tail[len(tail)-6000:]
	}
	t.Fatalf("guide command failed at %s: %v\noutput:\n%s\nserver log (tail):\n%s", where, err, tail, lastLines(srv.logs.String(), 20))
	return nil, ""
}

// guideOutcome says whether a guide script ran to its end and, when not,
// the file:line of the command that failed.
func guideOutcome(out []byte, err error, origin []string) (string, bool) {
	if err == nil && bytes.HasSuffix(bytes.TrimSpace(out), []byte("__guide_done__")) {
		return "", true
	}
	if m := failedRe.FindSubmatch(out); m != nil {
		n, _ := strconv.Atoi(string(m[1]))
		if n > 0 && n < len(origin) && origin[n] != "" {
			return origin[n] + " (exit status " + string(m[2]) + ")", false
		}
	}
	return "(no command reported: the script stopped outside a command, e.g. by exit)", false
}

// TestGuideScriptReportsFailingLine runs generated scripts with bash: a
// failing command in a later block (inside a pipeline, a command
// substitution or a loop) is reported at its file:line, variables carry
// over between blocks, a norun block is left out and an early exit is a
// failure too.
func TestGuideScriptReportsFailingLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src, want string
	}{
		{"```sh\nA=1\n```\n\n<!-- norun: would fail -->\n```sh\nfalse\n```\n\n```sh\ntest \"$A\" = 1\necho ok\n```\n", ""},
		{"```sh\nA=1\n```\n\n```sh\necho x\ntest \"$A\" = 2\necho never\n```\n", "g.md:7 (exit status 1)"},
		{"```sh\necho one\nB=$(echo '{}' | jq -er .missing)\n```\n", "g.md:3 (exit status 1)"},
		{"```sh\nfor i in 1 2; do\n  echo $i | grep -q 3\ndone\n```\n", "g.md:3 (exit status 1)"},
		{"```sh\ntrue | false | true\n```\n", "g.md:2 (exit status 1)"},
		{"```sh\nexit 0\n```\n", "(no command reported: the script stopped outside a command, e.g. by exit)"},
	}
	for i, c := range cases {
		blocks, err := parseGuide("g.md", []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		script, origin := guideScript(blocks)
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		where, ok := guideOutcome(out, err, origin)
		if ok != (c.want == "") || where != c.want {
			t.Errorf("case %d: outcome (%q, %v), want %q\n%s", i, where, ok, c.want, out)
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var createNameRe = regexp.MustCompile(`accounts create --name "([^"]+)"`)

// TestGuideAccountNamesDiffer: the README and the guides each create their
// own account: a reader who runs the README and then the quickstart in the
// same directory must not end up with two accounts of one name, which
// makes the README's `accounts create --name NAME --test` refuse.
func TestGuideAccountNamesDiffer(t *testing.T) {
	t.Parallel()
	owner := map[string]string{}
	for _, file := range append([]string{"../../README.md"}, guideFiles(t)...) {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(file, "../../")
		for _, m := range createNameRe.FindAllStringSubmatch(string(src), -1) {
			if o := owner[m[1]]; o != "" && o != name {
				t.Errorf("%s and %s both create an account named %q", o, name, m[1])
			}
			owner[m[1]] = name
		}
	}
	if len(owner) < 3 {
		t.Fatalf("found only the account names %v", owner)
	}
}

var machinePathRe = regexp.MustCompile(`(^|[\s"'=(:])(/work/|/root/|/home/[a-z])`)

// TestDocsNameNoMachinePaths: the documentation's commands work in any
// checkout; none names a directory of one machine (a checkout under /work,
// a home directory).
func TestDocsNameNoMachinePaths(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../../docs/guides/*.md")
	files = append(append(files, more...), "../../README.md", "../../testdata/README.md")
	if len(files) < 10 {
		t.Fatalf("found only %v", files)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if machinePathRe.MatchString(line) {
				t.Errorf("%s:%d names a machine path: %s", strings.TrimPrefix(file, "../../"), i+1, strings.TrimSpace(line))
			}
		}
	}
}
