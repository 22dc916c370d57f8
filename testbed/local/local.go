package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
)

// Defaults of Config.
const (
	DefaultReplicas     = 3
	DefaultItems        = 10_000
	DefaultReadyTimeout = 30 * time.Second
	stopGrace           = 10 * time.Second
)

// Config says what to start. Zero values take the defaults above.
type Config struct {
	StateDir     string          // required: data, state file and logs
	Binary       string          // herdbench executable for the replicas; default: this process' executable
	Replicas     int             // API replicas
	Items        int             // rows seeded into the items table
	Replica      replica.Options // replica options; addresses, name and seed are set per replica
	Ports        Ports           // fixed ports; zero picks a free one
	ReadyTimeout time.Duration   // deadline for every part to answer
	Log          *slog.Logger    `json:"-"` // progress and unexpected exits; nil discards
	LogFile      string          // where Log writes, if a file: shown in the status
	// Observability also starts Prometheus and its Redis and Postgres
	// exporters (see observability.go); Status then names Prometheus.
	Observability bool
	// Tiers 2 also starts one edge replica per API replica in front of
	// them (edges.go), with Edge's timeout, retry policy, budget and seed.
	Tiers int
	Edge  edge.Options
}

// Ports fixes listening ports; a zero port is picked free.
type Ports struct {
	Redis, Postgres, Toxiproxy int   // Postgres: the database's, whichever store it is
	Memcached                  int   // the replicas' cache's, when it is not Redis
	API                        []int // one per replica, in order
	Edge                       []int // one per edge replica (Tiers 2), in order
	// with Observability: Prometheus, its exporters, and where it expects
	// the harness' live metrics
	Prometheus, RedisExporter, PostgresExporter, Harness int
}

// Testbed is a running local testbed, owned by the process that started it.
type Testbed struct {
	cfg    Config
	bins   binaries
	stores store.Set // its cache and database, and Redis
	lock   *os.File
	status testbed.Status

	mu       sync.Mutex
	procs    []*process // in start order
	proxy    *proxyServer
	stopping bool

	restartMu   sync.Mutex // one restart at a time
	life        context.Context
	endLife     context.CancelFunc // called by Stop
	control     *http.Server
	controlDone sync.WaitGroup
}

// ErrRunning is returned by Start when the state directory already has a
// running testbed.
var ErrRunning = errors.New("a testbed is already running")

// PartError says which part of the testbed failed and where its log is.
type PartError struct {
	Part string
	Log  string
	Err  error
}

func (e *PartError) Error() string {
	if e.Log == "" {
		return fmt.Sprintf("%s: %v", e.Part, e.Err)
	}
	return fmt.Sprintf("%s: %v (log: %s)", e.Part, e.Err, e.Log)
}

func (e *PartError) Unwrap() error { return e.Err }

