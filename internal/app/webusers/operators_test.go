package webusers

import (
	"strings"
	"testing"
)

func TestOperatorPasswordLine(t *testing.T) {
	line, err := HashOperatorPassword("ops", "correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(line, "ops:$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("line %q", line)
	}
	c, err := ParseOperatorCredentials(line + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if !c.verify("ops", "correct horse battery staple") || c.verify("ops", "correct horse battery staplE") || c.verify("admin", "correct horse battery staple") {
		t.Error("verify")
	}
	for _, bad := range []string{"", "ops:plain", "$argon2i$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$" + strings.Repeat("A", 43),
		"$argon2id$v=19$m=0,t=1,p=1$c2FsdHNhbHQ$" + strings.Repeat("A", 43), "$argon2id$v=19$m=64,t=1,p=1$!!$AAAA"} {
		if _, err := ParseOperatorCredentials(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if _, err := HashOperatorPassword("a:b", "x"); err == nil {
		t.Error("user with a colon accepted")
	}
}

// BenchmarkOperatorPasswordCheck is the cost of one console sign-in's
// password check with the parameters farebox admin-password writes.
func BenchmarkOperatorPasswordCheck(b *testing.B) {
	line, err := HashOperatorPassword("ops", "correct horse battery staple")
	if err != nil {
		b.Fatal(err)
	}
	c, err := ParseOperatorCredentials(line)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if c.verify("ops", "wrong") {
			b.Fatal("accepted")
		}
	}
}
