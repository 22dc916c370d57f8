package observe

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// DefaultInterval is the sampling resolution.
const DefaultInterval = 100 * time.Millisecond

// Sample is one reading of cumulative counters.
type Sample struct {
	At time.Time
	// The database: Postgres (Source.DB) or MySQL/MariaDB (Source.MySQL)
	Calls          int64 // pg_stat_statements calls of Source.Statements by Source.Role; MySQL: COUNT_STAR of the selected digests
	FillCalls      int64 // ... of Statements.Fill: a cache fill's own statement (Postgres)
	Connections    int64 // pg_stat_activity backends of Source.Role; MySQL: performance_schema.users CURRENT_CONNECTIONS of the user
	NewConnections int64 // ... whose backend_start is at or after Source.Since (Postgres)
	// ConnectionsOpened counts the connections the user ever opened
	// (MySQL: performance_schema.users TOTAL_CONNECTIONS); its growth from
	// T is the new connections; 0 on Postgres, which has NewConnections
	ConnectionsOpened int64
	LockWaits         int64 // ... waiting on a lock now (wait_event_type Lock; MySQL: a row lock, INNODB_TRX LOCK WAIT, or a metadata lock)
	LocksWaiting      int64 // pg_locks not granted now, any role; MySQL: every user's waits
	// Active are the role's statements running now (pg_stat_activity
	// state active, which needs pg_read_all_stats to see another role's;
	// MySQL: the user's PROCESSLIST entries executing a query)
	Active int64
	// The cache: Redis INFO keyspace_hits, keyspace_misses, expired_keys,
	// total_connections_received, connected_clients, evicted_keys; or
	// Memcached stats get_hits, get_misses, total_connections,
	// curr_connections, evictions (it counts no expirations)
	Hits, Misses, Expired, ConnectionsReceived, Clients, Evictions int64
	// CacheOps are the commands the cache served, herdbench's own reads
	// of it left out (Redis: INFO commandstats' calls but for info,
	// ping, hello, client, select, auth and xinfo; Memcached: cmd_get,
	// cmd_set, cmd_touch and the deletes, increments, decrements and
	// compare-and-sets it counted), a counter a drain waits on to stop
	CacheOps int64
	// QueueDepth is Source.Queue's entries not yet acknowledged by its
	// group: never delivered (XINFO GROUPS lag) plus delivered and pending
	QueueDepth int64

	// Which server instances the counters came from: a counter that went
	// down was reset only if its server restarted in between.
	DBStart       time.Time // pg_postmaster_start_time(); MySQL: UNIX_TIMESTAMP() - Uptime
	CacheInstance string    // Redis INFO server run_id; Memcached: its pid and start
	// The servers' own counters of a call chain (Source.Servers); nil when
	// not read, or when a server did not answer
	Servers *Servers
	// LB is the load balancer's counters (Source.HAProxy); nil when not
	// read, or when its stats page did not answer
	LB *LBStats
}

// DigestSlack is how many of n statements a digest's COUNT_STAR (or rows
// of SUM_ROWS_AFFECTED) may miss when connections end statements of one
// digest at once: performance_schema aggregates a statement into its
// digest's row, shared by every connection, with plain increments, not
// atomic ones, so two ending together on two cores can lose one (seen:
// 1 in 94 item loads, 2 in 77 in a herd's burst, 1 and 2 in 824 write
// statements, on a 2-core machine; pg_stat_statements locks its entry and
// loses none). Two, and one more every 200: a count on MariaDB or MySQL is
// a lower bound within that (docs/testbed.md, "A few statements short,
// sometimes").
func DigestSlack(n int64) int64 { return 2 + n/200 }

// Servers are the cumulative counters of a call chain's layers, each
// summed over its replicas: what reached the edges and what they sent on,
// what reached the API replicas and what they sent to the database (a
// testbed's, one tier or two); and the subject's own counters the
// timeline reads by the names its kind declared (the testbed's replicas'
// loads, failed loads, new connections and given-up waits).
type Servers struct {
	Edge, EdgeAttempts, API, DBAttempts int64
	Counts                              map[string]int64
	// Replicas are the requests each API replica answered, by its name
	// (api-1, ...): one replica's herd, such as a restarted one's. A
	// replica that did not answer (restarting) is left out, and the
	// reading is Partial: its sums above are not set
	Replicas map[string]int64
	Partial  bool
}

// CacheRestarted reports whether the cache (Redis, Memcached) restarted
// between two samples.
func CacheRestarted(prev, cur Sample) bool { return prev.CacheInstance != cur.CacheInstance }

// DBRestarted reports whether the database (Postgres, MySQL) restarted
// between two samples.
func DBRestarted(prev, cur Sample) bool { return !prev.DBStart.Equal(cur.DBStart) }

