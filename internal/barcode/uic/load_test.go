package uic

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLoadOrCreateDevIssuer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys", "uic")
	// Many starters at once agree on one key.
	var wg sync.WaitGroup
	got := make([]*Issuer, 4)
	made := make([]bool, 4)
	for i := range got {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var err error
			if got[i], made[i], err = LoadOrCreateDevIssuer(dir); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	creators := 0
	for i, iss := range got {
		if made[i] {
			creators++
		}
		if !iss.Development || iss.RICS != DevRICS || iss.KeyID != DevKeyID || iss.Version != 1 {
			t.Errorf("issuer %d: %+v", i, iss)
		}
	}
	again, created, err := LoadOrCreateDevIssuer(dir)
	if err != nil || created || creators != 1 || again.Key.X.Cmp(got[0].Key.X) != 0 {
		t.Errorf("reload: created=%v creators=%d err=%v", created, creators, err)
	}
	for i := range got {
		if got[i].Key.X.Cmp(again.Key.X) != 0 {
			t.Errorf("starter %d uses another key", i)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, DevIssuerFile), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateDevIssuer(dir); err == nil {
		t.Error("corrupt key file accepted")
	}
}

func TestLoadIssuer(t *testing.T) {
	dir := t.TempDir()
	p, _ := MarshalKeyPEM(devIssuer(t, 2).Key)
	key := filepath.Join(dir, "uic.pem")
	if err := os.WriteFile(key, p, 0o600); err != nil {
		t.Fatal(err)
	}
	iss, err := LoadIssuer("1080:42:"+key, "DB Regio")
	if err != nil || iss.RICS != 1080 || iss.KeyID != 42 || iss.Version != 2 || iss.Development || iss.Name != "DB Regio" {
		t.Fatalf("%+v %v", iss, err)
	}
	for spec, want := range map[string]string{
		"1080:42":            "RICS:KEYID:KEYFILE",
		"0:42:" + key:        "RICS must be",
		"10000:42:" + key:    "RICS must be",
		"1080:100000:" + key: "KEYID",
		"x:1:" + key:         "RICS must be",
		fmt.Sprintf("%d:%d:%s", DevRICS, DevKeyID, key): "development",
		"1080:42:" + key + ".none":                      "no such file",
	} {
		if _, err := LoadIssuer(spec, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %q", spec, err, want)
		}
	}
}
