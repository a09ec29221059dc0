package config

import (
	"io"
	"strings"
	"testing"
)

// TestRedisSetting: --redis-url is off by default, taken from the flag or
// FAREBOX_REDIS_URL(_FILE), and a URL that is no Redis URL is refused
// naming the setting without repeating it (it may carry a password).
func TestRedisSetting(t *testing.T) {
	none := func(string) string { return "" }
	if c, err := Load(nil, none, io.Discard); err != nil || c.RedisURL != "" || c.RedisPrefix != "farebox:rl:" {
		t.Errorf("default: %q %q %v", c.RedisURL, c.RedisPrefix, err)
	}
	env := func(k string) string {
		return map[string]string{"FAREBOX_REDIS_URL": "redis://:s3cret@10.0.0.5:6379/2", "FAREBOX_REDIS_PREFIX": "tenant-a:"}[k]
	}
	if c, err := Load(nil, env, io.Discard); err != nil || c.RedisURL != "redis://:s3cret@10.0.0.5:6379/2" || c.RedisPrefix != "tenant-a:" {
		t.Errorf("from the environment: %q %q %v", c.RedisURL, c.RedisPrefix, err)
	}
	for _, u := range []string{"rediss://h:6380/0", "unix:///run/redis.sock"} {
		if _, err := Load([]string{"--redis-url", u}, none, io.Discard); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
	for _, bad := range []string{"http://:s3cret@h:6379", "127.0.0.1:6379", "redis://:s3cret@h:%zz", "رديس://س", "🚆"} {
		_, err := Load([]string{"--redis-url", bad}, none, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--redis-url") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
