package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/api"
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
	StateDir     string        // required: data, state file and logs
	Binary       string        // herdbench executable for the replicas; default: this process' executable
	Replicas     int           // API replicas
	Items        int           // rows seeded into the items table
	Replica      api.Options   // replica options; addresses, name and seed are set per replica
	Ports        Ports         // fixed ports; zero picks a free one
	ReadyTimeout time.Duration // deadline for every part to answer
	Log          *slog.Logger  // progress and unexpected exits; nil discards
	LogFile      string        // where Log writes, if a file: shown in the status
	// Observability also starts Prometheus and its Redis and Postgres
	// exporters (see observability.go); Status then names Prometheus.
	Observability bool
}

// Ports fixes listening ports; a zero port is picked free.
type Ports struct {
	Redis, Postgres, Toxiproxy int
	API                        []int // one per replica, in order
	// with Observability: Prometheus, its exporters, and where it expects
	// the harness' live metrics
	Prometheus, RedisExporter, PostgresExporter, Harness int
}

// Testbed is a running local testbed, owned by the process that started it.
type Testbed struct {
	cfg    Config
	bins   binaries
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
	if c.Replicas == 0 {
		c.Replicas = DefaultReplicas
	}
	if c.Replicas < 1 || c.Replicas > 64 {
		return c, fmt.Errorf("replicas: %d out of range (accepted: 1 to 64)", c.Replicas)
	}
	if c.Items == 0 {
		c.Items = DefaultItems
	}
	if c.Items < 1 {
		return c, fmt.Errorf("items: %d out of range (accepted: 1 or more)", c.Items)
	}
	if len(c.Ports.API) > 0 && len(c.Ports.API) != c.Replicas {
		return c, fmt.Errorf("ports: %d API ports for %d replicas", len(c.Ports.API), c.Replicas)
	}
	if c.Replica == (api.Options{}) {
		c.Replica = api.DefaultOptions
	}
	if err := c.Replica.Config.Validate(); err != nil {
		return c, fmt.Errorf("replica config: %w", err)
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = DefaultReadyTimeout
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Start brings up Redis, Postgres, toxiproxy and the replicas, and returns
// when every part answers. On failure it tears down whatever it started and
// the error names the part and its log. The caller owns the testbed and must
// call Stop.
func Start(ctx context.Context, cfg Config) (_ *Testbed, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	bins, err := findBinaries()
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
		lock:    lock,
		status: testbed.Status{
			Provider: "local",
			StateDir: cfg.StateDir,
			PIDs:     map[string]int{"supervisor": os.Getpid()},
			Versions: map[string]string{"toxiproxy": toxiproxyVersion()},
			Logs:     map[string]string{},
		},
	}
	if cfg.LogFile != "" {
		tb.status.Logs["supervisor"] = cfg.LogFile
	}
	defer func() {
		if err != nil {
			tb.Stop()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, cfg.ReadyTimeout)
	defer cancel()

	ports, err := cfg.pickPorts()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if tb.status.Versions["redis"], err = tb.startRedis(ctx, ports.Redis); err != nil {
		return nil, tb.partError("redis", err)
	}
	if tb.status.Versions["postgres"], err = tb.startPostgres(ctx, ports.Postgres); err != nil {
		return nil, tb.partError("postgres", err)
	}
	tb.status.Proxies, err = tb.startProxy(ctx, ports.Toxiproxy, map[string]string{
		"redis":    "127.0.0.1:" + strconv.Itoa(ports.Redis),
		"postgres": "127.0.0.1:" + strconv.Itoa(ports.Postgres),
	})
	if err != nil {
		return nil, &PartError{Part: "toxiproxy", Err: err}
	}
	if err := tb.startReplicas(ctx, ports.API); err != nil {
		return nil, err
	}
	if err := tb.startControl(); err != nil {
		return nil, err
	}
	if cfg.Observability {
		if err := tb.startObservability(ctx, ports); err != nil {
			return nil, err
		}
	}
	if err := tb.writeState(true); err != nil {
		return nil, err
	}
	cfg.Log.Info("testbed ready", "took", time.Since(start).Round(time.Millisecond), "state_dir", cfg.StateDir)
	return tb, nil
}

// Status describes the running testbed: a copy, which later restarts do
// not change.
func (tb *Testbed) Status() testbed.Status {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	st := tb.status
	st.API = slices.Clone(st.API)
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
		if p.name == "redis" || p.name == "postgres" {
			deps = append(deps, p)
		} else {
			replicas = append(replicas, p)
		}
	}
	stopAll(replicas)
	if tb.proxy != nil {
		tb.proxy.stop()
	}
	stopAll(deps)
	removeData(tb.cfg.StateDir)
	unlockStateDir(tb.lock)
	tb.cfg.Log.Info("testbed stopped", "state_dir", tb.cfg.StateDir)
}

func stopAll(ps []*process) {
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(func() { p.stop(stopGrace) })
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

// startReplicas starts the replicas as `testbed serve` processes reaching
// Redis and Postgres through the proxies, and waits for each /healthz.
func (tb *Testbed) startReplicas(ctx context.Context, ports []int) error {
	type started struct {
		p   *process
		url string
	}
	var all []started
	var specs []api.Options
	for i, port := range ports {
		name := "api-" + strconv.Itoa(i+1)
		opts := tb.cfg.Replica
		opts.Name = name
		opts.Seed = tb.cfg.Replica.Seed + uint64(i)
		opts.RedisAddr = tb.status.Proxies["redis"]
		opts.PostgresDSN = postgresDSN(testbed.AppRole, tb.status.Proxies["postgres"])
		addr := "127.0.0.1:" + strconv.Itoa(port)
		specs = append(specs, opts)
		p, err := tb.spawn(ctx, name, syscall.SIGTERM, nil, append([]string{tb.cfg.Binary}, ServeArgs(addr, opts)...)...)
		if err != nil {
			return &PartError{Part: name, Err: err}
		}
		all = append(all, started{p, "http://" + addr})
	}
	for i, s := range all {
		s.p.ready = healthy(s.url)
		s.p.replica = &replicaSpec{url: s.url, addr: strings.TrimPrefix(s.url, "http://"), opts: specs[i]}
		err := tb.waitReady(ctx, s.p, s.p.ready)
		if err != nil {
			return &PartError{Part: s.p.name, Log: s.p.log, Err: err}
		}
		tb.status.API = append(tb.status.API, s.url)
	}
	return nil
}

// healthy checks a replica's /healthz.
func healthy(url string) func(context.Context) error {
	client := &http.Client{Timeout: time.Second}
	return func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/healthz", nil)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/healthz: %s", resp.Status)
		}
		return nil
	}
}

