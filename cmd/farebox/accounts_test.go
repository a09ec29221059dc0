package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestAccountsSubcommandHelp: each `farebox accounts` subcommand's --help
// lists its own flags and none of another's (issue 28: `accounts invite
// --help` showed the flags of `accounts create`).
func TestAccountsSubcommandHelp(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ want, not []string }{
		"create":        {want: []string{"-name", "-account", "-test", "-json"}, not: []string{"-email", "-url", "-yes"}},
		"list":          {want: []string{"-json"}, not: []string{"-name", "-email", "-url", "-yes", "-test"}},
		"revoke":        {want: []string{"-account", "-yes"}, not: []string{"-name", "-email", "-url", "-test", "-json"}},
		"invite":        {want: []string{"-account", "-email", "-url"}, not: []string{"-name", "-test", "-json", "-yes"}},
		"remove-user":   {want: []string{"-account", "-email"}, not: []string{"-name", "-test", "-json", "-yes", "-url"}},
		"grant-product": {not: []string{"-name", "-email", "-url", "-test", "-json", "-yes", "-account"}},
	}
	for sub, c := range cases {
		var out, errb bytes.Buffer
		err := run(context.Background(), []string{"accounts", sub, "--help"}, envFrom(map[string]string{"FAREBOX_DATA_DIR": t.TempDir()}), nil, &out, &errb)
		if err == nil {
			t.Errorf("accounts %s --help: no error", sub)
		}
		help := errb.String()
		if !strings.Contains(help, "farebox accounts "+sub) || !strings.Contains(help, "-data-dir") {
			t.Errorf("accounts %s --help:\n%s", sub, help)
		}
		for _, f := range c.want {
			if !strings.Contains(help, "  "+f+" ") && !strings.Contains(help, "  "+f+"\n") {
				t.Errorf("accounts %s --help lacks %s:\n%s", sub, f, help)
			}
		}
		for _, f := range c.not {
			if strings.Contains(help, "  "+f+" ") || strings.Contains(help, "  "+f+"\n") {
				t.Errorf("accounts %s --help shows another subcommand's %s:\n%s", sub, f, help)
			}
		}
	}
}

