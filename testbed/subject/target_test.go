package subject

import (
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/store"
	"github.com/herdbench/herdbench/triggers"
)

// A testbed on Memcached and MariaDB: the faults' roles are their
// proxies, and a restart may name only the parts it runs.
func TestTestbedOnMemcachedAndMariaDB(t *testing.T) {
	st := testbed.Status{API: []string{"http://127.0.0.1:1"}, Addrs: store.Addrs{Memcached: "127.0.0.1:2", MariaDB: "root@unix(/s)/herdbench"},
		Proxies: map[string]string{herd.Redis: "127.0.0.1:3", herd.Memcached: "127.0.0.1:4", herd.MariaDB: "127.0.0.1:5"}}
	tg := Describe(st).Target
	tg.Grants.Restarter = restarter{}
	if tg.Proxies[herd.Postgres] != herd.MariaDB || tg.Proxies[herd.Redis] != herd.Memcached || tg.RedisKey != "" {
		t.Errorf("proxies %v, redis key %q; want the database's role on mariadb, the cache's on memcached, no Redis items", tg.Proxies, tg.RedisKey)
	}
	c := tg.Caps()
	if want := []string{herd.API, herd.Redis, herd.MariaDB, herd.Memcached, "api-1"}; !slices.Equal(c.Parts, want) {
		t.Errorf("parts %v; want %v", c.Parts, want)
	}
	for part, ok := range map[string]bool{herd.MariaDB: true, herd.Memcached: true, herd.Postgres: false, "api-1": true, "api-2": false} {
		err := (&triggers.Restart{Part: triggers.Part(part)}).Requires(c)
		runs := "this one runs api, redis, mariadb, memcached)"
		if part == "api-2" {
			runs = "this one runs api-1)"
		}
		if ok != (err == nil) || (!ok && !strings.Contains(err.Error(), runs)) {
			t.Errorf("restart %s: %v; want refused only when the testbed does not run it, naming what it runs", part, err)
		}
	}
	if c := Describe(testbed.Status{API: st.API}).Caps(); !slices.Equal(c.Parts, []string{herd.API, herd.Redis, herd.Postgres, "api-1"}) {
		t.Errorf("a testbed on Redis and Postgres: parts %v", c.Parts)
	}
}

type restarter struct{ triggers.Restarter }