// Source says where and what to read: a database (Postgres or MySQL) and
// a cache (Redis or Memcached). Either may be absent (a target that
// declares none): its fields stay nil, or hold a nil handle, which reads
// nothing, and the results say they were not observed.
type Source struct {
	DB         DB         // a role that can read pg_stat_statements (stores/postgres); nil: not observed
	MySQL      DB         // or a MySQL or MariaDB (stores/mysql); nil: not observed
	Redis      Streams    // stores/redis; nil: not observed
	Memcached  Cache      // or a Memcached (stores/memcached), then the cache; a Redis beside it is read for Queue only; nil: not observed
	Statements Statements // which statements' calls count as DB queries
	Role       string     // the app's role: its statements and connections
	Since      time.Time  // new connections count from here (T)
	// Servers reads a call chain's counters (a two-tier testbed); nil:
	// not read. A failed read leaves the sample's Servers nil, and the
	// rest of the sample stands.
	Servers func(context.Context) (Servers, error)
	// Queue is a Redis stream and its consumer group whose depth is read
	// (the testbed's write queue); zero: not read
	Queue Queue
	// HAProxy is the load balancer in front of the service; nil: not
	// read. A failed read leaves the sample's LB nil, and the rest of the
	// sample stands.
	HAProxy *HAProxy
	// Seen is shown every sample a Sampler takes, from its goroutine (a
	// live observer's feed: it must be quick); nil: none. Read alone
	// never calls it.
	Seen func(Sample)
}

// DB is a database a sample reads: ReadDB sets the sample's database
// figures (Calls to Active, DBStart) of the statements and the role src
// selects. A nil handle reads nothing.
type DB interface {
	ReadDB(ctx context.Context, src Source, smp *Sample) error
}

// Cache is a cache a sample reads: ReadCache sets the sample's cache
// figures (Hits to Evictions, CacheInstance). A nil handle reads nothing.
type Cache interface {
	ReadCache(ctx context.Context, smp *Sample) error
}

// Streams is a cache that also holds streams (Redis): Depth is a queue's
// depth, none when its stream or group is not there yet.
type Streams interface {
	Cache
	Depth(ctx context.Context, q Queue) (int64, error)
}

// Queue is a Redis stream read by a consumer group.
type Queue struct{ Stream, Group string }

// Statements selects pg_stat_statements rows: by exact text, by queryid,
// or by a Postgres regular expression on the text. A row any of them
// selects counts.
type Statements struct {
	Text     string
	QueryIDs []int64
	Pattern  string
	// Fill is the text of the statement a cache fill runs in bulk (the
	// testbed's), counted apart in Sample.FillCalls; "" when there is none
	Fill string
}

// Read takes one sample.
func (s Source) Read(ctx context.Context) (smp Sample, err error) {
	if s.Servers != nil { // before At: the stores' reading stays at At
		if sv, err := s.Servers(ctx); err == nil {
			smp.Servers = &sv
		}
	}
	smp.At = time.Now()
	if s.HAProxy != nil { // beside the stores, bounded: a slow load balancer delays no sample, nor T
		lb := make(chan *LBStats, 1)
		go func() {
			rctx, cancel := context.WithTimeout(ctx, LBReadLimit)
			defer cancel()
			st, _ := s.HAProxy.Read(rctx)
			lb <- st
		}()
		defer func() { smp.LB = <-lb }()
	}
	for _, db := range []DB{s.DB, s.MySQL} {
		if db == nil {
			continue
		}
		if err := db.ReadDB(ctx, s, &smp); err != nil {
			return smp, err
		}
	}
	if s.Memcached != nil {
		if err := s.Memcached.ReadCache(ctx, &smp); err != nil {
			return smp, err
		}
	}
	if s.Redis == nil {
		return smp, nil
	}
	if smp.CacheInstance == "" { // a Memcached read is the cache: a Redis beside it holds only the queue
		if err := s.Redis.ReadCache(ctx, &smp); err != nil {
			return smp, err
		}
	}
	if s.Queue.Stream != "" {
		smp.QueueDepth, err = s.Redis.Depth(ctx, s.Queue)
	}
	return smp, err
}

// Sampler reads a Source every interval until stopped.
type Sampler struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	samples []Sample
	missed  int   // reads that failed, such as while Postgres restarts
	err     error // the first of them
}

// Start samples src at once and then every interval.
func Start(ctx context.Context, src Source, interval time.Duration) *Sampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &Sampler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			smp, err := src.Read(ctx)
			s.mu.Lock()
			switch {
			case err == nil:
				s.samples = append(s.samples, smp)
			case ctx.Err() == nil:
				s.missed++
				if s.err == nil {
					s.err = err
				}
			}
			s.mu.Unlock()
			if err == nil && src.Seen != nil {
				src.Seen(smp)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Latest returns the most recent sample, if any.
func (s *Sampler) Latest() (Sample, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 {
		return Sample{}, false
	}
	return s.samples[len(s.samples)-1], true
}

// Samples is a copy of the samples taken so far, in time order.
func (s *Sampler) Samples() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.samples)
}

// Stop ends sampling and returns the samples in time order and how many
// reads failed. A failed read leaves a gap (a dependency may be down on
// purpose); only a sampler that never read anything returns an error.
func (s *Sampler) Stop() (samples []Sample, missed int, err error) {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 && s.err != nil {
		return nil, s.missed, fmt.Errorf("no sample taken: %w", s.err)
	}
	return s.samples, s.missed, nil
}
