// Package compose runs the testbed with docker compose, the provider for
// machines with Docker: the services of the repository's docker-compose.yml
// (API replicas built from its Dockerfile, Redis, Postgres, toxiproxy; with
// a store's profile (testbed/store: its Compose) that store as the
// replicas' cache or database, and with the observability profile
// Prometheus, Grafana and the exporters).
// It drives the `docker compose` CLI (or the standalone `docker-compose`),
// waits until every service is healthy, and describes the result with the
// same testbed.Status as the local provider, Provider "docker".
//
// A state file in the state directory records the project, so Status,
// Restart and Down work from another process. Restart is what the local
// supervisor's control API does, through `docker compose restart`.
//
// Guarantees: Up returns only when every service reports healthy, or runs
// `docker compose down` and names the service that failed and how to read
// its logs; nothing is left running after Down.
package compose

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/scrape"
)

// Defaults of Config.
const (
	DefaultFile    = "docker-compose.yml"
	DefaultProject = "herdbench"
	// DefaultReadyTimeout bounds the wait for health once the containers
	// are created; building and pulling images before that is not bounded.
	DefaultReadyTimeout = 3 * time.Minute
	// Profile is the compose profile of Prometheus, Grafana and the exporters.
	Profile = "observability"
	// TiersProfile is the compose profile of the edge replicas (--tiers 2).
	TiersProfile = "tiers2"
)

// Endpoints the compose file fixes for the services that use the host's
// network (Prometheus and Grafana publish no ports); a test checks them
// against docker-compose.yml.
const (
	GrafanaAddr = "127.0.0.1:13000"
)

// GrafanaService is Grafana's service in the compose file, left out by
// Config.NoGrafana.
const GrafanaService = "grafana"

// pollInterval is how often ps is read while waiting for health.
var pollInterval = 500 * time.Millisecond

// Config says what to start.
type Config struct {
	StateDir      string        // required: the state file goes here
	File          string        // the compose file; default DefaultFile
	Project       string        // compose project name; default DefaultProject
	Observability bool          // with the observability profile
	Tiers         int           // 2: with the edge replicas (TiersProfile); 0 or 1: without
	Edge          edge.Config   // with Tiers 2, the edges' start-up policy (HERDBENCH_EDGE_*)
	Cache         string        // the replicas' item cache: "" (Redis) or a store's name (store.Names(store.Cache)); its profile, if any
	DB            string        // the replicas' database: "" (Postgres) or a store's name (store.Names(store.DB)); its profile, if any
	NoGrafana     bool          // with it, all but Grafana (where its image cannot be had)
	ReadyTimeout  time.Duration // default DefaultReadyTimeout
	Log           io.Writer     // compose's own output (builds, pulls); nil discards
}

// ErrRunning is returned by Up when the state directory already has a
// running compose testbed.
var ErrRunning = errors.New("a docker testbed is already running")

// ErrNotRunning is returned by ReadStatus and Down when the state directory
// records no compose testbed; it is testbed.ErrNotRunning too (errors.Is).
var ErrNotRunning error = notRunning{}

type notRunning struct{}

func (notRunning) Error() string        { return "no docker testbed is recorded" }
func (notRunning) Is(target error) bool { return target == testbed.ErrNotRunning }

// NoComposeError says that no Compose v2 answers here: neither the
// docker CLI's compose plugin nor a standalone docker-compose 2.x.
type NoComposeError struct{ Tried []string }

func (e *NoComposeError) Error() string {
	return fmt.Sprintf("docker compose v2 not found (tried: %s): install Docker's compose plugin "+
		"(Debian/Ubuntu: `apt-get install docker-compose-plugin`, or Docker Desktop); "+
		"on a machine without it, testbed/compose/install-compose.sh builds it from its Go module",
		strings.Join(e.Tried, "; "))
}

// FindCommand returns the command line that runs Compose v2: `docker
// compose` when the docker CLI has the plugin, else a standalone
// `docker-compose` of version 2 or later. The Python docker-compose 1.x
// cannot drive the testbed (no `ps --format json`, a different project
// model) and is refused by name.
func FindCommand(ctx context.Context) ([]string, error) {
	var tried []string
	try := func(argv ...string) bool {
		out, err := exec.CommandContext(ctx, argv[0], append(argv[1:], "version", "--short")...).CombinedOutput()
		what := "`" + filepath.Base(argv[0]) + strings.Join(append([]string{""}, argv[1:]...), " ") + " version`"
		switch v := strings.TrimPrefix(firstLine(out), "v"); {
		case err != nil:
			tried = append(tried, fmt.Sprintf("%s: %v: %s", what, err, firstLine(out)))
		case !strings.HasPrefix(v, "1.") && v != "":
			return true
		default:
			tried = append(tried, fmt.Sprintf("%s: %s is Compose v1, too old (herdbench needs 2.0 or later)", what, v))
		}
		return false
	}
	if docker, err := exec.LookPath("docker"); err != nil {
		tried = append(tried, "docker: not on PATH")
	} else if try(docker, "compose") {
		return []string{docker, "compose"}, nil
	}
	if dc, err := exec.LookPath("docker-compose"); err != nil {
		tried = append(tried, "docker-compose: not on PATH")
	} else if try(dc) {
		return []string{dc}, nil
	}
	return nil, &NoComposeError{Tried: tried}
}

