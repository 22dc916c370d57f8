package targets

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/storetest"
	"github.com/herdbench/herdbench/triggers"
)

const storesYAML = `name: shop
endpoints: ["http://127.0.0.1:8080"]
allow: [db.internal]
request: {path: "/items/{key}"}
keys: {range: {from: 1, to: 1000}, hot: 20}
mysql:
  dsn: ${SHOP_MYSQL_DSN}
  user: shop
  statements: "FROM .items."
memcached:
  address: 127.0.0.1:11211
  key: "item:{key}"
toxiproxy:
  url: http://127.0.0.1:8474
  proxies: {mysql: shop-db, memcached: shop-cache}
`

// A MySQL and Memcached target: its hosts, what triggers may do on it,
// the proxies by the dependency a trigger names.
func TestParseMySQLMemcached(t *testing.T) {
	f, err := ParseFile([]byte(storesYAML), "shop.yaml", env(map[string]string{"SHOP_MYSQL_DSN": "hb:pw@tcp(db.internal:3306)/shop"}))
	if err != nil {
		t.Fatalf("ParseFile = %v; want nil", err)
	}
	tg := FromFile(f)
	if h := tg.Hosts["db.internal"]; h != "mysql.dsn" || tg.Hosts["127.0.0.1"] == "" {
		t.Errorf("Hosts = %v; want db.internal from mysql.dsn, and loopback", tg.Hosts)
	}
	if err := tg.CheckHosts(nil); err != nil {
		t.Errorf("CheckHosts = %v; want nil, db.internal is allowed", err)
	}
	c := tg.Caps()
	if !c.Memcached || !c.MemcachedKeys || c.FlushAll || !c.MySQLUser || c.Redis || c.Role {
		t.Errorf("Caps = %+v; want a Memcached with its key, no flush_all, a MySQL user", c)
	}
	if tg.Proxies["postgres"] != "shop-db" || tg.Proxies["redis"] != "shop-cache" {
		t.Errorf("Proxies = %v; want mysql as the database (postgres), memcached as the cache (redis)", tg.Proxies)
	}
	if o := tg.Observes(); !o.DB || !o.Cache {
		t.Errorf("Observes = %+v; want the database and the cache", o)
	}
	for _, s := range []struct {
		trig triggers.Trigger
		want string // "" when supported
	}{
		{&triggers.Expire{}, ""},
		{&triggers.TTL{}, ""},
		{&triggers.Conndrop{}, ""},
		{&triggers.Flush{}, "shop.yaml:10: memcached.allow_flush_all: true to empty the target's Memcached"},
	} {
		err := triggers.Supported(s.trig, c)
		if (err == nil) != (s.want == "") || (err != nil && !strings.Contains(err.Error(), s.want)) {
			t.Errorf("Supported(%s) = %v; want %q", s.trig.Name(), err, s.want)
		}
	}
}

// Every bad value of the two sections is named at its line, with what is
// accepted; a literal password never passes.
func TestMySQLMemcachedProblems(t *testing.T) {
	bad := `endpoints: ["http://127.0.0.1:1"]
request: {path: "/items/{key}"}
keys: {list: [a]}
redis: {address: "127.0.0.1:6379"}
postgres: {dsn: "${PG}", role: app, statements: x}
mysql:
  dsn: "hb:hunter2@tcp(127.0.0.1:3306)/shop"
  digests: [abc]
  statements: "(("
memcached: {address: nohost, key: "item key {key}"}
toxiproxy: {url: "http://127.0.0.1:8474", proxies: {mysql: a, postgres: b}}
`
	_, err := ParseFile([]byte(bad), "bad.yaml", env(map[string]string{"PG": "postgres://app@127.0.0.1/db"}))
	for _, want := range []string{
		"bad.yaml:6: mysql: beside postgres (accepted: one database per target",
		"bad.yaml:7: mysql.dsn: holds a password (accepted: ${VAR}",
		"bad.yaml:6: mysql.user: empty (accepted: the service's user",
		`bad.yaml:8: mysql.digests[0]: "abc" is not a digest (accepted: 32 hex digits`,
		"bad.yaml:9: mysql.statements: error parsing regexp",
		"bad.yaml:10: memcached: beside redis (accepted: one cache per target",
		`bad.yaml:10: memcached.address: "nohost" is not host:port`,
		`memcached.key: "item key {key}" has a space or a control character`,
		"a second proxy for the database (accepted: one of mysql, postgres)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFile lacks %q:\n%v", want, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), "hunter2") {
		t.Error("the problems show the password")
	}
	for _, dsn := range []string{"${DSN}", "hb:${PW}@tcp(127.0.0.1:3306)/", "hb@tcp(127.0.0.1:3306)/"} {
		if mysqlLiteralPassword(dsn) {
			t.Errorf("mysqlLiteralPassword(%q) = true; want false", dsn)
		}
	}
}

