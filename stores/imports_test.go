package stores_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Each store's driver is imported by its store package alone (and by the
// testbed's API server, the service under test, which keeps its own data
// access): no other package's non-test files import one, and a store
// package imports no other store's.
func TestOnlyItsStoreImportsADriver(t *testing.T) {
	const mod = "github.com/herdbench/herdbench/"
	drivers := map[string]string{ // a driver's import path -> the one store package that imports it
		"github.com/redis/go-redis/v9":            "stores/redis",
		"github.com/jackc/pgx/v5":                 "stores/postgres",
		"github.com/go-sql-driver/mysql":          "stores/mysql",
		"github.com/bradfitz/gomemcache/memcache": "stores/memcached",
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list %s...: %v", mod, err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], mod)
		for _, imp := range fields[1:] {
			for driver, store := range drivers {
				if (imp == driver || strings.HasPrefix(imp, driver+"/")) && pkg != store && pkg != "testbed/api" {
					t.Errorf("%s imports %s (accepted: only %s imports it; use its API)", pkg, imp, store)
				}
			}
		}
	}
}
