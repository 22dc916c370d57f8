package subject

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/triggers"
)

// Kind is the testbed's kind of target (targets.Target.Kind).
const Kind = "testbed"

// Open opens the running testbed st as a target and as the experiment's
// subject, its parts restarting through restart (the provider's: the local
// supervisor's control API, or docker compose); nil when they cannot.
func Open(ctx context.Context, st testbed.Status, restart triggers.Restarter) (*Testbed, error) {
	if len(st.API) == 0 {
		return nil, errors.New("testbed status lists no API replica")
	}
	s := Describe(st)
	t := s.Target
	t.Restarter = restart
	ropt, err := redis.ParseURL(st.Redis)
	if err != nil {
		return nil, fmt.Errorf("redis url %q: %w", st.Redis, err)
	}
	ropt.DisableIdentity = true
	t.Redis = redis.NewClient(ropt)
	if err := s.openDB(ctx); err != nil {
		t.Close()
		return nil, err
	}
	if st.Memcached != "" { // the replicas' item cache; Redis beside it keeps the write queue
		if err := t.OpenMemcached(ctx, st.Memcached); err != nil {
			t.Close()
			return nil, err
		}
	}
	if st.Toxiproxy != "" {
		t.Toxiproxy = toxiclient.NewClient(st.Toxiproxy)
	}
	if err := t.Redis.Ping(ctx).Err(); err != nil {
		t.Close()
		return nil, fmt.Errorf("redis %s: %w", st.Redis, err)
	}
	s.setLikes()
	return s, nil
}

// openDB opens the testbed's database as its owner: Postgres, whose
// pg_stat_statements count the item queries, or MariaDB, whose digest
// table does.
func (s *Testbed) openDB(ctx context.Context) error {
	st, t := s.Status, s.Target
	if st.MariaDB != "" {
		cfg, err := mysql.ParseDSN(st.MariaDB)
		if err != nil {
			return fmt.Errorf("mariadb dsn: %w", err)
		}
		cfg.InterpolateParams = true // no server-side statements: MariaDB keeps no digest of them
		cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 5*time.Second, 5*time.Second
		cfg.ConnectionAttributes = "program_name:" + targets.ProgramName
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

// Describe describes the testbed st as a target and as the experiment's
// subject, without connecting to it: what a dry run shows, and what Open
// then connects.
func Describe(st testbed.Status) *Testbed {
	t := &targets.Target{Kind: Kind, Name: "testbed", Provider: st.Provider, Versions: st.Versions, Endpoints: st.API,
		Request: load.Request{Path: "/items/{key}"}, RedisKey: "item:{key}",
		Pattern: api.ItemKeyPattern, Channel: api.InvalidateChannel,
		Statements: observe.Statements{Text: api.ItemQuery, Fill: api.FillQuery}, Role: testbed.AppRole,
		Proxies: map[string]string{herd.Postgres: herd.Postgres, herd.Redis: herd.Redis},
		Hosts:   map[string]string{}, ResetProxies: true, SubjectOnly: true}
	s := &Testbed{Target: t, Status: st, Admin: admin.NewFleet(st.API)}
	t.Granted = triggers.Caps{Redis: true, RedisKeys: true, Pattern: true, Channel: true, Role: true, Pause: true, Writes: true, FlushDB: true, Parts: parts(st)}
	t.Observed = &targets.Observes{DB: true, Cache: true, API: true, Layers: len(st.Edge) > 0}
	for _, u := range st.API {
		t.AddHost(u, "testbed api")
	}
	if st.Memcached != "" { // triggers touch the items there, not in Redis
		t.RedisKey, t.Pattern, t.Channel = "", "", ""
		t.OwnedItems = "item:{key}"
		// the items in Memcached, the write queue in Redis: no pub/sub
		// (flush still empties the Redis kept for the write queue: FlushDB)
		t.Granted = triggers.Caps{Memcached: true, MemcachedKeys: true, FlushAll: true, FlushDB: true, Role: true, Writes: true, Parts: parts(st)}
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
		t.Endpoints, s.Edges = st.Edge, edge.NewFleet(st.Edge)
		for _, u := range st.Edge {
			t.AddHost(u, "testbed edge")
		}
	}
	return s
}

// setLikes gives the write herd the testbed's likes and feed, in MariaDB
// or Postgres, once they are open.
func (s *Testbed) setLikes() {
	switch t := s.Target; {
	case s.Status.MariaDB != "" && t.MySQL != nil:
		t.Likes = api.MariaDBLikes{DB: t.MySQL.DB}
	case t.DB != nil:
		t.Likes = api.PostgresLikes{Pool: t.DB}
	}
}

// parts are the parts of herd.Parts st runs: the replicas, Redis, its
// database (Postgres or MariaDB) and Memcached when it caches there.
func parts(st testbed.Status) []string {
	parts := []string{herd.API, herd.Redis, herd.Postgres}
	if st.MariaDB != "" {
		parts[2] = herd.MariaDB
	}
	if st.Memcached != "" {
		parts = append(parts, herd.Memcached)
	}
	for i := range st.API { // one replica by its name: api-1, api-2, ...
		parts = append(parts, fmt.Sprintf("%s-%d", herd.API, i+1))
	}
	return parts
}
