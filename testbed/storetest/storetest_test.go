package storetest

import (
	"database/sql"
	"testing"

	"github.com/bradfitz/gomemcache/memcache"
)

// Memcached answers a set and a get.
func TestMemcached(t *testing.T) {
	mc := memcache.New(Memcached(t))
	if err := mc.Set(&memcache.Item{Key: "k", Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	it, err := mc.Get("k")
	if err != nil || string(it.Value) != "v" {
		t.Fatalf("get k = %v, %v; want v", it, err)
	}
}

// MariaDB runs with performance_schema on, and a user created with a
// password reaches it over TCP while a wrong password is refused: the
// grant tables are in force.
func TestMariaDB(t *testing.T) {
	m := StartMariaDB(t)
	var on int
	if err := m.Root().QueryRow("SELECT @@performance_schema").Scan(&on); err != nil || on != 1 {
		t.Fatalf("@@performance_schema = %d, %v; want 1", on, err)
	}
	m.Exec(t, "CREATE DATABASE shop")
	m.CreateUser(t, "shop", "s3cret", "ALL ON shop.*")
	db, err := sql.Open("mysql", m.DSN("shop", "s3cret", "shop"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(); err != nil {
		t.Fatalf("shop over TCP: %v", err)
	}
	bad, _ := sql.Open("mysql", m.DSN("shop", "wrong", "shop"))
	defer bad.Close()
	if err := bad.Ping(); err == nil {
		t.Fatal("a wrong password was let in: the grant tables are not in force")
	}
}
