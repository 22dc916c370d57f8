// Package compose runs the testbed with docker compose, the provider for
// machines with Docker: the services of the repository's docker-compose.yml
// (API replicas built from its Dockerfile, Redis, Postgres, toxiproxy, and
// with the observability profile Prometheus, Grafana and the exporters).
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
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/herdbench/herdbench/testbed/scrape"
)

// Provider is the Status.Provider of a compose testbed.
const Provider = "docker"

// Defaults of Config.
const (
	DefaultFile    = "docker-compose.yml"
	DefaultProject = "herdbench"
	// DefaultReadyTimeout bounds the wait for health once the containers
	// are created; building and pulling images before that is not bounded.
	DefaultReadyTimeout = 3 * time.Minute
	// Profile is the compose profile of Prometheus, Grafana and the exporters.
	Profile = "observability"
)

// Endpoints the compose file fixes for the services that use the host's
// network (Prometheus and Grafana publish no ports); a test checks them
// against docker-compose.yml.
const (
	GrafanaAddr = "127.0.0.1:13000"
)

// Proxies are the toxiproxy proxies the replicas use, inside the compose
// network (testbed/compose/toxiproxy.json).
var Proxies = map[string]string{"redis": "toxiproxy:6379", "postgres": "toxiproxy:5432"}

// Parts a restart can name: the same as the local provider's.
var Parts = []string{"api", "redis", "postgres"}

// pollInterval is how often ps is read while waiting for health.
var pollInterval = 500 * time.Millisecond

// Config says what to start.
type Config struct {
	StateDir      string        // required: the state file goes here
	File          string        // the compose file; default DefaultFile
	Project       string        // compose project name; default DefaultProject
	Observability bool          // with the observability profile
	ReadyTimeout  time.Duration // default DefaultReadyTimeout
	Log           io.Writer     // compose's own output (builds, pulls); nil discards
}

// ErrRunning is returned by Up when the state directory already has a
// running compose testbed.
var ErrRunning = errors.New("a docker testbed is already running")

// ErrNotRunning is returned by ReadStatus and Down when the state directory
// records no compose testbed.
var ErrNotRunning = errors.New("no docker testbed is recorded")

// NoComposeError says that neither `docker compose` nor `docker-compose`
// works here.
type NoComposeError struct{ Tried []string }

func (e *NoComposeError) Error() string {
	return fmt.Sprintf("docker compose not found (tried: %s): install Docker with its compose plugin (Debian/Ubuntu: `apt-get install docker.io docker-compose-plugin`, or Docker Desktop)",
		strings.Join(e.Tried, "; "))
}

// FindCommand returns the command line that runs compose: `docker compose`
// when the docker CLI has the compose plugin, else `docker-compose`.
func FindCommand(ctx context.Context) ([]string, error) {
	var tried []string
	if docker, err := exec.LookPath("docker"); err == nil {
		out, err := exec.CommandContext(ctx, docker, "compose", "version").CombinedOutput()
		if err == nil {
			return []string{docker, "compose"}, nil
		}
		tried = append(tried, fmt.Sprintf("`docker compose version`: %v: %s", err, firstLine(out)))
	} else {
		tried = append(tried, "docker: not on PATH")
	}
	if dc, err := exec.LookPath("docker-compose"); err == nil {
		out, err := exec.CommandContext(ctx, dc, "version").CombinedOutput()
		if err == nil {
			return []string{dc}, nil
		}
		tried = append(tried, fmt.Sprintf("`docker-compose version`: %v: %s", err, firstLine(out)))
	} else {
		tried = append(tried, "docker-compose: not on PATH")
	}
	return nil, &NoComposeError{Tried: tried}
}

// state is what the state file records.
type state struct {
	Command  []string       `json:"command"` // docker compose, or docker-compose
	File     string         `json:"file"`    // absolute
	Project  string         `json:"project"`
	Profiles []string       `json:"profiles,omitempty"`
	Services []string       `json:"services"` // what up started
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
	if cfg.File == "" {
		cfg.File = DefaultFile
	}
	if cfg.Project == "" {
		cfg.Project = DefaultProject
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = DefaultReadyTimeout
	}
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
	if cfg.Observability {
		st.Profiles = []string{Profile}
	}
	out, err := st.run(ctx, nil, "config", "--services")
	if err != nil {
		return testbed.Status{}, err
	}
	st.Services = strings.Fields(string(out))
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
			_, _ = st.run(dctx, nil, "down", "-v", "--remove-orphans")
			_ = os.Remove(statePath(dir))
		}
	}()
	if _, err := st.run(ctx, cfg.Log, "up", "-d", "--build", "--remove-orphans"); err != nil {
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

// container is one entry of `docker compose ps --format json`.
type container struct {
	Service    string      `json:"Service"`
	State      string      `json:"State"`  // running, exited, restarting, ...
	Health     string      `json:"Health"` // healthy, starting, unhealthy, or empty
	ExitCode   int         `json:"ExitCode"`
	Publishers []publisher `json:"Publishers"`
}

type publisher struct {
	URL           string `json:"URL"`
	TargetPort    int    `json:"TargetPort"`
	PublishedPort int    `json:"PublishedPort"`
}

// ps lists the project's containers by service. Compose prints a JSON
// array (before v2.21) or one object per line (since).
func (st state) ps(ctx context.Context) (map[string]container, error) {
	out, err := st.run(ctx, nil, "ps", "-a", "--format", "json")
	if err != nil {
		return nil, err
	}
	var list []container
	trimmed := bytes.TrimSpace(out)
	if bytes.HasPrefix(trimmed, []byte("[")) {
		if err := json.Unmarshal(trimmed, &list); err != nil {
			return nil, fmt.Errorf("compose ps: %w", err)
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(trimmed))
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var c container
			if err := json.Unmarshal(line, &c); err != nil {
				return nil, fmt.Errorf("compose ps: %w: %s", err, line)
			}
			list = append(list, c)
		}
	}
	byService := map[string]container{}
	for _, c := range list {
		byService[c.Service] = c
	}
	return byService, nil
}

