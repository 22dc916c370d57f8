package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/testbed/storetest"
)

// examples/mysql-memcached-service.yaml describes a service on Memcached
// and MySQL far away: a dry run says what it would touch of each, with
// nothing sent; flush on it is refused, naming allow_flush_all at its line.
func TestMySQLMemcachedExample(t *testing.T) {
	const file = "../../examples/mysql-memcached-service.yaml"
	env := append(clitest.Environ(nil), "SHOP_TOKEN=t0k", "SHOP_MYSQL_DSN=herdbench:pw-9f2@tcp(db.shop.internal:3306)/")
	code, stdout, stderr := herdbenchEnv(t, env, "stampede", "--target", file, "--dry-run",
		"--arms", "none,lease", "--rate", "200", "--state-dir", t.TempDir())
	if code != exitOK {
		t.Fatalf("dry run of %s = exit %d\n%s%s", file, code, stdout, stderr)
	}
	for _, want := range []string{"load      100 req/s to http://shop-1.internal:8080",
		"delete 50 Memcached items (the hot keys): item:1, item:2",
		"db.shop.internal (mysql.dsn)", "cache.shop.internal (memcached.address)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout+stderr, "t0k") || strings.Contains(stdout+stderr, "pw-9f2") {
		t.Error("the dry run shows a secret")
	}
	code, stdout, _ = herdbenchEnv(t, env, "stampede", "--target", file, "--dry-run", "--trigger", "conndrop", "--rate", "200", "--state-dir", t.TempDir())
	if want := "KILL every connection of MySQL user shop, but herdbench's own"; code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("dry run of conndrop = exit %d; want it to say %q:\n%s", code, want, stdout)
	}
	code, _, stderr = herdbenchEnv(t, env, "stampede", "--target", file, "--dry-run", "--trigger", "flush", "--rate", "200", "--state-dir", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "mysql-memcached-service.yaml:42: memcached.allow_flush_all: true to empty the target's Memcached") {
		t.Errorf("flush on the example = exit %d, %s; want exit 2 naming memcached.allow_flush_all at its line", code, stderr)
	}
}

// A MySQL target whose server runs without performance_schema is refused
// when herdbench first connects, before any load: exit 2, naming the
// section at its line, why, and what to do.
func TestMySQLTargetWithoutPerformanceSchema(t *testing.T) {
	m := storetest.StartMariaDBWith(t, "--performance-schema=OFF")
	m.CreateUser(t, "hb", "hb-pw", storetest.ObserverGrants...)
	path := filepath.Join(t.TempDir(), "shop.yaml")
	y := `endpoints: ["http://127.0.0.1:1"]
request: {path: "/items/{key}"}
keys: {list: ["1"]}
mysql: {dsn: "${HB_MYSQL}", user: shop, statements: items}
`
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(clitest.Environ(nil), "HB_MYSQL="+m.DSN("hb", "hb-pw", ""))
	code, _, stderr := herdbenchEnv(t, env, "stampede", "--target", path, "--yes", "--rate", "10", "--trigger", "conndrop", "--state-dir", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "shop.yaml:4: mysql: performance_schema is OFF on the server") ||
		!strings.Contains(stderr, "performance_schema=ON") || strings.Contains(stderr, "hb-pw") {
		t.Errorf("stampede on it = exit %d, %s; want exit 2 naming mysql at line 4 and how to turn performance_schema on, without the password", code, stderr)
	}
}
