package targets

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/herdbench/herdbench/strictyaml"
)

// File is a target file: a service herdbench did not start, what it may
// touch of it, and the limits it keeps to. docs/targets.md describes each
// field; examples/staging.yaml is one.
type File struct {
	Name       string            `yaml:"name"`
	Endpoints  []string          `yaml:"endpoints"` // base URLs the load goes to, round-robin
	Allow      []string          `yaml:"allow"`     // hosts besides loopback that herdbench may touch
	Request    Request           `yaml:"request"`
	Keys       KeySpace          `yaml:"keys"`
	Headers    map[string]string `yaml:"headers"` // sent with every request; ${VAR} reads the environment
	Redis      *RedisSpec        `yaml:"redis"`
	Postgres   *PostgresSpec     `yaml:"postgres"`
	Toxiproxy  *ToxiproxySpec    `yaml:"toxiproxy"`
	Prometheus *PrometheusSpec   `yaml:"prometheus"`
	Arms       []ArmSpec         `yaml:"arms"`
	Limits     Limits            `yaml:"limits"`
	Abort      []string          `yaml:"abort"` // stop conditions, as --abort-on

	doc *strictyaml.Doc
}

// Request is how a request for one key is made: {key} in the path, a query
// value or a header value is replaced by the key.
type Request struct {
	Method  string            `yaml:"method"` // GET when empty
	Path    string            `yaml:"path"`   // such as /items/{key}
	Query   map[string]string `yaml:"query"`
	Headers map[string]string `yaml:"headers"`
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
}

// Limits are the target's caps: a plan above them is refused.
type Limits struct {
	MaxRate     int    `yaml:"max_rate"`     // requests/s
	MaxDuration string `yaml:"max_duration"` // one arm's load, such as 2m
}

// ReadFile reads and checks a target file. Every problem is reported at
// once, each at its file:line with the accepted values; secrets are read
// from the environment now, so a missing one stops the run before it starts.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	return ParseFile(b, path, os.LookupEnv)
}

// ParseFile decodes and checks a target file; env looks up variables.
func ParseFile(b []byte, name string, env func(string) (string, bool)) (*File, error) {
	f := &File{}
	doc, err := strictyaml.Decode(b, name, f)
	if doc == nil {
		return nil, err
	}
	f.doc = doc
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, f.check(env)...)
	return f, errors.Join(errs...)
}

