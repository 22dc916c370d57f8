package targets

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/stores/postgres"
	"github.com/herdbench/herdbench/strictyaml"
)

// File is a target file: a service herdbench did not start, what it may
// touch of it, and the limits it keeps to. docs/targets.md describes each
// field; examples/staging.yaml is one.
type File struct {
	Name      string   `yaml:"name"`
	Endpoints []string `yaml:"endpoints"` // base URLs the load goes to, round-robin
	Allow     []string `yaml:"allow"`     // hosts besides loopback that herdbench may touch
	Request   Request  `yaml:"request"`
	// Requests are the service's traffic as classes of requests, each its
	// share of the rate, one of them the herd's (classes.go); without
	// them, Request is the one class
	Requests   []RequestClass    `yaml:"requests"`
	Keys       KeySpace          `yaml:"keys"`
	Headers    map[string]string `yaml:"headers"` // sent with every request; ${VAR} reads the environment
	Redis      *RedisSpec        `yaml:"redis"`
	Postgres   *PostgresSpec     `yaml:"postgres"`
	MySQL      *MySQLSpec        `yaml:"mysql"`
	Memcached  *MemcachedSpec    `yaml:"memcached"`
	Toxiproxy  *ToxiproxySpec    `yaml:"toxiproxy"`
	Prometheus *PrometheusSpec   `yaml:"prometheus"`
	HAProxy    *HAProxySpec      `yaml:"haproxy"` // a load balancer in front of the service, its own counters read (haproxy.go)
	HTTPCache  *HTTPCacheSpec    `yaml:"http_cache"`
	Trigger    *TriggerSpec      `yaml:"trigger"` // how a herd is provoked on this service, unless a flag or scenario file says
	Plan       *PlanSpec         `yaml:"plan"`    // the load this service is tested with, unless a flag or scenario file says
	Arms       []ArmSpec         `yaml:"arms"`
	Limits     Limits            `yaml:"limits"`
	Abort      []string          `yaml:"abort"` // stop conditions, as --abort-on
	// ShedStatuses are the statuses that mean the service refused the load
	// (outcome shed); empty: 429 and 503. Another 5xx is an error.
	ShedStatuses []int `yaml:"shed_statuses"`
	// FailStatuses are the 4xx that count as failures (a drop, as a 5xx);
	// any other 4xx is an answer: the service has no such thing
	FailStatuses []int `yaml:"fail_statuses"`

	// Needed are the ${VAR}s a dry run's read found not set
	// (ReadFileForDryRun): the run needs them; empty otherwise
	Needed []Needed `yaml:"-"`

	doc *strictyaml.Doc
}

// Request is how a request for one key is made: {key} in the path, a query
// value or a header value is replaced by the key.
type Request struct {
	Method  string            `yaml:"method"` // GET when empty
	Path    string            `yaml:"path"`   // such as /items/{key}
	Query   map[string]string `yaml:"query"`
	Headers map[string]string `yaml:"headers"`
	// Body is sent as written, {key} replaced; BodyFile is a file beside
	// the target file read as the body instead (at most MaxBody). A GET
	// or HEAD takes a body only with AllowBody.
	Body      string `yaml:"body"`
	BodyFile  string `yaml:"body_file"`
	AllowBody bool   `yaml:"allow_body"`
}

// KeySpace is where keys come from: exactly one of a list, a file (one key
// per line), a range (uniform) or Zipf over a range. Hot keys are the first
// Hot of it: the lowest of a range, the first of a list or file.
type KeySpace struct {
	List  []string `yaml:"list"`
	File  string   `yaml:"file"`
	Range *Range   `yaml:"range"`
	Zipf  *Zipf    `yaml:"zipf"`
	Hot   int      `yaml:"hot"`
}

// Range is the whole numbers From..To.
type Range struct {
	From int64 `yaml:"from"`
	To   int64 `yaml:"to"`
}

