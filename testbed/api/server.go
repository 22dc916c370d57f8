package api

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// Server is one API replica.
type Server struct {
	opts  replica.Options
	cache Cache         // the items, the claims: Redis or Memcached
	rdb   *redis.Client // pub/sub and the write queue's stream; nil under Memcached without a Redis
	db    DB            // the items, the likes: Postgres or MariaDB

	// loads running now, across resets: an experiment waits for zero before
	// its final snapshot so no load of one arm lands in the next
	inFlight atomic.Int64
	// item requests being served and the loads they left running in the
	// background: a load of one of them may still start while inFlight is 0
	busy atomic.Int64

	started time.Time // for ratelimit's ramp-up
	writer  *writer   // the writes' consumer or flusher, per write_strategy

	mu    sync.Mutex // guards the fields below
	seed  uint64
	cfg   replica.Config
	plan  *plan
	state map[string]any // each Stateful mitigation's, for cfg
	m     *metrics
	rng   *rand.Rand
}

// New validates opts and creates the replica's cache client and database
// pool. Connections are opened lazily, so New succeeds while a dependency
// is down.
func New(opts replica.Options) (*Server, error) {
	if opts.Mitigations == nil {
		opts.Mitigations = replica.DefaultConfig.Registry()
	}
	opts.Cache = cmp.Or(opts.Cache, replica.CacheRedis)
	opts.DB = cmp.Or(opts.DB, replica.DBPostgres)
	opts.Config = opts.Mitigations.Rebase(opts.Config)
	if err := opts.Config.Validate(); err != nil {
		return nil, fmt.Errorf("invalid config: %w", err)
	}
	if err := opts.CacheProblems(opts.Config).Err(); err != nil {
		return nil, fmt.Errorf("invalid config: %w", err)
	}
	if err := append(opts.DBProblems(), dsnProblems(opts)...).Err(); err != nil {
		return nil, fmt.Errorf("invalid options: %w", err)
	}
	if opts.DB == replica.DBMariaDB && opts.MySQLDSN == "" {
		return nil, fmt.Errorf("invalid options: mysql: empty, and db %s needs the app user's DSN", replica.DBMariaDB)
	}
	db, err := newDB(opts)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, db: db, seed: opts.Seed, cfg: opts.Config, plan: mustPlan(opts.Config)}
	s.cache, s.rdb = caches(opts)
	s.reset(nil)
	s.writer = &writer{s: s}
	s.writer.configure(opts.Config)
	return s, nil
}

// caches are the replica's cache and its Redis: the cache's own under
// Redis; under Memcached, one only when RedisAddr names it.
func caches(o replica.Options) (Cache, *redis.Client) {
	co := CacheOptions{Kind: o.Cache, Addr: o.RedisAddr, Pool: o.RedisPoolSize, Timeout: o.RedisTimeout}
	if o.Cache == replica.CacheMemcached {
		var rdb *redis.Client
		if o.RedisAddr != "" {
			rdb = newRedisClient(co)
		}
		co.Addr = o.MemcachedAddr
		return newMemcachedCache(co), rdb
	}
	rc := &redisCache{rdb: newRedisClient(co)}
	return rc, rc.rdb
}

// Close releases the replica's connections.
func (s *Server) Close() {
	s.writer.halt()
	s.db.Close()
	_ = s.cache.Close()
	if rc, ok := s.cache.(*redisCache); s.rdb != nil && (!ok || rc.rdb != s.rdb) {
		_ = s.rdb.Close()
	}
}

// reset starts in-process state afresh: counters, the mitigations' state
// and the random source, reseeded with seed when given, else the current
// seed.
func (s *Server) reset(seed *uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seed != nil {
		s.seed = *seed
	}
	s.m = newMetrics(s.opts.Mitigations, gauges{loads: &s.inFlight, busy: &s.busy, shedLimit: s.shedLimit, pool: s.db.Pool, db: s.opts.DB})
	s.state = s.states(s.cfg, s.plan, nil, s.m.count)
	s.rng = rand.New(rand.NewPCG(s.seed, 0x6865726462656e63)) // "herdbenc"
}

