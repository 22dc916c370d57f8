package compose

import (
	"context"
	"database/sql"
	"maps"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/api"
)

// MariaDBProfile is the compose profile of the mariadb service, the
// replicas' database with Config.DB mariadb.
const MariaDBProfile = api.DBMariaDB

// MariaDBProxy is the toxiproxy proxy in front of MariaDB, inside the
// compose network (testbed/compose/toxiproxy.json): the replicas' address
// of it, named "mariadb" in the status' proxies as the local provider
// names its own.
const MariaDBProxy = "toxiproxy:3306"

// DBEnv is the environment the compose file reads the replicas' database
// from: HERDBENCH_DB (testbed serve's --db), and HERDBENCH_DB_FLAG and
// HERDBENCH_DB_DSN, the database's flag and its DSN, so that a replica on
// MariaDB gets --mysql and no --postgres. None for Postgres, the compose
// file's default.
func DBEnv(db string) []string {
	if db != api.DBMariaDB {
		return nil
	}
	return []string{"HERDBENCH_DB=" + api.DBMariaDB, "HERDBENCH_DB_FLAG=--mysql",
		"HERDBENCH_DB_DSN=" + testbed.MariaDBDSN(testbed.AppRole, "tcp", MariaDBProxy)}
}

// mariadbStatus fills s with the mariadb service in place of Postgres, as
// the local provider describes a MariaDB testbed: root's DSN on the
// published port (the harness reads performance_schema there, directly),
// its proxy as the database's, and its version. The postgres service still
// runs (the replicas and toxiproxy wait for it), unused: s names it
// nowhere, so no figure, fault or restart reaches it by the database's
// role. addr is the published host:port of a service's port.
func mariadbStatus(ctx context.Context, s *testbed.Status, addr func(service string, port int) string) {
	s.MariaDB = testbed.MariaDBDSN("root", "tcp", addr(herd.MariaDB, 3306))
	s.Postgres = ""
	delete(s.Versions, herd.Postgres)
	s.Proxies = maps.Clone(s.Proxies)
	delete(s.Proxies, herd.Postgres)
	s.Proxies[herd.MariaDB] = MariaDBProxy
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	db, err := sql.Open("mysql", s.MariaDB)
	if err != nil {
		return
	}
	defer db.Close()
	var v string
	if db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v) == nil {
		s.Versions[herd.MariaDB] = v
	}
}
