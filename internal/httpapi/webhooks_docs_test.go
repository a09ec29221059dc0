package httpapi_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
)

// docBlock returns the fenced code block of language lang in
// docs/webhooks.md.
func docBlock(t *testing.T, lang string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "webhooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("docs/webhooks.md has no %s block", lang)
	}
	return m[1]
}

// TestWebhookDocsExamples runs the verification examples of
// docs/webhooks.md in Go, Python and Node, as written there, against real
// signed deliveries of a server on the system clock: each accepts the
// delivery, refuses a changed body and another secret, and during a
// rotation's overlap accepts both secrets.
func TestWebhookDocsExamples(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{Now: time.Now()})
	rc := newReceiver(t, nil)
	ep := createEndpoint(t, e, e.TestKey, rc.URL, "*")
	ids := productIDs(t, e)
	order(t, e, e.TestKey, ids["single/adult"])
	drain(t, e)
	oldSecret := str(ep["secret"])
	newSecret := str(e.Must(200, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints/" + str(ep["id"]) + "/rotate_secret.json",
		Key: e.TestKey}).Map(t)["secret"])
	order(t, e, e.TestKey, ids["single/adult"])
	drain(t, e)
	got := rc.all()
	if len(got) != 2 {
		t.Fatalf("%d deliveries", len(got))
	}
	dir := t.TempDir()
	goMain := "package main\n\nimport (\n\t\"crypto/hmac\"\n\t\"crypto/sha256\"\n\t\"encoding/hex\"\n\t\"fmt\"\n\t\"os\"\n\t\"strconv\"\n\t\"strings\"\n\t\"time\"\n)\n\n" +
		docBlock(t, "go") + "\nfunc main() {\n\tbody, _ := os.ReadFile(os.Args[1])\n\tfmt.Println(map[bool]string{true: \"ok\", false: \"bad\"}[Verify(body, os.Getenv(\"SIG\"), os.Getenv(\"SECRET\"), 5*time.Minute)])\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(goMain), 0o600); err != nil {
		t.Fatal(err)
	}
	goBin := filepath.Join(dir, "verify")
	build := exec.Command("go", "build", "-o", goBin, "main.go")
	build.Dir, build.Env = dir, append(os.Environ(), "GO111MODULE=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the Go example does not build: %v\n%s", err, out)
	}
	py := docBlock(t, "python") + "\nimport os, sys\nprint('ok' if verify(open(sys.argv[1], 'rb').read(), os.environ['SIG'], os.environ['SECRET']) else 'bad')\n"
	js := docBlock(t, "js") + "\nconst fs = require('fs');\nconsole.log(verify(fs.readFileSync(process.argv[2]), process.env.SIG, process.env.SECRET) ? 'ok' : 'bad');\n"
	for _, f := range []struct{ name, text string }{{"verify.py", py}, {"verify.js", js}} {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	runners := map[string][]string{"go": {goBin}, "python": {"python3", filepath.Join(dir, "verify.py")}, "node": {"node", filepath.Join(dir, "verify.js")}}
	n := 0
	check := func(body []byte, sig, secret, want string) {
		t.Helper()
		n++
		bodyFile := filepath.Join(dir, "body"+strings.Repeat("x", n))
		if err := os.WriteFile(bodyFile, body, 0o600); err != nil {
			t.Fatal(err)
		}
		for lang, argv := range runners {
			cmd := exec.Command(argv[0], append(argv[1:], bodyFile)...)
			cmd.Env = append(os.Environ(), "SIG="+sig, "SECRET="+secret)
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != want {
				t.Errorf("%s example on %.40s…: %q %v, want %s", lang, body, out, err, want)
			}
		}
	}
	first, overlap := got[0], got[1]
	check(first.Body, first.Signature, oldSecret, "ok")
	check(append(append([]byte(nil), first.Body[:len(first.Body)-1]...), ' ', '}'), first.Signature, oldSecret, "bad")
	check(first.Body, first.Signature, newSecret, "bad")
	check(overlap.Body, overlap.Signature, oldSecret, "ok")
	check(overlap.Body, overlap.Signature, newSecret, "ok")
	check(overlap.Body, strings.Replace(overlap.Signature, "t=", "t=1", 1), newSecret, "bad")
}