// TestAccountsRevokeConfirms: `farebox accounts revoke` refuses a prefix
// shorter than the visible one (issue 28: "fbx_live_u" revoked keys of two
// accounts), prints what it would revoke (account, name, key prefix) and
// revokes only with --yes or with an --account that names the owner; a
// prefix naming keys of two accounts revokes nothing even with --yes, and
// --account narrows it to one. Both engines.
func TestAccountsRevokeConfirms(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		ctx := context.Background()
		opts := storetest.Options(t, engine)
		env := map[string]string{"FAREBOX_DATA_DIR": opts.DataDir}
		if engine == store.Postgres {
			env["FAREBOX_DATABASE_URL"] = opts.URL + "&search_path=" + opts.Schema
		}
		var a, b struct {
			AccountID string `json:"account_id"`
			APIKey    string `json:"api_key"`
		}
		_ = json.Unmarshal([]byte(cli(t, env, "accounts", "create", "--create", "--name", "Verkehrsbetrieb Ulm", "--json")), &a)
		_ = json.Unmarshal([]byte(cli(t, env, "accounts", "create", "--name", "Übertragung 東京", "--json")), &b)
		if a.AccountID == "" || b.AccountID == "" {
			t.Fatalf("accounts %+v %+v", a, b)
		}
		// Two keys (one per account) whose visible prefixes share the
		// first eight characters, as a collision or a careless
		// operator's copy would give.
		so := opts
		so.MustExist = true
		s, err := store.Open(ctx, so)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		shared := "fbx_live_SAME2345"
		for i, acc := range []string{a.AccountID, b.AccountID} {
			k := account.Key{ID: "farebox-key-shared" + string(rune('a'+i)), AccountID: acc, Prefix: shared + string(rune('a'+i)),
				Environment: account.Live, CreatedAt: time.Now()}
			if err := s.Write(ctx, func(q store.Q) error { return q.CreateKey(ctx, k, "hash-"+k.ID) }); err != nil {
				t.Fatal(err)
			}
		}
		active := func() map[string]bool {
			keys, err := s.Read().Keys(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]bool{}
			for _, k := range keys {
				m[k.Prefix] = k.RevokedAt == nil
			}
			return m
		}
		count := func() int {
			n := 0
			for _, on := range active() {
				if on {
					n++
				}
			}
			return n
		}
		try := func(args ...string) (string, error) {
			var out, errb bytes.Buffer
			err := run(ctx, append([]string{"accounts", "revoke"}, args...), envFrom(env), nil, &out, &errb)
			return out.String(), err
		}
		before := count()
		if before != 4 {
			t.Fatalf("%d active keys, want 4", before)
		}
		// Too short: refused before anything is looked up.
		for _, p := range []string{"fbx_live_u", "fbx_live_", "fbx_live_SAME234", a.APIKey[:len("fbx_live_")+7]} {
			for _, extra := range [][]string{nil, {"--yes"}, {"--account", a.AccountID}} {
				if _, err := try(append([]string{p}, extra...)...); err == nil || !strings.Contains(err.Error(), "at least 8") {
					t.Errorf("revoke %s %v: %v", p, extra, err)
				}
			}
		}
		if count() != before {
			t.Fatal("a short prefix revoked keys")
		}
		// Without --yes or --account: the key is listed and kept.
		pa := a.APIKey[:len("fbx_live_")+8]
		out, err := try(pa)
		if err == nil || !strings.Contains(err.Error(), "--yes") || !strings.Contains(err.Error(), a.AccountID) {
			t.Errorf("revoke without confirmation: %v", err)
		}
		if !strings.Contains(out, a.AccountID) || !strings.Contains(out, "Verkehrsbetrieb Ulm") || !strings.Contains(out, pa) || strings.Contains(out, "revoked") {
			t.Errorf("revoke without confirmation printed:\n%s", out)
		}
		if !active()[pa] {
			t.Fatal("revoked without confirmation")
		}
		// The shared prefix names two accounts: nothing, even with --yes.
		out, err = try(shared, "--yes")
		if err == nil || !strings.Contains(err.Error(), "2 accounts") || !strings.Contains(out, a.AccountID) || !strings.Contains(out, b.AccountID) ||
			!strings.Contains(out, "Übertragung 東京") {
			t.Errorf("revoke across accounts --yes: %v\n%s", err, out)
		}
		if count() != before {
			t.Fatal("a prefix of two accounts revoked keys")
		}
		// --account narrows it to one account's key.
		out, err = try(shared, "--account", b.AccountID)
		if err != nil || !strings.Contains(out, "revoked 1 key(s)") || strings.Contains(out, a.AccountID) {
			t.Errorf("revoke --account: %v\n%s", err, out)
		}
		if m := active(); m[shared+"b"] || !m[shared+"a"] {
			t.Errorf("after revoke --account %s: %v", b.AccountID, m)
		}
		// --account of another owner names nothing.
		if _, err := try(pa, "--account", b.AccountID); err == nil || !strings.Contains(err.Error(), "no active key") {
			t.Errorf("revoke with the wrong --account: %v", err)
		}
		// --yes revokes what was listed.
		out, err = try(pa, "--yes")
		if err != nil || !strings.Contains(out, "revoked 1 key(s)") || !strings.Contains(out, pa) {
			t.Errorf("revoke --yes: %v\n%s", err, out)
		}
		if m := active(); m[pa] || !m[b.APIKey[:len("fbx_live_")+8]] || !m[shared+"a"] {
			t.Errorf("after revoke --yes: %v", m)
		}
		// Revoked already: nothing to name.
		if _, err := try(pa, "--yes"); err == nil || !strings.Contains(err.Error(), "no active key") {
			t.Errorf("revoke twice: %v", err)
		}
	})
}