// shedLimit is the concurrency limit of shed or shed_priority now, 0
// when neither is on.
func (s *Server) shedLimit() float64 {
	for _, st := range s.view().state {
		if sh, ok := st.(*shedder); ok && sh != nil {
			return float64(sh.limit())
		}
	}
	return 0
}

// background runs f in its own goroutine, counted busy from now until it
// returns, so a drain does not end in the gap before f starts its load.
func (s *Server) background(f func()) {
	s.busy.Add(1)
	go func() {
		defer s.busy.Add(-1)
		f()
	}()
}

func (s *Server) view() view {
	s.mu.Lock()
	defer s.mu.Unlock()
	return view{cfg: s.cfg, plan: s.plan, m: s.m, state: s.state}
}

// random returns a uniform float in [0, 1) from the seeded source.
func (s *Server) random() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64()
}

// Handler routes the replica's endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", s.getItem)
	mux.HandleFunc("POST /items/{id}/likes", s.postLike)
	mux.HandleFunc("GET "+admin.PathConfig, s.getConfig)
	mux.HandleFunc("PUT "+admin.PathConfig, s.putConfig)
	mux.HandleFunc("POST "+admin.PathReset, s.postReset)
	mux.HandleFunc("POST "+admin.PathFill, s.postFill)
	mux.HandleFunc("GET "+admin.PathHealth, s.healthz)
	mux.HandleFunc("GET "+admin.PathMetrics, func(w http.ResponseWriter, r *http.Request) {
		reg := s.view().m.reg
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}).ServeHTTP(w, r)
	})
	return mux
}

func (s *Server) getItem(w http.ResponseWriter, r *http.Request) {
	s.busy.Add(1)
	defer s.busy.Add(-1)
	v := s.view()
	w.Header().Set("X-Replica", s.opts.Name)
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		v.m.requests.WithLabelValues(admin.OutcomeInvalid).Inc()
		RespondError(w, http.StatusBadRequest, fmt.Sprintf("item id %q: want a positive integer", r.PathValue("id")))
		return
	}
	if h := r.Header.Get(admin.StrategyHeader); h != "" {
		if v, err = v.withStrategy(h); err != nil {
			v.m.requests.WithLabelValues(admin.OutcomeInvalid).Inc()
			RespondError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	ctx, err := withDeadline(r.Context(), r.Header.Get(admin.DeadlineHeader), time.Now())
	if err != nil {
		v.m.requests.WithLabelValues(admin.OutcomeInvalid).Inc()
		RespondError(w, http.StatusBadRequest, err.Error())
		return
	}
	if d, ok := propagated(ctx); ok { // waits (a lock's, a lease's) end at it too
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	if r.Header.Get(admin.PriorityHeader) == admin.PriorityCritical {
		ctx = withCritical(ctx)
	}
	it, outcome, err := s.serve(ctx, v, id)
	switch {
	case errors.Is(err, ErrShed):
		outcome = admin.OutcomeShed
		RespondError(w, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, errExpired), errors.Is(err, errCanceled) && errors.Is(ctx.Err(), context.DeadlineExceeded):
		outcome = admin.OutcomeExpired
		RespondError(w, http.StatusGatewayTimeout, err.Error())
	case errors.Is(err, errCanceled):
		outcome = admin.OutcomeCanceled
		RespondError(w, http.StatusServiceUnavailable, "client went away")
	case errors.Is(err, errNotFound):
		outcome = admin.OutcomeNotFound
		RespondError(w, http.StatusNotFound, fmt.Sprintf("item %d not found", id))
	case err != nil:
		// 500, not 503: clients count 429 and 503 as shed load
		outcome = admin.OutcomeError
		RespondError(w, http.StatusInternalServerError, err.Error())
	default:
		w.Header().Set("X-Cache", outcome)
		RespondJSON(w, http.StatusOK, it)
	}
	v.m.requests.WithLabelValues(outcome).Inc()
}

func (s *Server) getConfig(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	RespondJSON(w, http.StatusOK, cfg)
}

// putConfig replaces the run-time configuration. Fields the body leaves out
// take the replica's start-up values, so the result never depends on earlier
// PUTs.
func (s *Server) putConfig(w http.ResponseWriter, r *http.Request) {
	cfg := s.opts.Config
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<16))
	if err == nil {
		err = cfg.DecodeStrict(body)
	}
	if err != nil {
		RespondError(w, http.StatusBadRequest, "invalid config: "+s.opts.Mitigations.DescribeError(err))
		return
	}
	if err := append(cfg.Problems(), s.opts.CacheProblems(cfg)...).Err(); err != nil {
		RespondError(w, http.StatusBadRequest, "invalid config: "+strings.ReplaceAll(err.Error(), "\n", "; "))
		return
	}
	p := mustPlan(cfg)
	s.mu.Lock()
	s.cfg, s.plan = cfg, p
	s.state = s.states(cfg, p, s.state, s.m.count)
	s.mu.Unlock()
	s.writer.configure(cfg)
	RespondJSON(w, http.StatusOK, cfg)
}

