package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Config is a DSN as the Go MySQL driver reads it.
type Config = mysql.Config

// ParseDSN reads dsn as the Go MySQL driver does.
func ParseDSN(dsn string) (*Config, error) { return mysql.ParseDSN(dsn) }

// DSN is the Go MySQL driver's DSN of user with password on database db,
// over net ("tcp" or "unix") at addr.
func DSN(user, password, net, addr, db string) string {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = user, password, net, addr, db
	return c.FormatDSN()
}

// Open opens herdbench's own connections on cfg, at most conns of them:
// its statements sent as text (no server-side statements: MariaDB keeps
// no digest of them), 5 s timeouts, program as their program_name
// connection attribute (conndrop spares them), and read-only sessions
// when readOnly (herdbench reads the statistics tables, and KILL is not a
// write). Nothing is contacted yet.
func Open(cfg *Config, program string, readOnly bool, conns int) (*sql.DB, error) {
	cfg.InterpolateParams = true
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 5*time.Second, 5*time.Second
	cfg.ConnectionAttributes = "program_name:" + program
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	if readOnly {
		conn = readOnlyConnector{conn}
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(conns)
	return db, nil
}

// readOnlyConnector opens connections whose session is read-only.
type readOnlyConnector struct{ driver.Connector }

func (r readOnlyConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := r.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := c.(driver.ExecerContext)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("the MySQL driver cannot set the session read-only")
	}
	if _, err := ex.ExecContext(ctx, "SET SESSION TRANSACTION READ ONLY", nil); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Version asks the server at dsn its version.
func Version(ctx context.Context, dsn string) (string, error) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v string
	err = db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v)
	return v, err
}