// ServeArgs are the arguments of `herdbench testbed serve` that run one
// replica with opts on addr.
func ServeArgs(addr string, o api.Options) []string {
	c := o.Config
	return []string{"testbed", "serve",
		"--listen", addr,
		"--name", o.Name,
		"--redis", o.RedisAddr,
		"--postgres", o.PostgresDSN,
		"--seed", strconv.FormatUint(o.Seed, 10),
		"--db-pool", strconv.Itoa(int(o.DBPoolSize)),
		"--redis-pool", strconv.Itoa(o.RedisPoolSize),
		"--db-timeout", o.DBTimeout.String(),
		"--redis-timeout", o.RedisTimeout.String(),
		"--strategy", c.Strategy,
		"--ttl", c.TTL.String(),
		"--stale-ttl", c.StaleTTL.String(),
		"--ttl-jitter", strconv.FormatFloat(c.TTLJitter, 'g', -1, 64),
		"--xfetch-beta", strconv.FormatFloat(c.XFetchBeta, 'g', -1, 64),
		"--lock-ttl", c.LockTTL.String(),
		"--lock-wait", c.LockWait.String(),
		"--lock-poll", c.LockPoll.String(),
		"--query-cost", c.QueryCost.String(),
		"--early-probability", strconv.FormatFloat(c.EarlyProbability, 'g', -1, 64),
		"--lease-interval", c.LeaseInterval.String(),
		"--lease-wait", c.LeaseWait.String(),
		"--local-ttl", c.LocalTTL.String(),
		"--local-jitter", strconv.FormatFloat(c.LocalJitter, 'g', -1, 64),
		"--rate-limit", strconv.FormatFloat(c.RateLimit, 'g', -1, 64),
		"--rate-burst", strconv.Itoa(c.RateBurst),
		"--ramp-up", c.RampUp.String(),
		"--breaker-failures", strconv.FormatUint(uint64(c.BreakerFailures), 10),
		"--breaker-open", c.BreakerOpen.String(),
		"--shed-min-limit", strconv.Itoa(c.ShedMinLimit),
		"--shed-max-limit", strconv.Itoa(c.ShedMaxLimit),
		"--shed-initial-limit", strconv.Itoa(c.ShedInitialLimit),
		"--shed-wait", c.ShedWait.String(),
	}
}

func (tb *Testbed) partError(part string, err error) error {
	return &PartError{Part: part, Log: tb.status.Logs[part], Err: err}
}

func (tb *Testbed) logDir() string { return filepath.Join(tb.cfg.StateDir, "logs") }

// pickPorts fills unset ports with free ones. The probe listeners stay open
// until every port is picked, so no port is handed out twice.
func (c Config) pickPorts() (Ports, error) {
	p := c.Ports
	p.API = append([]int(nil), c.Ports.API...)
	if len(p.API) == 0 {
		p.API = make([]int, c.Replicas)
	}
	all := append([]*int{&p.Redis, &p.Postgres, &p.Toxiproxy}, ptrs(p.API)...)
	if c.Observability {
		all = append(all, &p.Prometheus, &p.RedisExporter, &p.PostgresExporter, &p.Harness)
	}
	for _, port := range all {
		if *port != 0 {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return p, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		*port = l.Addr().(*net.TCPAddr).Port
	}
	return p, nil
}

func ptrs(s []int) []*int {
	out := make([]*int, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

// mkdirEmpty makes dir anew, removing what a previous run left there.
func mkdirEmpty(dir string, perm os.FileMode) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Mkdir(dir, perm)
}
