package targets

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/bradfitz/gomemcache/memcache"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/triggers"
)

// Testbed opens a target on a running testbed, whose parts restart
// through restart (the provider's: the local supervisor's control API, or
// docker compose); nil when they cannot.
func Testbed(ctx context.Context, st testbed.Status, restart triggers.Restarter) (*Target, error) {
	if len(st.API) == 0 {
		return nil, errors.New("testbed status lists no API replica")
	}
	t := FromTestbed(st)
	t.Restarter = restart
	ropt, err := redis.ParseURL(st.Redis)
	if err != nil {
		return nil, fmt.Errorf("redis url %q: %w", st.Redis, err)
	}
	ropt.DisableIdentity = true
	t.Redis = redis.NewClient(ropt)
	if err := t.openTestbedDB(ctx); err != nil {
		t.Close()
		return nil, err
	}
	if st.Memcached != "" { // the replicas' item cache; Redis beside it keeps the write queue
		t.Memcached, t.mc = &observe.Memcached{Address: st.Memcached}, memcache.New(st.Memcached)
		t.mc.Timeout = 5 * time.Second
		if _, err := t.Memcached.Stats(ctx); err != nil {
			t.Close()
			return nil, fmt.Errorf("memcached %s: %w", st.Memcached, err)
		}
	}
	if st.Toxiproxy != "" {
		t.Toxiproxy = toxiclient.NewClient(st.Toxiproxy)
	}
	if err := t.Redis.Ping(ctx).Err(); err != nil {
		t.Close()
		return nil, fmt.Errorf("redis %s: %w", st.Redis, err)
	}
	return t, nil
}

// openTestbedDB opens the testbed's database as its owner: Postgres,
// whose pg_stat_statements count the item queries, or MariaDB, whose
// digest table does.
func (t *Target) openTestbedDB(ctx context.Context) error {
	st := t.Status
	if st.MariaDB != "" {
		cfg, err := mysql.ParseDSN(st.MariaDB)
		if err != nil {
			return fmt.Errorf("mariadb dsn: %w", err)
		}
		cfg.InterpolateParams = true // no server-side statements: MariaDB keeps no digest of them
		cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 5*time.Second, 5*time.Second
		cfg.ConnectionAttributes = "program_name:" + ProgramName
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			return fmt.Errorf("mariadb dsn: %w", err)
		}
		db := sql.OpenDB(conn)
		db.SetMaxOpenConns(4)
		t.MySQL = &observe.MySQL{DB: db, User: testbed.AppRole, Pattern: api.ItemDigestMariaDB}
		if err := db.PingContext(ctx); err != nil {
			return fmt.Errorf("mariadb %s: %w", st.MariaDB, err)
		}
		return nil
	}
	pcfg, err := pgxpool.ParseConfig(st.Postgres)
	if err != nil {
		return fmt.Errorf("postgres dsn: %w", err)
	}
	pcfg.MaxConns = 4
	if t.DB, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := t.DB.Ping(ctx); err != nil {
		return fmt.Errorf("postgres %s: %w", st.Postgres, err)
	}
	return nil
}

// FromTestbed describes a testbed as a target, without connecting to it.
func FromTestbed(st testbed.Status) *Target {
	t := &Target{Kind: KindTestbed, Name: "testbed", Status: st, Endpoints: st.API,
		Request: load.Request{Path: "/items/{key}"}, RedisKey: "item:{key}",
		Pattern: api.ItemKeyPattern, Channel: api.InvalidateChannel,
		Statements: observe.Statements{Text: api.ItemQuery, Fill: api.FillQuery}, Role: testbed.AppRole,
		Proxies: map[string]string{herd.Postgres: herd.Postgres, herd.Redis: herd.Redis},
		Hosts:   map[string]string{}, Owned: true, Admin: api.NewFleet(st.API)}
	for _, u := range st.API {
		t.Hosts[hostOf(u)] = "testbed api"
	}
	if st.Memcached != "" { // triggers touch the items there, not in Redis
		t.RedisKey, t.Pattern, t.Channel = "", "", ""
		// and the cache a fault breaks is the items', as in a target file
		// (Redis, kept for the write queue, is out of the faults' reach)
		if _, ok := st.Proxies[herd.Memcached]; ok {
			t.Proxies[herd.Redis] = herd.Memcached
		}
	}
	if st.MariaDB != "" { // the database a fault breaks is MariaDB, by its role
		t.Statements, t.Role = observe.Statements{}, ""
		delete(t.Proxies, herd.Postgres)
		if _, ok := st.Proxies[herd.MariaDB]; ok {
			t.Proxies[herd.Postgres] = herd.MariaDB
		}
	}
	if len(st.Edge) > 0 { // two tiers: the clients attack the edges, which call the replicas
		t.Endpoints, t.Edges = st.Edge, edge.NewFleet(st.Edge)
		for _, u := range st.Edge {
			t.Hosts[hostOf(u)] = "testbed edge"
		}
	}
	return t
}

// LikesTable is the testbed's likes and feed, which a write herd reads
// and sets: in MariaDB or Postgres; nil on a target that is not the
// testbed, or before it is open.
func (t *Target) LikesTable() api.LikesTable {
	switch {
	case t.Kind != KindTestbed:
		return nil
	case t.Status.MariaDB != "" && t.MySQL != nil:
		return api.MariaDBLikes{DB: t.MySQL.DB}
	case t.DB != nil:
		return api.PostgresLikes{Pool: t.DB}
	}
	return nil
}

// testbedParts are the parts of herd.Parts st runs: the replicas, Redis,
// its database (Postgres or MariaDB) and Memcached when it caches there.
func testbedParts(st testbed.Status) []string {
	parts := []string{herd.API, herd.Redis, herd.Postgres}
	if st.MariaDB != "" {
		parts[2] = herd.MariaDB
	}
	if st.Memcached != "" {
		parts = append(parts, herd.Memcached)
	}
	return parts
}