// envRef is ${VAR} in a value.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${VAR} in the value at path from env.
func (f *File) expand(path, v string, env func(string) (string, bool)) (string, error) {
	var missing []string
	out := envRef.ReplaceAllStringFunc(v, func(ref string) string {
		name := envRef.FindStringSubmatch(ref)[1]
		val, ok := env(name)
		if !ok {
			missing = append(missing, name)
		}
		return val
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("%s: environment variable %s is not set (accepted: export it before the run; secrets are read from the environment, never written to results)",
			f.doc.At(path), strings.Join(missing, ", "))
	}
	return out, nil
}

// check validates what decoded, and reads the secrets.
func (f *File) check(env func(string) (string, bool)) []error {
	var errs []error
	bad := func(path, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", f.doc.At(path), fmt.Sprintf(format, args...)))
	}
	if len(f.Endpoints) == 0 {
		errs = append(errs, fmt.Errorf("%s: endpoints: none (accepted: one or more base URLs such as http://127.0.0.1:8080)", f.doc.Name))
	}
	for i, e := range f.Endpoints {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(fmt.Sprintf("endpoints[%d]", i), "%q is not a base URL (accepted: http:// or https:// with a host, such as http://127.0.0.1:8080)", e)
		}
	}
	for i, h := range f.Allow {
		if h == "" || strings.ContainsAny(h, "/: ") {
			bad(fmt.Sprintf("allow[%d]", i), "%q is not a host name or address (accepted: a host as it appears in the URLs, such as staging.internal or 10.0.0.5)", h)
		}
	}
	if m := f.Request.Method; m != "" && !slices.Contains([]string{"GET", "HEAD", "POST", "PUT", "DELETE"}, m) {
		bad("request.method", "%q (accepted: GET, HEAD, POST, PUT, DELETE)", m)
	}
	if p := f.Request.Path; p != "" && !strings.HasPrefix(p, "/") {
		bad("request.path", "%q does not start with / (accepted: a path such as /items/{key})", p)
	}
	uses := strings.Contains(f.Request.Path, "{key}")
	for _, v := range f.Request.Query {
		uses = uses || strings.Contains(v, "{key}")
	}
	for _, v := range f.Request.Headers {
		uses = uses || strings.Contains(v, "{key}")
	}
	if !uses {
		errs = append(errs, fmt.Errorf("%s: request: {key} appears nowhere (accepted: {key} in request.path, a request.query value or a request.headers value)", f.at("request")))
	}
	errs = append(errs, f.checkKeys()...)
	for k, v := range f.Headers {
		p := "headers." + k
		val, err := f.expand(p, v, env)
		if err != nil {
			errs = append(errs, err)
		}
		f.Headers[k] = val
	}
	if r := f.Redis; r != nil {
		if _, _, err := net.SplitHostPort(r.Address); err != nil {
			bad("redis.address", "%q is not host:port (accepted: such as 127.0.0.1:6379)", r.Address)
		}
		if r.DB < 0 || r.DB > 15 {
			bad("redis.db", "%d (accepted: 0 to 15)", r.DB)
		}
		if r.Key != "" && !strings.Contains(r.Key, "{key}") {
			bad("redis.key", "%q has no {key} (accepted: the Redis key of a request's key, such as item:{key})", r.Key)
		}
		if r.Key != "" && r.Pattern == "" {
			bad("redis.pattern", "none (accepted: the only keys triggers may touch, such as item:*; required with redis.key)")
		}
		if r.Password != "" && !onlyEnvRef(r.Password) {
			bad("redis.password", "a literal password (accepted: ${VAR}, read from the environment)")
		}
		pw, err := f.expand("redis.password", r.Password, env)
		if err != nil {
			errs = append(errs, err)
		}
		r.Password = pw
	}
	if p := f.Postgres; p != nil {
		if literalPassword(p.DSN) {
			bad("postgres.dsn", "holds a password (accepted: ${VAR} for the DSN or its password, read from the environment)")
		}
		dsn, err := f.expand("postgres.dsn", p.DSN, env)
		if err != nil {
			errs = append(errs, err)
		}
		p.DSN = dsn
		switch {
		case p.DSN == "" && err == nil:
			bad("postgres.dsn", "empty (accepted: a DSN, such as ${STAGING_PG_DSN})")
		case err == nil:
			if _, perr := pgconn.ParseConfig(p.DSN); perr != nil {
				bad("postgres.dsn", "does not parse (accepted: a libpq DSN, URL or key=value, such as postgres://role@host:5432/db)")
			}
		}
		if p.Role == "" {
			bad("postgres.role", "empty (accepted: the service's role, whose statements count and whose connections conndrop may reset)")
		}
		if len(p.QueryIDs) == 0 && p.Statements == "" {
			bad("postgres", "no statements to count (accepted: queryids, or statements: a regular expression on pg_stat_statements.query)")
		}
		if p.Statements != "" {
			if _, err := regexp.Compile(p.Statements); err != nil {
				bad("postgres.statements", "%v (accepted: a regular expression)", err)
			}
		}
	}
	if t := f.Toxiproxy; t != nil {
		if u, err := url.Parse(t.URL); err != nil || u.Scheme != "http" || u.Host == "" {
			bad("toxiproxy.url", "%q is not an http URL (accepted: toxiproxy's API, such as http://127.0.0.1:8474)", t.URL)
		}
		for dep := range t.Proxies {
			if dep != "postgres" && dep != "redis" {
				bad("toxiproxy.proxies."+dep, "unknown dependency %q (accepted: postgres, redis)", dep)
			}
		}
	}
	if p := f.Prometheus; p != nil {
		if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("prometheus.url", "%q is not an http URL (accepted: Prometheus' base URL, such as http://127.0.0.1:9090)", p.URL)
		}
		if len(p.Series) == 0 {
			bad("prometheus.series", "none (accepted: name: PromQL pairs)")
		}
	}
	seen := map[string]bool{}
	for i, a := range f.Arms {
		p := fmt.Sprintf("arms[%d]", i)
		if a.Name == "" {
			bad(p, "an arm needs a name")
		}
		if seen[a.Name] {
			bad(p+".name", "%q twice (accepted: one arm per name)", a.Name)
		}
		seen[a.Name] = true
		for k, v := range a.Headers {
			val, err := f.expand(p+".headers."+k, v, env)
			if err != nil {
				errs = append(errs, err)
			}
			a.Headers[k] = val
		}
	}
	if f.Limits.MaxRate < 0 {
		bad("limits.max_rate", "%d (accepted: 0, no cap of its own, or requests/s)", f.Limits.MaxRate)
	}
	if d := f.Limits.MaxDuration; d != "" {
		if v, err := time.ParseDuration(d); err != nil || v <= 0 {
			bad("limits.max_duration", "%q (accepted: a duration such as 2m)", d)
		}
	}
	return errs
}

// literalPassword says whether a DSN as written carries a password of its
// own rather than from the environment: the whole DSN a ${VAR}, or its
// password one.
func literalPassword(dsn string) bool {
	if onlyEnvRef(dsn) {
		return false
	}
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		pw, ok := u.User.Password()
		return ok && !onlyEnvRef(pw)
	}
	for _, kv := range strings.Fields(dsn) {
		if pw, ok := strings.CutPrefix(kv, "password="); ok && !onlyEnvRef(pw) {
			return true
		}
	}
	return false
}