// healthy reports whether c serves: running, and healthy if it has a
// healthcheck. failed says it never will without help.
func (c container) healthy() (ok, failed bool) {
	switch {
	case c.State == "exited" || c.State == "dead" || c.Health == "unhealthy":
		return false, true
	case c.State == "running" && (c.Health == "healthy" || c.Health == ""):
		return true, false
	}
	return false, false
}

// waitHealthy polls ps until every service is healthy, one fails, or ctx
// ends.
func (st state) waitHealthy(ctx context.Context, services []string) (map[string]container, error) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	var cs map[string]container
	for {
		now, err := st.ps(ctx)
		switch {
		case err == nil:
			cs = now
		case ctx.Err() == nil:
			return nil, err
		}
		var waiting []string
		for _, s := range services {
			c, found := cs[s]
			ok, failed := c.healthy()
			if failed {
				return nil, fmt.Errorf("service %s is %s (exit code %d): see `%s`", s, describe(c), c.ExitCode,
					strings.Join(st.args("logs", s), " "))
			}
			if !found || !ok {
				waiting = append(waiting, s+" "+describe(c))
			}
		}
		if len(waiting) == 0 {
			return cs, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("not healthy: %w: %s", ctx.Err(), strings.Join(waiting, ", "))
		case <-t.C:
		}
	}
}

func describe(c container) string {
	switch {
	case c.State == "":
		return "not created"
	case c.Health != "":
		return c.State + " (" + c.Health + ")"
	}
	return c.State
}

// status describes the running project from its published ports.
func (st state) status(ctx context.Context, dir string, cs map[string]container) (testbed.Status, error) {
	s := testbed.Status{
		Provider: Provider,
		StateDir: dir,
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
	s.Redis = "redis://" + addr("redis", 6379)
	s.Postgres = fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", testbed.Superuser, addr("postgres", 5432), testbed.Database)
	s.Toxiproxy = "http://" + addr("toxiproxy", 8474)
	maps.Copy(s.Versions, versions(ctx, s.Redis, s.Postgres))
	if slices.Contains(st.Profiles, Profile) {
		targets, err := scrape.Committed()
		if err != nil {
			errs = append(errs, err)
		}
		s.Prometheus = "http://" + targets.Prometheus
		s.Harness = targets.Harness
		s.Grafana = "http://" + GrafanaAddr
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

// Restart restarts part ("api", "redis", "postgres") of the compose
// testbed recorded in dir with `docker compose restart`, all its services
// at once or one after another when rolling, and returns when they are
// healthy again. Redis keeps nothing across a restart; Postgres keeps its
// data; a replica comes back with the run-time config and seed it had: all
// as under the local provider.
func Restart(ctx context.Context, dir, part string, rolling bool) ([]string, error) {
	st, err := readState(dir)
	if err != nil {
		return nil, err
	}
	var batch []string
	for _, s := range st.Services {
		if s == part || (part == "api" && strings.HasPrefix(s, "api-")) {
			batch = append(batch, s)
		}
	}
	if !slices.Contains(Parts, part) || len(batch) == 0 {
		return nil, fmt.Errorf("restart: unknown part %q (accepted: %s)", part, strings.Join(Parts, ", "))
	}
	steps := [][]string{batch}
	if rolling {
		steps = nil
		for _, s := range batch {
			steps = append(steps, []string{s})
		}
	}
	for _, step := range steps {
		var replicas []replicaState
		for _, s := range step {
			if i := replicaIndex(s) - 1; strings.HasPrefix(s, "api-") && i >= 0 && i < len(st.Status.API) {
				replicas = append(replicas, saveReplicas(ctx, st.Status.API[i:i+1])...)
			}
		}
		if _, err := st.run(ctx, nil, append([]string{"restart"}, step...)...); err != nil {
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, DefaultReadyTimeout)
		_, err := st.waitHealthy(wctx, step)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("restart %s: %w", strings.Join(step, ", "), err)
		}
		for _, r := range replicas {
			if err := r.restore(ctx); err != nil {
				return nil, fmt.Errorf("restart: restore %s's config: %w", r.url, err)
			}
		}
	}
	return batch, nil
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
