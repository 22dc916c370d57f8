package mysql_test

import (
	"context"
	"database/sql"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/herdbench/herdbench/stores/mysql"
	"github.com/herdbench/herdbench/testbed/storetest"
	"github.com/herdbench/herdbench/triggers"
)

// conndrop KILLs the service user's connections, and never herdbench's
// own: its session, and a connection of the same user marked with
// herdbench's program_name.
func TestConndropKillsTheMySQLUsersConnections(t *testing.T) {
	m := storetest.StartMariaDB(t)
	m.Exec(t, "CREATE DATABASE shop")
	m.CreateUser(t, "shop", "shop-pw", "ALL ON shop.*")
	m.CreateUser(t, "hb", "hb-pw", storetest.ObserverGrants...)
	ctx := context.Background()
	open := func(user, pw string, ours bool) *sql.DB {
		cfg, err := gomysql.ParseDSN(m.DSN(user, pw, ""))
		if err != nil {
			t.Fatal(err)
		}
		if ours {
			cfg.ConnectionAttributes = "program_name:herdbench"
		}
		conn, err := gomysql.NewConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(conn)
		t.Cleanup(func() { db.Close() })
		return db
	}
	service, ourShop, hb := open("shop", "shop-pw", false), open("shop", "shop-pw", true), open("hb", "hb-pw", true)
	var conns []*sql.Conn
	for _, db := range []*sql.DB{service, service, service, ourShop} {
		c, err := db.Conn(ctx)
		if err == nil {
			err = c.PingContext(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	env := triggers.Env{Conns: &mysql.Conns{DB: hb, User: "shop", Spare: "herdbench"}}
	if err := triggers.Supported(&triggers.Conndrop{}, triggers.Caps{MySQLUser: true}); err != nil {
		t.Fatal(err)
	}
	fired, err := (&triggers.Conndrop{}).Fire(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	d := fired.Detail.(*triggers.ConndropDetail)
	if d.User != "shop" || d.ConnectionsReset == nil || *d.ConnectionsReset != 3 {
		t.Errorf("detail = %+v; want the 3 connections of the service reset", d)
	}
	for i, c := range conns {
		err := c.PingContext(ctx)
		if alive := err == nil; alive != (i == 3) {
			t.Errorf("connection %d alive %v (%v); want only herdbench's own (3) alive", i, alive, err)
		}
	}
}