func (c Config) withDefaults() (Config, error) {
	if c.StateDir == "" {
		return c, errors.New("state dir: empty")
	}
	abs, err := filepath.Abs(c.StateDir)
	if err != nil {
		return c, fmt.Errorf("state dir: %w", err)
	}
	c.StateDir = abs
	if c.Binary == "" {
		if c.Binary, err = os.Executable(); err != nil {
			return c, fmt.Errorf("find herdbench executable: %w", err)
		}
	}
	c.Replicas = cmp.Or(c.Replicas, DefaultReplicas)
	if c.Replicas < 1 || c.Replicas > 64 {
		return c, fmt.Errorf("replicas: %d out of range (accepted: 1 to 64)", c.Replicas)
	}
	c.Items = cmp.Or(c.Items, DefaultItems)
	if c.Items < 1 {
		return c, fmt.Errorf("items: %d out of range (accepted: 1 or more)", c.Items)
	}
	if len(c.Ports.API) > 0 && len(c.Ports.API) != c.Replicas {
		return c, fmt.Errorf("ports: %d API ports for %d replicas", len(c.Ports.API), c.Replicas)
	}
	if c.Replica == (replica.Options{}) {
		c.Replica = replica.DefaultOptions
	}
	if c.Replica.Cache == "" {
		c.Replica.Cache = store.Names(store.Cache)[0]
	}
	if _, err := store.Lookup(store.Cache, c.Replica.Cache); err != nil {
		return c, err
	}
	if err := append(c.Replica.Config.Problems(), c.Replica.CacheProblems(c.Replica.Config)...).Err(); err != nil {
		return c, fmt.Errorf("replica config: %w", err)
	}
	if _, err := store.Lookup(store.DB, c.Replica.DB); err != nil {
		return c, err
	}
	if err := c.storesProblem(); err != nil {
		return c, err
	}
	if err := c.edgeDefaults(); err != nil {
		return c, err
	}
	c.ReadyTimeout = cmp.Or(c.ReadyTimeout, DefaultReadyTimeout)
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Start brings up the stores (Redis, the replicas' cache when it is
// another, their database), toxiproxy and the replicas, and returns
// when every part answers. On failure it tears down whatever it started and
// the error names the part and its log. The caller owns the testbed and must
// call Stop.
func Start(ctx context.Context, cfg Config) (*Testbed, error) {
	for attempt := 1; ; attempt++ {
		tb, err := start(ctx, cfg)
		// A port picked free may be taken by another process before the
		// part listens on it (any process' outgoing connection takes an
		// ephemeral port): with ports of its own choosing, the testbed
		// starts again on new ones.
		if err == nil || attempt == portAttempts || !picksPorts(cfg.Ports) || !portTaken(err) || ctx.Err() != nil {
			return tb, err
		}
		if cfg.Log != nil {
			cfg.Log.Warn("a port picked for the testbed was taken before its part listened; starting again on new ports", "err", err)
		}
	}
}

func start(ctx context.Context, cfg Config) (_ *Testbed, err error) {
	tb, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			tb.Stop()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, tb.cfg.ReadyTimeout)
	defer cancel()
	start := time.Now()
	if err := tb.startParts(ctx); err != nil {
		return nil, err
	}
	if err := tb.writeState(true); err != nil {
		return nil, err
	}
	tb.cfg.Log.Info("testbed ready", "took", time.Since(start).Round(time.Millisecond), "state_dir", tb.cfg.StateDir)
	return tb, nil
}

// prepare finds the programs, makes and locks the state directory,
// cleans up after a supervisor that was killed, and returns the testbed
// that will run there, with nothing started yet.
func prepare(cfg Config) (*Testbed, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	stores := store.MustFor(cfg.Replica) // checked by withDefaults
	bins, err := findBinaries(stores)
	if cfg.Observability {
		var obsErr error
		bins.obs, obsErr = findObservability()
		err = errors.Join(err, obsErr)
	}
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(cfg.StateDir, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	if err := os.Chmod(cfg.StateDir, 0o755); err != nil { // postgres may run as another user
		return nil, fmt.Errorf("state dir: %w", err)
	}
	lock, err := lockStateDir(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	// A supervisor that was killed leaves its state file: clean up after it.
	if err := cleanup(cfg.StateDir); err != nil {
		unlockStateDir(lock)
		return nil, err
	}
	life, endLife := context.WithCancel(context.Background())
	tb := &Testbed{
		life:    life,
		endLife: endLife,
		cfg:     cfg,
		bins:    bins,
		stores:  stores,
		lock:    lock,
		status: testbed.Status{
			Provider: Name,
			StateDir: cfg.StateDir,
			Items:    cfg.Items,
			PIDs:     map[string]int{"supervisor": os.Getpid()},
			Versions: map[string]string{"toxiproxy": toxiproxyVersion()},
			Logs:     map[string]string{},
		},
	}
	if cfg.LogFile != "" {
		tb.status.Logs["supervisor"] = cfg.LogFile
	}
	return tb, nil
}

// startParts starts every part in order: the stores (Redis, which keeps
// the write queue's stream whatever the cache, the database, the cache
// when it is another), the proxies in front of them, the replicas, the
// control API and, when asked, the observability stack.
func (tb *Testbed) startParts(ctx context.Context) error {
	ports, err := tb.cfg.pickPorts()
	if err != nil {
		return err
	}
	upstreams := map[string]string{}
	if err := tb.startStores(ctx, ports, upstreams); err != nil {
		return err
	}
	tb.status.Proxies, err = tb.startProxy(ctx, ports.Toxiproxy, upstreams)
	if err != nil {
		return &PartError{Part: "toxiproxy", Err: err}
	}
	if err := tb.startReplicas(ctx, ports.API); err != nil {
		return err
	}
	if tb.cfg.Tiers == TwoTiers {
		if err := tb.startEdges(ctx, ports.Edge); err != nil {
			return err
		}
	}
	if err := tb.startControl(); err != nil {
		return err
	}
	if tb.cfg.Observability {
		return tb.startObservability(ctx, ports)
	}
	return nil
}

// Status describes the running testbed: a copy, which later restarts do
// not change.
func (tb *Testbed) Status() testbed.Status {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	st := tb.status
	st.API, st.Edge = slices.Clone(st.API), slices.Clone(st.Edge)
	st.PIDs, st.Versions, st.Logs, st.Proxies = maps.Clone(st.PIDs), maps.Clone(st.Versions), maps.Clone(st.Logs), maps.Clone(st.Proxies)
	return st
}

// Stop tears everything down in reverse order of start, removes the data and
// the state file, and releases the state directory. Logs stay until the next
// Start. Stop is safe to call more than once.
func (tb *Testbed) Stop() {
	tb.mu.Lock()
	if tb.stopping {
		tb.mu.Unlock()
		return
	}
	tb.stopping = true
	tb.mu.Unlock()
	tb.endLife()
	tb.stopControl()
	tb.restartMu.Lock() // a restart under way finishes first
	defer tb.restartMu.Unlock()
	tb.mu.Lock()
	procs := tb.procs
	tb.mu.Unlock()

	var replicas, deps []*process
	for _, p := range procs {
		if isStore(p.name) {
			deps = append(deps, p)
		} else {
			replicas = append(replicas, p)
		}
	}
	stopAll(replicas, stopGrace)
	if tb.proxy != nil {
		tb.proxy.stop()
	}
	stopAll(deps, stopGrace)
	removeData(tb.cfg.StateDir)
	unlockStateDir(tb.lock)
	tb.cfg.Log.Info("testbed stopped", "state_dir", tb.cfg.StateDir)
}

func stopAll(ps []*process, grace time.Duration) {
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(func() { p.stop(grace) })
	}
	wg.Wait()
}

// spawn starts a child, records it in the status and the state file, and
// logs it if it exits before Stop.
func (tb *Testbed) spawn(ctx context.Context, name string, stopSig syscall.Signal, cred *syscall.Credential, argv ...string) (*process, error) {
	logPath := filepath.Join(tb.logDir(), name+".log")
	if err := os.Truncate(logPath, 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	p, err := startProcess(name, tb.cfg.StateDir, logPath, stopSig, cred, argv...)
	if err != nil {
		return nil, err
	}
	tb.mu.Lock()
	tb.procs = append(tb.procs, p)
	tb.status.PIDs[name] = p.pid()
	tb.status.Logs[name] = logPath
	tb.mu.Unlock()
	if err := tb.writeState(false); err != nil {
		return nil, err
	}
	tb.watch(p)
	return p, nil
}

// watch logs p's exit unless herdbench stopped it.
func (tb *Testbed) watch(p *process) {
	go func() {
		<-p.done
		if !p.stopped.Load() {
			tb.cfg.Log.Error("process exited unexpectedly", "name", p.name, "pid", p.pid(), "err", p.err, "log", p.log)
		}
	}()
}

// stopPolling ends poll early with its error.
type stopPolling struct{ err error }

func (s *stopPolling) Error() string { return s.err.Error() }

// poll calls check until it succeeds, returns a *stopPolling, or ctx ends;
// then the last error is returned.
func poll(ctx context.Context, check func(context.Context) error) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		err := check(cctx)
		cancel()
		var stop *stopPolling
		switch {
		case err == nil:
			return nil
		case errors.As(err, &stop):
			return stop.err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w (last error: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// waitReady polls check until it succeeds, failing at once if p exits.
func (tb *Testbed) waitReady(ctx context.Context, p *process, check func(context.Context) error) error {
	return poll(ctx, func(ctx context.Context) error {
		if gone, err := p.exited(); gone {
			return &stopPolling{fmt.Errorf("%w: %s", err, tail(p.log, 3))}
		}
		return check(ctx)
	})
}

func (tb *Testbed) partError(part string, err error) error {
	return &PartError{Part: part, Log: tb.status.Logs[part], Err: err}
}

func (tb *Testbed) logDir() string { return filepath.Join(tb.cfg.StateDir, "logs") }

// mkdirEmpty makes dir anew, removing what a previous run left there.
func mkdirEmpty(dir string, perm os.FileMode) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Mkdir(dir, perm)
}