// postReset takes an optional body {"seed": N} that reseeds the replica, so
// an experiment on a testbed it did not start still replays from its seed.
func (s *Server) postReset(w http.ResponseWriter, r *http.Request) {
	seed, err := ReadReset(w, r)
	if err != nil {
		RespondError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.reset(seed)
	w.WriteHeader(http.StatusNoContent)
}

// ReadReset reads the optional body of POST /admin/reset, {"seed": N}: the
// seed, nil without one. The edge role's reset takes the same body.
func ReadReset(w http.ResponseWriter, r *http.Request) (*uint64, error) {
	var body admin.ResetRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil && !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid reset: " + replica.DefaultConfig.Registry().DescribeError(err) + ` (accepted: no body, or {"seed": N})`)
	}
	return body.Seed, nil
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	s.mu.Lock()
	h := admin.Health{Replica: s.opts.Name, Seed: s.seed, Redis: "ok", Postgres: "ok", DBTimeoutMS: s.opts.DBTimeout.Milliseconds(),
		DBPool: s.opts.DBPoolSize}
	s.mu.Unlock()
	code := http.StatusOK
	if s.opts.Cache == replica.CacheMemcached {
		h.Memcached, h.Redis = "ok", "unused"
		if err := s.cache.Ping(ctx); err != nil {
			h.Memcached, code = err.Error(), http.StatusServiceUnavailable
		}
	}
	if s.rdb != nil {
		h.Redis = "ok"
		if err := s.rdb.Ping(ctx).Err(); err != nil {
			h.Redis, code = err.Error(), http.StatusServiceUnavailable
		}
	}
	dbState := &h.Postgres
	if s.opts.DB == replica.DBMariaDB {
		h.Postgres, h.MariaDB, dbState = "unused", "ok", &h.MariaDB
	}
	if err := s.db.Ping(ctx); err != nil {
		*dbState, code = err.Error(), http.StatusServiceUnavailable
	}
	RespondJSON(w, code, h)
}

// Run serves one replica on addr until ctx is done, then shuts down
// gracefully.
func Run(ctx context.Context, addr string, opts replica.Options, log *slog.Logger) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	defer s.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	go s.listen(ctx)
	log.Info("replica serving", "replica", opts.Name, "addr", ln.Addr().String(), "seed", opts.Seed,
		"strategy", opts.Config.Strategy, "cache", opts.Cache, "redis", opts.RedisAddr, "memcached", opts.MemcachedAddr, "db", opts.DB)
	return Serve(ctx, ln, s.Handler())
}

// Serve serves h on ln until ctx ends, then shuts down, giving requests
// under way 5 s to finish. Every role of the testbed's binary (a replica,
// an edge) serves through it.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}
