package reporters

import (
	"testing"

	"github.com/herdbench/herdbench/experiment"
)

// The testbed line names the stores a run had, and no empty PostgreSQL.
func TestStoresNameTheTestbedsStores(t *testing.T) {
	for _, c := range []struct {
		env  experiment.Environment
		want string
	}{
		{experiment.Environment{Redis: "7.0.15", Postgres: "15.18"}, "Redis 7.0.15, PostgreSQL 15.18"},
		{experiment.Environment{Redis: "7.0.15", Memcached: "1.6.18", MariaDB: "10.11.19"},
			"Memcached 1.6.18 (Redis 7.0.15 for the write queue), MariaDB 10.11.19"},
		{experiment.Environment{Redis: "7.0.15", MariaDB: "10.11.19"}, "Redis 7.0.15, MariaDB 10.11.19"},
	} {
		if got := stores(c.env); got != c.want {
			t.Errorf("stores(%+v) = %q; want %q", c.env, got, c.want)
		}
	}
}