// state is what the state file records.
type state struct {
	Command  []string       `json:"command"` // docker compose, or docker-compose
	File     string         `json:"file"`    // absolute
	Project  string         `json:"project"`
	Profiles []string       `json:"profiles,omitempty"`
	Env      []string       `json:"env,omitempty"` // KEY=VALUE the compose file reads (the edges' policy)
	Services []string       `json:"services"`      // what up started
	Status   testbed.Status `json:"status"`
}

func statePath(dir string) string { return filepath.Join(dir, "docker.json") }

// Recorded reports whether dir holds a compose testbed's state file.
func Recorded(dir string) bool {
	_, err := os.Stat(statePath(dir))
	return err == nil
}

func readState(dir string) (state, error) {
	var st state
	return st, testbed.ReadStateFile(statePath(dir), &st, ErrNotRunning)
}

func (st state) write(dir string) error { return testbed.WriteStateFile(statePath(dir), st) }

// args is the command line of compose subcommand sub for this project.
func (st state) args(sub ...string) []string {
	a := append(slices.Clone(st.Command), "-f", st.File, "-p", st.Project)
	for _, p := range st.Profiles {
		a = append(a, "--profile", p)
	}
	return append(a, sub...)
}

// run runs compose with sub, its output to log (nil: kept for the error).
func (st state) run(ctx context.Context, log io.Writer, sub ...string) ([]byte, error) {
	argv := st.args(sub...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = filepath.Dir(st.File)
	if len(st.Env) > 0 {
		cmd.Env = append(os.Environ(), st.Env...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if log != nil {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, log), io.MultiWriter(&out, log)
	}
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, lastLines(out.Bytes(), 3))
	}
	return out.Bytes(), nil
}

// Up starts the compose project and returns its status once every service
// is healthy. On failure it runs `docker compose down` and says which
// service failed.
func Up(ctx context.Context, cfg Config) (_ testbed.Status, err error) {
	if cfg.StateDir == "" {
		return testbed.Status{}, errors.New("state dir: empty")
	}
	cfg.File = cmp.Or(cfg.File, DefaultFile)
	cfg.Project = cmp.Or(cfg.Project, DefaultProject)
	cfg.ReadyTimeout = cmp.Or(cfg.ReadyTimeout, DefaultReadyTimeout)
	file, err := filepath.Abs(cfg.File)
	if err != nil {
		return testbed.Status{}, err
	}
	if _, err := os.Stat(file); err != nil {
		return testbed.Status{}, fmt.Errorf("compose file: %w (run from the herdbench repository's root, or name the file)", err)
	}
	dir, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return testbed.Status{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return testbed.Status{}, fmt.Errorf("state dir: %w", err)
	}
	if Recorded(dir) {
		if st, err := ReadStatus(ctx, dir); err == nil {
			return st, fmt.Errorf("%w in %s", ErrRunning, dir)
		}
	}
	command, err := FindCommand(ctx)
	if err != nil {
		return testbed.Status{}, err
	}
	st := state{Command: command, File: file, Project: cfg.Project}
	st.Profiles, st.Env = cfg.profiles()
	out, err := st.run(ctx, nil, "config", "--services")
	if err != nil {
		return testbed.Status{}, err
	}
	services, only := chooseServices(strings.Fields(string(out)), cfg)
	st.Services = services
	if len(st.Services) == 0 {
		return testbed.Status{}, fmt.Errorf("%s defines no services", file)
	}
	// recorded before anything starts, so down cleans up a failed up
	if err := st.write(dir); err != nil {
		return testbed.Status{}, err
	}
	defer func() {
		if err != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			st.downToNothing(dctx)
			_ = os.Remove(statePath(dir))
		}
	}()
	if _, err := st.run(ctx, cfg.Log, append([]string{"up", "-d", "--build", "--remove-orphans"}, only...)...); err != nil {
		return testbed.Status{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, cfg.ReadyTimeout)
	defer cancel()
	containers, err := st.waitHealthy(wctx, st.Services)
	if err != nil {
		return testbed.Status{}, err
	}
	if st.Status, err = st.status(ctx, dir, containers); err != nil {
		return testbed.Status{}, err
	}
	if err := st.write(dir); err != nil {
		return testbed.Status{}, err
	}
	return st.Status, nil
}

// profiles are the compose profiles cfg asks for, and the environment
// their services read (the edges' policy, the replicas' cache and
// database).
func (cfg Config) profiles() (profiles, env []string) {
	if cfg.Observability {
		profiles = append(profiles, Profile)
	}
	if cfg.Tiers == 2 {
		profiles, env = append(profiles, TiersProfile), EdgeEnv(cfg.Edge)
	}
	stores, storesEnv := cfg.storeProfiles()
	return append(profiles, stores...), append(env, storesEnv...)
}