// shopTarget is a target file on a real MariaDB and Memcached, the
// observer's DSN from the environment.
func shopTarget(t *testing.T, m *storetest.MariaDB, mc string, extra string) (*Target, error) {
	t.Helper()
	y := `endpoints: ["http://127.0.0.1:1"]
request: {path: "/items/{key}"}
keys: {list: ["1", "2"]}
mysql: {dsn: "${HB_MYSQL}", user: shop, statements: "items"}
memcached: {address: "` + mc + `", key: "item:{key}"}
` + extra
	f, err := ParseFile([]byte(y), "shop.yaml", env(map[string]string{"HB_MYSQL": m.DSN("hb", "hb-pw", "")}))
	if err != nil {
		t.Fatal(err)
	}
	tg := FromFile(f)
	t.Cleanup(tg.Close)
	return tg, tg.Connect(context.Background())
}

// Connect opens MySQL read-only, and refuses a server whose
// performance_schema is off or a user that cannot read it, naming the
// field, the reason and what to do.
func TestConnectMySQL(t *testing.T) {
	m := storetest.StartMariaDB(t)
	mc := storetest.Memcached(t)
	m.Exec(t, "CREATE DATABASE shop", "CREATE TABLE shop.items (id INT PRIMARY KEY)")
	m.CreateUser(t, "hb", "hb-pw", append(storetest.ObserverGrants, "ALL ON shop.*")...)
	tg, err := shopTarget(t, m, mc, "")
	if err != nil {
		t.Fatalf("Connect = %v", err)
	}
	_, err = tg.MySQL.DB.Exec("INSERT INTO shop.items VALUES (1)")
	if err == nil || !strings.Contains(err.Error(), "READ ONLY") {
		t.Errorf("an insert through herdbench's session = %v; want refused: the session is read-only", err)
	}

	m.Exec(t, "UPDATE performance_schema.setup_consumers SET ENABLED = 'NO' WHERE NAME = 'statements_digest'")
	_, err = shopTarget(t, m, mc, "")
	var fe *herd.FieldError
	if !errors.As(err, &fe) || fe.Field != "mysql" || fe.Line != 4 || !strings.Contains(err.Error(), "consumers statements_digest are off") ||
		!strings.Contains(err.Error(), "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES'") {
		t.Errorf("Connect with the digest consumer off = %v; want mysql at line 4, the reason and the fix", err)
	}
	m.Exec(t, "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = 'statements_digest'")

	m.CreateUser(t, "nobody", "nobody-pw")
	y := `endpoints: ["http://127.0.0.1:1"]
request: {path: "/items/{key}"}
keys: {list: ["1"]}
mysql: {dsn: "${HB_MYSQL}", user: shop, statements: "items"}
`
	f, err := ParseFile([]byte(y), "shop.yaml", env(map[string]string{"HB_MYSQL": m.DSN("nobody", "nobody-pw", "")}))
	if err != nil {
		t.Fatal(err)
	}
	weak := FromFile(f)
	err = weak.Connect(context.Background())
	if !errors.As(err, &fe) || fe.Field != "mysql.dsn" || !strings.Contains(err.Error(), "GRANT") && !strings.Contains(err.Error(), "PROCESS ON *.*") {
		t.Errorf("Connect as a user without grants = %v; want mysql.dsn, naming the grants it needs", err)
	}
	if err != nil && strings.Contains(err.Error(), "nobody-pw") {
		t.Error("the error shows the password")
	}
}

// performance_schema off is refused at Connect, naming the field, the
// reason and what to do.
func TestConnectMySQLWithoutPerformanceSchema(t *testing.T) {
	m := storetest.StartMariaDBWith(t, "--performance-schema=OFF")
	mc := storetest.Memcached(t)
	m.CreateUser(t, "hb", "hb-pw", storetest.ObserverGrants...)
	_, err := shopTarget(t, m, mc, "")
	var fe *herd.FieldError
	if !errors.As(err, &fe) || fe.Field != "mysql" || fe.File != "shop.yaml" || fe.Line != 4 ||
		!strings.Contains(err.Error(), "performance_schema is OFF") || !strings.Contains(err.Error(), "performance_schema=ON") {
		t.Errorf("Connect = %v; want shop.yaml:4: mysql: performance_schema is OFF, and how to turn it on", err)
	}
}
