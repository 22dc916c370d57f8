package triggers

import (
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
)

func TestMatchPattern(t *testing.T) {
	for _, tt := range []struct {
		pattern, key string
		want         bool
	}{
		{"item:*", "item:42", true},
		{"item:*", "stale:item:42", false},
		{"item:1*", "item:12", true},
		{"item:1*", "item:21", false},
		{"item:?", "item:7", true},
		{"item:?", "item:77", false},
		{"item:[12]", "item:2", true},
		{"item:[^12]", "item:2", false},
		{"item:[a-c]", "item:b", true},
		{`item:\*`, "item:*", true},
		{`item:\*`, "item:x", false},
		{"a.b", "axb", false}, // dots are literal
		{"item:[0-9]*", "item:42", true},
		{"item:[^0-9]*", "item:42", false},
		{"", "item:1", false},
	} {
		if got := MatchPattern(tt.pattern, tt.key); got != tt.want {
			t.Errorf("MatchPattern(%q, %q) = %v; want %v", tt.pattern, tt.key, got, tt.want)
		}
	}
}

// Each trigger says what it needs of a target that cannot give it.
func TestSupported(t *testing.T) {
	bare := Caps{Endpoints: true}
	withRedis := Caps{Endpoints: true, Redis: true, RedisKeys: true, Pattern: true}
	withRole := Caps{Endpoints: true, Role: true}
	for _, tt := range []struct {
		trig    Trigger
		caps    Caps
		wantErr string // "" supported
	}{
		{&Burst{}, bare, ""},
		{&Expire{}, bare, "trigger expire needs a Redis (redis.address"},
		{&Expire{}, Caps{Redis: true}, "redis.key and redis.pattern"},
		{&Expire{}, withRedis, ""},
		{&TTL{}, withRedis, ""},
		{&Flush{}, bare, "trigger flush needs a Redis"},
		{&Flush{}, Caps{Redis: true}, "redis.pattern in the target file"},
		{&Flush{}, withRedis, ""},
		{&Conndrop{}, bare, "trigger conndrop needs toxiproxy in front of the service's dependencies"},
		{&Conndrop{}, withRole, ""},
		{&Outage{Dependency: "postgres", For: herd.Duration(time.Second)}, withRole, "toxiproxy.proxies.postgres"},
		{&Outage{Dependency: "redis", For: herd.Duration(time.Second)}, withRedis, "redis.allow_pause: true"},
		{&Outage{Dependency: "redis", For: herd.Duration(time.Second)}, Caps{Redis: true, Pause: true}, ""},
		{&SlowDB{}, withRedis, "toxiproxy in front of postgres"},
		{&SlowDB{}, Caps{Proxies: []string{"postgres"}}, ""},
		{&Restart{Part: "api"}, withRedis, "processes herdbench can restart"},
		{&Notify{}, Caps{Redis: true, At: func(f string) string { return "t.yaml: " + f }}, "redis.invalidate_channel in the target file"},
		{&Notify{}, withRedis, "a channel they listen on for invalidations"}, // no file: the testbed's
	} {
		err := Supported(tt.trig, tt.caps)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Supported(%s, %+v) = %v; want nil", tt.trig.Name(), tt.caps, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("Supported(%s, %+v) = %v; want an error with %q", tt.trig.Name(), tt.caps, err, tt.wantErr)
		}
	}
}