// Zipf draws From..To with P(k) ∝ (k-From+1)^-S.
type Zipf struct {
	From int64   `yaml:"from"`
	To   int64   `yaml:"to"`
	S    float64 `yaml:"s"`
}

// RedisSpec is the target's Redis, for observing and for the triggers that
// touch keys.
type RedisSpec struct {
	Address  string `yaml:"address"` // host:port
	DB       int    `yaml:"db"`
	Password string `yaml:"password"` // ${VAR}
	Key      string `yaml:"key"`      // the Redis key of a request's key, such as item:{key}
	Pattern  string `yaml:"pattern"`  // the only keys a trigger may touch, such as item:*
	Channel  string `yaml:"invalidate_channel"`
	// AllowPause lets an outage of this Redis pause it whole (CLIENT PAUSE
	// ALL): every client of it waits, not only the service's
	AllowPause bool `yaml:"allow_pause"`
}

// PostgresSpec is the target's Postgres, for observing the statements that
// count as DB queries. herdbench only reads it, but for resetting the
// connections of Role (conndrop).
type PostgresSpec struct {
	DSN        string  `yaml:"dsn"`        // ${VAR}: credentials come from the environment
	Role       string  `yaml:"role"`       // the service's role: its statements count, its connections may be reset
	QueryIDs   []int64 `yaml:"queryids"`   // pg_stat_statements queryids that count
	Statements string  `yaml:"statements"` // or a Postgres regular expression on the statement text
}

// ToxiproxySpec is a toxiproxy the service's connections already go
// through, for outage, slowdb and conndrop.
type ToxiproxySpec struct {
	URL     string            `yaml:"url"`
	Proxies map[string]string `yaml:"proxies"` // dependency (postgres, redis) -> proxy name
}

// PrometheusSpec reads the service's own metrics into each arm's results.
type PrometheusSpec struct {
	URL    string            `yaml:"url"`
	Series map[string]string `yaml:"series"` // name -> PromQL
	// Drain are the series an arm's drain waits on to settle: back at or
	// below their value before the arm's fill (a gauge of work in flight,
	// a rate); none: the drain reads no series
	Drain []string `yaml:"drain"`
}

// ArmSpec is how one arm is selected on the service: headers and query
// values sent with every request, and commands run before and after it
// (a feature-flag CLI call, say).
type ArmSpec struct {
	Name    string            `yaml:"name"`
	Headers map[string]string `yaml:"headers"`
	Query   map[string]string `yaml:"query"`
	Before  []string          `yaml:"before"`
	After   []string          `yaml:"after"`
	// Endpoints are the arm's own base URLs, instead of the file's (two
	// frontends of one load balancer, one per arm: no reload between arms)
	Endpoints []string `yaml:"endpoints"`
	// Backend is the HAProxy backend the arm's endpoints reach: its lb.*
	// are that backend's; "" is haproxy.backend's (haproxy.go)
	Backend string `yaml:"backend"`
	// Secret are the headers whose values come from the environment
	// (${VAR}): a dry run shows the others' values, never these
	Secret []string `yaml:"-"`
}

// TriggerSpec is the trigger a target file proposes, with its options
// by their scenario keys (run, undo, hot_keys...): the run's trigger and
// options where neither the command line nor a scenario file sets them.
type TriggerSpec struct {
	Name    string            `yaml:"name"`
	Options map[string]string `yaml:",inline"`
}

// PlanSpec is the experiment a target file proposes for its service: the
// rate and timeline where neither the command line nor a scenario file
// sets them (defaults < target file < scenario file < flags), within the
// file's own limits. Each value is read as its flag reads it.
type PlanSpec struct {
	Rate    string `yaml:"rate"`    // --rate: requests/s
	Warmup  string `yaml:"warmup"`  // --warmup
	Before  string `yaml:"before"`  // --before
	After   string `yaml:"after"`   // --after: a duration, or auto[:MAX]
	Timeout string `yaml:"timeout"` // --timeout: the client's, per attempt
}

