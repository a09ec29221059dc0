package httpapi_test

import (
	"fmt"
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
	// Each example checks every case in one run (a body file, its
	// signature header and the secret per case: argument triples), so
	// each runtime starts once.
	type verifyCase struct {
		body        []byte
		sig, secret string
		want        string
	}
	first, overlap := got[0], got[1]
	cases := []verifyCase{
		{first.Body, first.Signature, oldSecret, "ok"},
		{append(append([]byte(nil), first.Body[:len(first.Body)-1]...), ' ', '}'), first.Signature, oldSecret, "bad"},
		{first.Body, first.Signature, newSecret, "bad"},
		{overlap.Body, overlap.Signature, oldSecret, "ok"},
		{overlap.Body, overlap.Signature, newSecret, "ok"},
		{overlap.Body, strings.Replace(overlap.Signature, "t=", "t=1", 1), newSecret, "bad"},
	}
	dir := t.TempDir()
	var args, want []string
	for i, c := range cases {
		bodyFile := filepath.Join(dir, fmt.Sprintf("body%d", i))
		if err := os.WriteFile(bodyFile, c.body, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, bodyFile, c.sig, c.secret)
		want = append(want, c.want)
	}
	goMain := "package main\n\nimport (\n\t\"crypto/hmac\"\n\t\"crypto/sha256\"\n\t\"encoding/hex\"\n\t\"fmt\"\n\t\"os\"\n\t\"strconv\"\n\t\"strings\"\n\t\"time\"\n)\n\n" +
		docBlock(t, "go") + "\nfunc main() {\n\tfor a := os.Args[1:]; len(a) >= 3; a = a[3:] {\n\t\tbody, _ := os.ReadFile(a[0])\n\t\tfmt.Println(map[bool]string{true: \"ok\", false: \"bad\"}[Verify(body, a[1], a[2], 5*time.Minute)])\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(goMain), 0o600); err != nil {
		t.Fatal(err)
	}
	goBin := filepath.Join(dir, "verify")
	build := exec.Command("go", "build", "-o", goBin, "main.go")
	build.Dir, build.Env = dir, append(os.Environ(), "GO111MODULE=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the Go example does not build: %v\n%s", err, out)
	}
	py := docBlock(t, "python") + "\nimport sys\na = sys.argv[1:]\nfor i in range(0, len(a) - 2, 3):\n    print('ok' if verify(open(a[i], 'rb').read(), a[i + 1], a[i + 2]) else 'bad')\n"
	js := docBlock(t, "js") + "\nconst fs = require('fs');\nconst a = process.argv.slice(2);\nfor (let i = 0; i + 2 < a.length; i += 3) console.log(verify(fs.readFileSync(a[i]), a[i + 1], a[i + 2]) ? 'ok' : 'bad');\n"
	for _, f := range []struct{ name, text string }{{"verify.py", py}, {"verify.js", js}} {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	runners := map[string][]string{"go": {goBin}, "python": {"python3", filepath.Join(dir, "verify.py")}, "node": {"node", filepath.Join(dir, "verify.js")}}
	for lang, argv := range runners {
		out, err := exec.Command(argv[0], append(argv[1:], args...)...).CombinedOutput()
		if lines := strings.Fields(string(out)); err != nil || strings.Join(lines, " ") != strings.Join(want, " ") {
			t.Errorf("%s example: %q %v, want %v (cases: first delivery, changed body, other secret, overlap old secret, overlap new secret, changed timestamp)",
				lang, out, err, want)
		}
	}
}