// chooseServices is what up starts of the compose file's services, and the
// services it names on its command line: none (all of them) unless some
// are left out.
func chooseServices(defined []string, cfg Config) (services, named []string) {
	if !cfg.NoGrafana {
		return defined, nil
	}
	services = slices.DeleteFunc(defined, func(s string) bool { return s == GrafanaService })
	return services, services
}

// status describes the running project from its published ports.
func (st state) status(ctx context.Context, dir string, cs map[string]container) (testbed.Status, error) {
	s := testbed.Status{
		Provider: Name,
		StateDir: dir,
		Items:    Items,
		Proxies:  Proxies,
		PIDs:     map[string]int{},
		Versions: map[string]string{},
		Logs:     map[string]string{},
	}
	if out, err := st.run(ctx, nil, "version", "--short"); err == nil {
		s.Versions["compose"] = strings.TrimSpace(string(out))
	}
	var errs []error
	addr := func(service string, port int) string {
		for _, p := range cs[service].Publishers {
			if p.TargetPort == port && p.PublishedPort != 0 {
				host := p.URL
				if host == "" || host == "0.0.0.0" || host == "::" {
					host = "127.0.0.1"
				}
				return fmt.Sprintf("%s:%d", host, p.PublishedPort)
			}
		}
		errs = append(errs, fmt.Errorf("service %s publishes no port for %d", service, port))
		return ""
	}
	var replicas []string
	for _, svc := range st.Services {
		if strings.HasPrefix(svc, "api-") {
			replicas = append(replicas, svc)
		}
	}
	slices.SortFunc(replicas, func(a, b string) int { return replicaIndex(a) - replicaIndex(b) })
	for _, r := range replicas {
		s.API = append(s.API, "http://"+addr(r, 8080))
	}
	if slices.Contains(st.Profiles, TiersProfile) {
		// the edges call the replicas through toxiproxy's api-N proxies
		s.Proxies = maps.Clone(Proxies)
		for _, r := range replicas {
			s.Proxies[r] = fmt.Sprintf("toxiproxy:%d", 18080+replicaIndex(r))
			s.Edge = append(s.Edge, "http://"+addr("edge-"+strings.TrimPrefix(r, "api-"), 8090))
		}
	}
	s.Toxiproxy = "http://" + addr("toxiproxy", 8474)
	storesStatus(ctx, &s, storesOf(st.Profiles), addr)
	if slices.Contains(st.Profiles, Profile) {
		targets, err := scrape.Committed()
		if err != nil {
			errs = append(errs, err)
		}
		s.Prometheus = "http://" + targets.Prometheus
		s.Harness = targets.Harness
		if slices.Contains(st.Services, GrafanaService) {
			s.Grafana = "http://" + GrafanaAddr
		}
	}
	if len(replicas) == 0 {
		errs = append(errs, fmt.Errorf("%s defines no api-N service", st.File))
	}
	return s, errors.Join(errs...)
}

func replicaIndex(service string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(service, "api-"))
	return n
}

// ReadStatus returns the status of the compose testbed recorded in dir,
// checking with ps that its services still run.
func ReadStatus(ctx context.Context, dir string) (testbed.Status, error) {
	st, err := readState(dir)
	if err != nil {
		return testbed.Status{}, err
	}
	if st.Status.Provider == "" {
		return testbed.Status{}, fmt.Errorf("the docker testbed in %s is still starting, or its up failed: `herdbench testbed down --state-dir %s` cleans up", dir, dir)
	}
	cs, err := st.ps(ctx)
	if err != nil {
		return testbed.Status{}, err
	}
	var down []string
	for _, s := range st.Services {
		if ok, _ := cs[s].healthy(); !ok {
			down = append(down, s+" "+describe(cs[s]))
		}
	}
	if len(down) > 0 {
		return st.Status, fmt.Errorf("the docker testbed in %s is not healthy (%s): `herdbench testbed down --state-dir %s` stops it",
			dir, strings.Join(down, ", "), dir)
	}
	return st.Status, nil
}

// Down stops and removes the compose testbed recorded in dir, with its
// volumes, and removes the state file.
func Down(ctx context.Context, dir string) error {
	st, err := readState(dir)
	if err != nil {
		return err
	}
	if _, err := st.run(ctx, nil, "down", "-v", "--remove-orphans"); err != nil {
		return err
	}
	return os.Remove(statePath(dir))
}

// downToNothing runs `docker compose down` until the engine holds no
// container of the project, or ctx ends: an up cut short (Ctrl-C) may
// leave a create the engine was still carrying out, which lands after a
// first down has listed what to remove.
func (st state) downToNothing(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		_, _ = st.run(ctx, nil, "down", "-v", "--remove-orphans")
		out, err := st.run(ctx, nil, "ps", "-a", "-q")
		if err != nil || strings.TrimSpace(string(out)) == "" {
			return // nothing left, or nothing more it can say
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