// Settings are the plan's values by flag, in the order the flags are
// documented, with their paths in the file; unset ones are left out.
func (p *PlanSpec) Settings() []PlanSetting {
	if p == nil {
		return nil
	}
	var out []PlanSetting
	for _, s := range []PlanSetting{{"rate", p.Rate}, {"warmup", p.Warmup}, {"before", p.Before}, {"after", p.After}, {"timeout", p.Timeout}} {
		if s.Value != "" {
			out = append(out, s)
		}
	}
	return out
}

// PlanSetting is one value of a target file's plan: its flag (and key,
// plan.FLAG) and its value as the flag takes it.
type PlanSetting struct{ Flag, Value string }

// Limits are the target's caps: a plan above them is refused.
type Limits struct {
	MaxRate     int    `yaml:"max_rate"`     // requests/s
	MaxDuration string `yaml:"max_duration"` // one arm's load, such as 2m
	// MaxDrain is the most an arm's drain waits for the service to finish
	// its work, such as 30s; no shorter than the clients' whole deadline
	MaxDrain string `yaml:"max_drain"`
}

// ReadFile reads and checks a target file. Every problem is reported at
// once, each at its file:line with the accepted values; secrets are read
// from the environment now, so a missing one stops the run before it starts.
func ReadFile(path string) (*File, error) { return readFile(path, false) }

// ReadFileForDryRun is ReadFile for a dry run, which sends nothing: a
// ${VAR} that is not set is needed at run time (File.Needed), not a
// problem, and the value it is in stays empty.
func ReadFileForDryRun(path string) (*File, error) { return readFile(path, true) }

// ParseFile decodes and checks a target file; env looks up variables.
func ParseFile(b []byte, name string, env func(string) (string, bool)) (*File, error) {
	return parseFile(b, name, env, false)
}

func readFile(path string, later bool) (*File, error) {
	b, err := os.ReadFile(path)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("%s: %w", path, pe.Err)
	}
	if err != nil {
		return nil, err
	}
	return parseFile(b, path, os.LookupEnv, later)
}

func parseFile(b []byte, name string, env func(string) (string, bool), later bool) (*File, error) {
	f := &File{}
	doc, err := strictyaml.Decode(b, name, "target", f)
	if doc == nil {
		return nil, err
	}
	f.doc = doc
	if doc.Failed() { // what did not decode is not checked further: it would blame other fields
		return f, err
	}
	errs := herd.Fields(err)
	for _, e := range f.check(env, later) {
		if !doc.Misspelt(e.Field) { // the unknown key beside it says why
			errs = append(errs, e)
		}
	}
	return f, errs.ByLine().Err()
}

// Needed is a ${VAR} a dry run found not set: the run needs it.
type Needed struct {
	Var   string // the variable
	Field string // where it is used: headers.Authorization, postgres.dsn
	Line  int    // the line of the field in the target file
}

// resolve is a path relative to the target file's directory.
func (f *File) resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(f.doc.Name), p)
}

// ReadKeys reads a file of keys: one a line, blank lines and # comments
// left out; a file without keys is an error.
func ReadKeys(path string) ([]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var keys []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if k := strings.TrimSpace(sc.Text()); k != "" && !strings.HasPrefix(k, "#") {
			keys = append(keys, k)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errors.New("no keys in it")
	}
	return keys, nil
}

// Hosts lists every host the file lets herdbench touch, with where it is
// (the last of its uses, when it has several).
func (f *File) Hosts() map[string]string {
	hosts := map[string]string{}
	for _, u := range f.HostUses() {
		hosts[u.Host] = u.Where
	}
	return hosts
}

// HostUse is one use of a host by a target file: the host, and the field
// that names it.
type HostUse struct{ Host, Where string }