// onlyEnvRef says whether v is one ${VAR} and nothing else.
func onlyEnvRef(v string) bool {
	loc := envRef.FindStringIndex(v)
	return loc != nil && loc[0] == 0 && loc[1] == len(v)
}

func (f *File) at(path string) string {
	if f.doc.Line(path) == 0 {
		return f.doc.Name + ": " + path
	}
	return f.doc.At(path)
}

// MaxKeys bounds a key space.
const MaxKeys = 1 << 31

// checkKeys checks the key space: exactly one source, and a hot count
// within it.
func (f *File) checkKeys() []error {
	var errs []error
	k := f.Keys
	n := 0
	for _, set := range []bool{len(k.List) > 0, k.File != "", k.Range != nil, k.Zipf != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return append(errs, fmt.Errorf("%s: %d sources of keys (accepted: exactly one of list, file, range, zipf)", f.at("keys"), n))
	}
	size := int64(len(k.List))
	switch {
	case k.File != "":
		keys, err := readKeys(f.resolve(k.File))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v (accepted: a file of keys, one per line)", f.at("keys.file"), err))
		}
		k.List, size = keys, int64(len(keys))
	case k.Range != nil:
		if k.Range.From < 0 || k.Range.To < k.Range.From || k.Range.To-k.Range.From >= MaxKeys {
			errs = append(errs, fmt.Errorf("%s: from %d to %d (accepted: 0 <= from <= to, at most %d keys)", f.at("keys.range"), k.Range.From, k.Range.To, MaxKeys))
			return errs
		}
		size = k.Range.To - k.Range.From + 1
	case k.Zipf != nil:
		if k.Zipf.From < 0 || k.Zipf.To <= k.Zipf.From || k.Zipf.To-k.Zipf.From >= MaxKeys {
			errs = append(errs, fmt.Errorf("%s: from %d to %d (accepted: 0 <= from < to, at most %d keys)", f.at("keys.zipf"), k.Zipf.From, k.Zipf.To, MaxKeys))
			return errs
		}
		if k.Zipf.S <= 1 {
			errs = append(errs, fmt.Errorf("%s: s %g (accepted: greater than 1)", f.at("keys.zipf.s"), k.Zipf.S))
		}
		size = k.Zipf.To - k.Zipf.From + 1
	}
	if k.Hot < 0 || int64(k.Hot) > size {
		errs = append(errs, fmt.Errorf("%s: %d (accepted: 0 to the key space's %d keys)", f.at("keys.hot"), k.Hot, size))
	}
	f.Keys = k
	return errs
}

// resolve is a path relative to the target file's directory.
func (f *File) resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(f.doc.Name), p)
}

func readKeys(path string) ([]string, error) {
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

// Hosts lists every host the file lets herdbench touch, with where it is.
func (f *File) Hosts() map[string]string {
	hosts := map[string]string{}
	add := func(where, rawURL string) {
		if u, err := url.Parse(rawURL); err == nil && u.Hostname() != "" {
			hosts[u.Hostname()] = where
		}
	}
	for i, e := range f.Endpoints {
		add(fmt.Sprintf("endpoints[%d]", i), e)
	}
	if f.Redis != nil {
		if h, _, err := net.SplitHostPort(f.Redis.Address); err == nil {
			hosts[h] = "redis.address"
		}
	}
	if f.Postgres != nil {
		for _, h := range pgHosts(f.Postgres.DSN) {
			hosts[h] = "postgres.dsn"
		}
	}
	if f.Toxiproxy != nil {
		add("toxiproxy.url", f.Toxiproxy.URL)
	}
	if f.Prometheus != nil {
		add("prometheus.url", f.Prometheus.URL)
	}
	return hosts
}

// pgHosts are every host a DSN reaches, as pgx reads it: its hosts and
// fallbacks, with the environment's PGHOST and service files. A Unix
// socket is this machine: localhost. A DSN that does not parse names a
// host that is never allowed, so CheckHosts refuses it.
func pgHosts(dsn string) []string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return []string{"(postgres.dsn does not parse)"}
	}
	var hosts []string
	add := func(h string) {
		if strings.HasPrefix(h, "/") {
			h = "localhost"
		}
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	add(cfg.Host)
	for _, fb := range cfg.Fallbacks {
		add(fb.Host)
	}
	return hosts
}

// Duration is limits.max_duration, 0 when the file sets none.
func (l Limits) Duration() time.Duration {
	d, _ := time.ParseDuration(l.MaxDuration)
	return d
}

// Loopback says whether host is this machine: localhost or a loopback
// address. Names are not resolved: a name must be allowed explicitly.
func Loopback(host string) bool {
	if host == "localhost" {
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
