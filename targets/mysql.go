package targets

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"regexp"
	"strings"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/stores/mysql"
)

// MySQLSpec is the target's MySQL or MariaDB, for observing the statements
// that count as DB queries (by digest, from performance_schema) and the
// service user's connections. herdbench's session is read-only; it only
// KILLs the connections of User (conndrop), never its own.
type MySQLSpec struct {
	DSN        string   `yaml:"dsn"`        // ${VAR}: user:password@tcp(host:port)/db, credentials from the environment
	User       string   `yaml:"user"`       // the service's user: its connections count, and conndrop may KILL them
	Digests    []string `yaml:"digests"`    // performance_schema DIGEST values that count
	Statements string   `yaml:"statements"` // or a regular expression (REGEXP) on DIGEST_TEXT
}

// digestRe is a statement digest: MariaDB's MD5 (32 hex digits) or MySQL
// 8's SHA-256 (64).
var digestRe = regexp.MustCompile(`^([0-9a-fA-F]{32}|[0-9a-fA-F]{64})$`)

func (c *checker) mysql() {
	m := c.f.MySQL
	if m == nil {
		return
	}
	if c.f.Postgres != nil {
		c.bad("mysql", "beside postgres (accepted: one database per target, postgres or mysql: db.* would mix them)")
	}
	m.DSN = c.dsn(dsnForm{field: "mysql.dsn", literal: mysqlLiteralPassword, example: "${SHOP_MYSQL_DSN}",
		parse:     func(s string) error { _, err := mysql.ParseDSN(s); return err },
		form:      "the Go MySQL driver's DSN, user:password@tcp(host:port)/db",
		pwExample: ", such as ${SHOP_MYSQL_DSN} or herdbench:${HB_MYSQL_PASSWORD}@tcp(db:3306)/"}, m.DSN)
	if m.User == "" {
		c.bad("mysql.user", "empty (accepted: the service's user, whose connections count and whose connections conndrop may KILL)")
	}
	if len(m.Digests) == 0 && m.Statements == "" {
		c.bad("mysql", "no statements to count (accepted: digests, from performance_schema.events_statements_summary_by_digest, or statements: a regular expression on its DIGEST_TEXT)")
	}
	for i, d := range m.Digests {
		if !digestRe.MatchString(d) {
			c.bad(fmt.Sprintf("mysql.digests[%d]", i), "%q is not a digest (accepted: 32 hex digits, MariaDB's, or 64, MySQL 8's, as DIGEST in the digest table)", d)
		}
	}
	if m.Statements != "" {
		if _, err := regexp.Compile(m.Statements); err != nil {
			c.bad("mysql.statements", "%v (accepted: a regular expression)", err)
		}
	}
}

// mysqlLiteralPassword says whether a DSN as written carries a password
// of its own rather than from the environment: the whole DSN a ${VAR}, or
// its password one.
func mysqlLiteralPassword(dsn string) bool {
	if dsn == "" || onlyEnvRef(dsn) {
		return false
	}
	pw := ""
	if cfg, err := mysql.ParseDSN(dsn); err == nil {
		pw = cfg.Passwd
	} else if creds, _, found := strings.Cut(dsn, "@"); found {
		_, pw, _ = strings.Cut(creds, ":")
	}
	return pw != "" && !onlyEnvRef(pw)
}

// mysqlHosts is the host a DSN reaches; a Unix socket is this machine. A
// DSN that does not parse names a host that is never allowed.
func mysqlHosts(dsn string) []string {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return []string{"(mysql.dsn does not parse)"}
	}
	if cfg.Net == "unix" {
		return []string{"localhost"}
	}
	h, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return []string{cfg.Addr}
	}
	return []string{h}
}

// ProgramName is the program_name connection attribute of herdbench's
// own MySQL connections: conndrop spares them.
const ProgramName = "herdbench"

// connectMySQL opens the target's MySQL read-only and checks that it
// observes: performance_schema on, its digest consumer enabled, and the
// DSN's user able to read what a sample reads.
func (t *Target) connectMySQL(ctx context.Context) error {
	m := t.file.MySQL
	bad := func(field, format string, args ...any) error {
		return &herd.FieldError{File: t.file.doc.Name, Line: t.file.doc.Line(field), Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	cfg, err := mysql.ParseDSN(m.DSN)
	if err != nil {
		return bad("mysql.dsn", "does not parse (accepted: the Go MySQL driver's DSN, user:password@tcp(host:port)/db)")
	}
	db, err := mysql.Open(cfg, ProgramName, true, 2)
	if err != nil {
		return bad("mysql.dsn", "%v", err)
	}
	db.SetMaxIdleConns(2)
	if err := t.checkMySQL(ctx, db, bad); err != nil {
		db.Close()
		return err
	}
	t.MySQL = &mysql.DB{DB: db, User: m.User, Digests: m.Digests, Pattern: m.Statements}
	return nil
}

// checkMySQL checks db observes, naming the field, the reason and what to
// do when it does not.
func (t *Target) checkMySQL(ctx context.Context, db *sql.DB, bad func(field, format string, args ...any) error) error {
	var on int
	if err := db.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&on); err != nil {
		return bad("mysql.dsn", "%s", redactDSN(err))
	}
	if on != 1 {
		return bad("mysql", "performance_schema is OFF on the server, and herdbench counts DB queries from performance_schema.events_statements_summary_by_digest (accepted: a server started with performance_schema=ON: set it under [mysqld] in its configuration and restart it; it cannot be turned on while it runs)")
	}
	var off []string
	rows, err := db.QueryContext(ctx, `SELECT NAME FROM performance_schema.setup_consumers
		WHERE NAME IN ('global_instrumentation', 'thread_instrumentation', 'statements_digest') AND ENABLED <> 'YES'`)
	if err == nil {
		for rows.Next() {
			var n string
			if err = rows.Scan(&n); err != nil {
				break
			}
			off = append(off, n)
		}
		rows.Close()
	}
	if err == nil && len(off) > 0 {
		return bad("mysql", "performance_schema does not count statement digests: the consumers %s are off (accepted: as an administrator, UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN ('%s'); herdbench's session is read-only)",
			strings.Join(off, ", "), strings.Join(off, "', '"))
	}
	if err == nil {
		_, err = observe.Source{MySQL: &mysql.DB{DB: db, User: t.file.MySQL.User}}.Read(ctx)
	}
	if err != nil {
		return bad("mysql.dsn", "its user cannot read what herdbench samples: %s (accepted: a user with SELECT ON performance_schema.* and PROCESS ON *.*, and CONNECTION ADMIN for conndrop)", redactDSN(err))
	}
	return nil
}

// mysqlConns is the target's MySQL as conndrop touches it: the service
// user's connections to KILL; nil when the target declares none. Before
// Connect it has no DB: enough for a dry run's plan, which contacts
// nothing.
func (t *Target) mysqlConns() *mysql.Conns {
	switch {
	case t.MySQL != nil:
		return &mysql.Conns{DB: t.MySQL.DB, User: t.MySQL.User, Spare: ProgramName}
	case t.file != nil && t.file.MySQL != nil:
		return &mysql.Conns{User: t.file.MySQL.User, Spare: ProgramName}
	}
	return nil
}