// HostUses lists every use of a host the file makes, in the file's order,
// one each: a host named by the endpoints and by redis.address is used
// twice, and a dry run says both; a class of vegeta targets uses each of
// its hosts once.
func (f *File) HostUses() []HostUse {
	var uses []HostUse
	add := func(where, rawURL string) {
		if u, err := url.Parse(rawURL); err == nil && u.Hostname() != "" {
			uses = append(uses, HostUse{u.Hostname(), where})
		}
	}
	for i, e := range f.Endpoints {
		add(fmt.Sprintf("endpoints[%d]", i), e)
	}
	for i, a := range f.Arms {
		for j, e := range a.Endpoints {
			add(fmt.Sprintf("arms[%d].endpoints[%d]", i, j), e)
		}
	}
	for i, rc := range f.Requests { // a host once per class, however many of its targets it serves
		seen := map[string]bool{}
		for _, t := range rc.vegeta {
			if u, err := url.Parse(t.URL); err == nil && !seen[u.Hostname()] {
				seen[u.Hostname()] = true
				add(fmt.Sprintf("requests[%d].vegeta (%s)", i, rc.Vegeta), t.URL)
			}
		}
	}
	if f.Redis != nil {
		if h, _, err := net.SplitHostPort(f.Redis.Address); err == nil {
			uses = append(uses, HostUse{h, "redis.address"})
		}
	}
	if f.Postgres != nil && f.Postgres.DSN != "" { // "" until a dry run's ${VAR} is set
		for _, h := range pgHosts(f.Postgres.DSN) {
			uses = append(uses, HostUse{h, "postgres.dsn"})
		}
	}
	if f.MySQL != nil && f.MySQL.DSN != "" {
		for _, h := range mysqlHosts(f.MySQL.DSN) {
			uses = append(uses, HostUse{h, "mysql.dsn"})
		}
	}
	if f.Memcached != nil {
		if h, _, err := net.SplitHostPort(f.Memcached.Address); err == nil {
			uses = append(uses, HostUse{h, "memcached.address"})
		}
	}
	if f.Toxiproxy != nil {
		add("toxiproxy.url", f.Toxiproxy.URL)
	}
	if f.Prometheus != nil {
		add("prometheus.url", f.Prometheus.URL)
	}
	if f.HAProxy != nil {
		add("haproxy.stats", f.HAProxy.Stats)
	}
	if f.HTTPCache != nil {
		for i, u := range f.HTTPCache.URLs {
			add(fmt.Sprintf("http_cache.urls[%d]", i), u)
		}
	}
	return uses
}

// pgHosts are every host a DSN reaches, as pgx reads it (postgres.Hosts).
// A DSN that does not parse names a host that is never allowed, so
// CheckHosts refuses it.
func pgHosts(dsn string) []string {
	hosts, err := postgres.Hosts(dsn)
	if err != nil {
		return []string{"(postgres.dsn does not parse)"}
	}
	return hosts
}

// Duration is limits.max_duration, 0 when the file sets none.
func (l Limits) Duration() time.Duration {
	d, _ := time.ParseDuration(l.MaxDuration)
	return d
}

// Drain is limits.max_drain, 0 when the file sets none.
func (l Limits) Drain() time.Duration {
	d, _ := time.ParseDuration(l.MaxDrain)
	return d
}

// Loopback says whether host is this machine: localhost or a loopback
// address. Names are not resolved: a name must be allowed explicitly.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Size is how many keys the key space holds.
func (k KeySpace) Size() int64 {
	switch {
	case len(k.List) > 0:
		return int64(len(k.List))
	case k.Range != nil:
		return k.Range.To - k.Range.From + 1
	case k.Zipf != nil:
		return k.Zipf.To - k.Zipf.From + 1
	}
	return 0
}

// Line is where path is in the target file, 0 when it is not.
func (f *File) Line(path string) int { return f.doc.Line(path) }
