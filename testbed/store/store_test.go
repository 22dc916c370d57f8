package store

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/replica"
)

// Every store has one name, which is at once its --cache or --db value
// and its part; each role's default comes first.
func TestKindsAreTheCachesDatabasesAndParts(t *testing.T) {
	seen := map[string]bool{}
	var a Addrs
	fields := map[*string]string{}
	for _, k := range Kinds() {
		if seen[k.Name()] {
			t.Errorf("store %q registered twice", k.Name())
		}
		seen[k.Name()] = true
		if !slices.Contains(herd.Parts, k.Name()) {
			t.Errorf("store %q is not a part (herd.Parts %v)", k.Name(), herd.Parts)
		}
		if other, ok := fields[k.Addr(&a)]; ok {
			t.Errorf("stores %s and %s share their field of Addrs", other, k.Name())
		}
		fields[k.Addr(&a)] = k.Name()
		if c := k.Compose(); (c.Profile == "") != IsDefault(k) || c.Port == 0 {
			t.Errorf("%s: compose %+v; want a port, and a profile unless it is its role's default", k.Name(), c)
		}
	}
	if got := Names(Cache); !slices.Equal(got, replica.Caches) {
		t.Errorf("Names(Cache) = %v; want replica.Caches %v", got, replica.Caches)
	}
	if got := Names(DB); !slices.Equal(got, replica.DBs) {
		t.Errorf("Names(DB) = %v; want replica.DBs %v", got, replica.DBs)
	}
}

func TestSetsOfOptionsAndStatus(t *testing.T) {
	names := func(ks []Store) string {
		var out []string
		for _, k := range ks {
			out = append(out, k.Name())
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		o             replica.Options
		a             Addrs
		running, repl string
	}{
		{replica.Options{}, Addrs{Redis: "r", Postgres: "p"}, "redis,postgres", ""},
		{replica.Options{Cache: replica.CacheMemcached}, Addrs{Redis: "r", Memcached: "m", Postgres: "p"}, "redis,postgres,memcached", ""},
		{replica.Options{DB: replica.DBMariaDB}, Addrs{Redis: "r", MariaDB: "m"}, "redis,mariadb", "postgres"},
		{replica.Options{Cache: replica.CacheMemcached, DB: replica.DBMariaDB}, Addrs{Memcached: "m", MariaDB: "d"}, "redis,mariadb,memcached", "postgres"},
	} {
		set, err := For(c.o)
		if err != nil || names(set.Running()) != c.running || names(set.Replaced()) != c.repl {
			t.Errorf("For(%s, %s) = %s replacing %s, %v; want %s replacing %s", c.o.Cache, c.o.DB, names(set.Running()), names(set.Replaced()), err, c.running, c.repl)
		}
		if got := In(c.a); got != set {
			t.Errorf("In(%+v) = %s; want %s", c.a, names(got.Running()), c.running)
		}
	}
	if _, err := For(replica.Options{DB: "oracle"}); err == nil || err.Error() != `db: "oracle" (accepted: postgres, mariadb)` {
		t.Errorf("For(db oracle) = %v; want it refused, naming the accepted databases", err)
	}
}

func TestMissingBinariesNameTheirPackages(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // nothing on PATH
	saved := pgSearchGlobs
	pgSearchGlobs = []string{t.TempDir() + "/*/bin"} // nowhere else either
	t.Cleanup(func() { pgSearchGlobs = saved })

	_, rerr := Redis{}.Find()
	_, perr := Postgres{}.Find()
	err := errors.Join(rerr, perr)
	var missing *MissingBinaryError
	if !errors.As(err, &missing) {
		t.Fatalf("Find() without binaries = %v; want a MissingBinaryError", err)
	}
	for _, want := range []string{
		"redis-server not found", "apt-get install redis-server", "brew install redis`",
		"postgres and initdb not found", "apt-get install postgresql", "brew install postgresql@15",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Find() = %q; want it to say %q", err, want)
		}
	}
}

// The stores import nothing of the engine that tests of the engine's own
// packages reach back through: load's tests start the local testbed
// (localtest), which imports this package, so targets (which imports
// load) would make an import cycle. The subject copies a store's
// Description and Handles into its targets.Target instead.
func TestStoresImportNeitherTargetsNorLoad(t *testing.T) {
	const mod = "github.com/herdbench/herdbench/"
	out, err := exec.Command("go", "list", "-deps", mod+"testbed/store").Output()
	if err != nil {
		t.Fatalf("go list -deps testbed/store: %v", err)
	}
	for _, pkg := range []string{"targets", "load", "experiment", "testbed"} {
		if slices.Contains(strings.Fields(string(out)), mod+pkg) {
			t.Errorf("testbed/store depends on %s%s; want neither targets nor load nor what imports them", mod, pkg)
		}
	}
}
