package account

import (
	"strings"
	"testing"
)

func TestNewKeyRoundTrip(t *testing.T) {
	for _, env := range []Environment{Live, Test} {
		secret, prefix, hash := NewKey(env)
		got, ok := ParseKey(secret)
		if !ok || got != env {
			t.Fatalf("ParseKey(%q) = %v, %v; want %v, true", secret, got, ok, env)
		}
		if !strings.HasPrefix(secret, prefix) || len(prefix) != len("fbx_live_")+8 {
			t.Errorf("prefix %q not a prefix of %q", prefix, secret)
		}
		if hash != Hash(secret) || len(hash) != 64 {
			t.Errorf("hash mismatch")
		}
	}
	a, _, _ := NewKey(Live)
	b, _, _ := NewKey(Live)
	if a == b {
		t.Fatal("two keys are equal")
	}
}

func TestParseKeyRejects(t *testing.T) {
	good, _, _ := NewKey(Test)
	for _, s := range []string{"", "fbx_live_", "fbx_prod_" + good[9:], good + "x", good[:len(good)-1], strings.Replace(good, good[10:11], "0", 1), "Bearer " + good} {
		if _, ok := ParseKey(s); ok {
			t.Errorf("ParseKey(%q) accepted", s)
		}
	}
}

func FuzzParseKey(f *testing.F) {
	good, _, _ := NewKey(Live)
	f.Add(good)
	f.Add("fbx_test_")
	f.Add("\x00\xff")
	f.Fuzz(func(t *testing.T, s string) {
		env, ok := ParseKey(s)
		if ok && (len(s) != 41 || (env != Live && env != Test)) {
			t.Fatalf("accepted malformed key %q", s)
		}
	})
}
