package targets

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/stores/postgres"
	"github.com/herdbench/herdbench/triggers"
)

// checker gathers a target file's problems, each at its file:line.
type checker struct {
	f    *File
	env  func(string) (string, bool)
	errs herd.FieldErrors
	// later: a variable that is not set is needed at run time (File.Needed),
	// for a dry run, rather than a problem
	later bool
}

// bad is a problem with the value at path; one the file left out is at
// the line of the nearest section above it.
func (c *checker) bad(path, format string, args ...any) {
	c.errs = append(c.errs, &herd.FieldError{File: c.f.doc.Name, Line: c.line(path), Field: path, Msg: fmt.Sprintf(format, args...)})
}

// line is the line of the value at path, or of the nearest section above
// it that the file has.
func (c *checker) line(path string) int {
	line := 0
	for p := path; line == 0 && p != ""; {
		if line = c.f.doc.Line(p); line > 0 {
			break
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return line
}

// check validates what decoded, and reads the secrets.
func (f *File) check(env func(string) (string, bool), later bool) herd.FieldErrors {
	c := &checker{f: f, env: env, later: later}
	c.endpoints()
	if len(f.Requests) == 0 {
		c.request()
	}
	c.keys()
	c.classes()
	c.headers("", f.Headers, nil)
	c.redis()
	c.postgres()
	c.mysql()
	c.memcached()
	c.toxiproxy()
	c.prometheus()
	c.haproxy()
	c.httpCache()
	c.arms()
	c.empties()
	c.limits()
	c.plan()
	c.statuses()
	return c.errs
}

// plan refuses a plan's key given with no value: it would silently be the
// default. The values are read as their flags read them, when the plan is
// applied.
func (c *checker) plan() {
	p := c.f.Plan
	if p == nil {
		return
	}
	for _, kv := range []struct{ key, v string }{{"rate", p.Rate}, {"warmup", p.Warmup}, {"before", p.Before}, {"after", p.After}, {"timeout", p.Timeout}} {
		if kv.v == "" && c.f.doc.Line("plan."+kv.key) > 0 {
			c.bad("plan."+kv.key, "empty (accepted: a value as --%s takes it; leave the key out for the default)", kv.key)
		}
	}
}

// statuses checks the statuses that mean shedding and those that count as
// failures: each a 4xx or 5xx, once; a failure status none of the shed
// statuses (theirs, or load's default), which are failures already.
func (c *checker) statuses() {
	shed := load.Shedding(c.f.ShedStatuses)
	for _, l := range []struct {
		key      string
		codes    []int
		top      int // the highest status accepted: a 5xx is a failure already
		accepted string
	}{{"shed_statuses", c.f.ShedStatuses, 599, "an HTTP status from 400 to 599, such as 429 or 503"},
		{"fail_statuses", c.f.FailStatuses, 499, "an HTTP status from 400 to 499, such as 404 or 410: a 5xx is a failure already"}} {
		seen := map[int]bool{}
		for i, code := range l.codes {
			path := fmt.Sprintf("%s[%d]", l.key, i)
			switch {
			case code < 400 || code > l.top:
				c.bad(path, "%d (accepted: %s)", code, l.accepted)
			case seen[code]:
				c.bad(path, "%d twice (accepted: each status once)", code)
			case l.key == "fail_statuses" && shed.Classify(code, "") == load.Shed:
				c.bad(path, "%d is a shed status, a failure already (accepted: a status shed_statuses, or its default 429 and 503, leaves out)", code)
			}
			seen[code] = true
		}
	}
}

// request checks the file's one request: what every class is checked
// for, and that it takes a key.
func (c *checker) request() {
	c.requestAt("request", &c.f.Request)
	if !c.f.Request.load().TakesKey() {
		c.bad("request", "{key} appears nowhere (accepted: {key} in request.path, a request.query value, a request.headers value or request.body)")
	}
}

func (c *checker) redis() {
	r := c.f.Redis
	if r == nil {
		return
	}
	if _, port, err := net.SplitHostPort(r.Address); err != nil {
		c.bad("redis.address", "%q is not host:port (accepted: such as 127.0.0.1:6379)", r.Address)
	} else if err := herd.CheckPort(port); err != nil {
		c.bad("redis.address", "%q: %v", r.Address, err)
	}
	if r.DB < 0 || r.DB > 15 {
		c.bad("redis.db", "%d (accepted: 0 to 15)", r.DB)
	}
	if r.Key != "" && !strings.Contains(r.Key, "{key}") {
		c.bad("redis.key", "%q has no {key} (accepted: the Redis key of a request's key, such as item:{key})", r.Key)
	}
	if r.Key != "" && r.Pattern == "" {
		c.bad("redis.pattern", "none (accepted: the only keys triggers may touch, such as item:*; required with redis.key)")
	}
	if r.Key != "" && r.Pattern != "" && strings.Contains(r.Key, "{key}") {
		key := strings.ReplaceAll(r.Key, "{key}", sampleKey(c.f.Keys))
		if !triggers.MatchPattern(r.Pattern, key) { // as the triggers will match it
			c.bad("redis.key", "%q makes keys such as %q, which pattern %q does not match: a trigger would touch none of them (accepted: a key inside redis.pattern, such as %s)",
				r.Key, key, r.Pattern, strings.ReplaceAll(r.Pattern, "*", "{key}"))
		}
	}
	if r.Password != "" && !onlyEnvRef(r.Password) {
		c.bad("redis.password", "a literal password (accepted: ${VAR}, read from the environment)")
	}
	r.Password = c.expand("redis.password", r.Password)
}

func (c *checker) postgres() {
	p := c.f.Postgres
	if p == nil {
		return
	}
	p.DSN = c.dsn(dsnForm{field: "postgres.dsn", literal: literalPassword, example: "${STAGING_PG_DSN}",
		parse: func(s string) error { _, err := postgres.Hosts(s); return err },
		form:  "a libpq DSN, URL or key=value, such as postgres://role@host:5432/db"}, p.DSN)
	if p.Role == "" {
		c.bad("postgres.role", "empty (accepted: the service's role, whose statements count and whose connections conndrop may reset)")
	}
	if len(p.QueryIDs) == 0 && p.Statements == "" {
		c.bad("postgres", "no statements to count (accepted: queryids, or statements: a regular expression on pg_stat_statements.query)")
	}
	if p.Statements != "" {
		if _, err := regexp.Compile(p.Statements); err != nil {
			c.bad("postgres.statements", "%v (accepted: a regular expression)", err)
		}
	}
}

// dsnForm is how a database's DSN is checked: where it is, how a password
// written in it shows, how it parses, and the words for what is accepted.
type dsnForm struct {
	field     string
	literal   func(string) bool // whether the DSN as written holds a password of its own
	parse     func(string) error
	example   string // such as ${STAGING_PG_DSN}
	form      string // what parses
	pwExample string // after "read from the environment": ", such as ..."; "" for none
}

// dsn checks a DSN: no password written in the file, its ${VAR}s read,
// not empty, and it parses; it returns the DSN with its variables read.
func (c *checker) dsn(f dsnForm, dsn string) string {
	if f.literal(dsn) {
		c.bad(f.field, "holds a password (accepted: ${VAR} for the DSN or its password, read from the environment%s)", f.pwExample)
	}
	before, needed := len(c.errs), len(c.f.Needed)
	dsn = c.expand(f.field, dsn)
	// a DSN missing a variable a dry run has yet to read is not checked
	expanded := len(c.errs) == before && len(c.f.Needed) == needed
	switch {
	case dsn == "" && expanded:
		c.bad(f.field, "empty (accepted: a DSN, such as %s)", f.example)
	case expanded:
		if err := f.parse(dsn); err != nil {
			c.bad(f.field, "does not parse (accepted: %s)", f.form)
		}
	}
	return dsn
}

func (c *checker) toxiproxy() {
	t := c.f.Toxiproxy
	if t == nil {
		return
	}
	if u, err := url.Parse(t.URL); err != nil || u.Scheme != "http" || u.Host == "" {
		c.bad("toxiproxy.url", "%q is not an http URL (accepted: toxiproxy's API, such as http://127.0.0.1:8474)", t.URL)
	}
	if len(t.Proxies) == 0 { // toxiproxy would have nothing to break
		c.bad("toxiproxy.proxies", "none: no trigger could break anything through it (accepted: each dependency whose connections go through toxiproxy, by its proxy's name, such as {postgres: pg, redis: cache}; or no toxiproxy:)")
	}
	roles := map[string]bool{}
	for dep := range t.Proxies {
		role, ok := proxyRoles[dep]
		if !ok {
			c.bad("toxiproxy.proxies."+dep, "unknown dependency %q (accepted: %s, or mysql, the database, and memcached, the cache)", dep, strings.Join(herd.Dependencies, ", "))
			continue
		}
		if roles[role] {
			c.bad("toxiproxy.proxies."+dep, "a second proxy for the %s (accepted: one of %s)", roleWord[role], strings.Join(roleNames(role), ", "))
		}
		roles[role] = true
	}
}

// proxyRoles maps a toxiproxy.proxies key to the dependency a trigger
// names: mysql is the database, as postgres is; memcached the cache, as
// redis is.
var proxyRoles = map[string]string{herd.Postgres: herd.Postgres, herd.Redis: herd.Redis, "mysql": herd.Postgres, "memcached": herd.Redis}

var roleWord = map[string]string{herd.Postgres: "database", herd.Redis: "cache"}

// roleNames are the keys that name role, sorted.
func roleNames(role string) []string {
	var out []string
	for k, r := range proxyRoles {
		if r == role {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func (c *checker) arms() {
	if len(c.f.Arms) == 0 && c.f.doc.Line("arms") > 0 { // arms: [] would run the one arm of a file without arms
		c.bad("arms", "empty (accepted: one arm or more, each with its name, such as [{name: baseline}]; or no arms: key, for one arm, baseline, the service as it is)")
	}
	seen := map[string]bool{}
	for i := range c.f.Arms {
		a := &c.f.Arms[i]
		p := fmt.Sprintf("arms[%d]", i)
		if a.Name == "" {
			c.bad(p, "an arm needs a name")
		}
		if seen[a.Name] {
			c.bad(p+".name", "%q twice (accepted: one arm per name)", a.Name)
		}
		seen[a.Name] = true
		a.Secret = c.headers(p, a.Headers, a.Secret)
	}
}

func (c *checker) limits() {
	l := c.f.Limits
	// 0 would silently mean no cap: leaving the key out says that
	switch {
	case l.MaxRate < 0 || (l.MaxRate == 0 && c.f.doc.Line("limits.max_rate") > 0):
		c.bad("limits.max_rate", "%d (accepted: 1 or more requests/s; no max_rate for no cap of the target's own)", l.MaxRate) // badinput_test.go holds this text
	case l.MaxRate > herd.MaxRate: // it could never bind
		c.bad("limits.max_rate", "%d is above herdbench's own cap of %d requests/s, so it caps nothing (accepted: 1 to %d; no max_rate for herdbench's cap alone)", l.MaxRate, herd.MaxRate, herd.MaxRate)
	}
	if d := l.MaxDuration; d != "" {
		if v, err := time.ParseDuration(d); err != nil || v <= 0 {
			c.bad("limits.max_duration", "%q (accepted: a duration such as 2m)", d)
		}
	}
	if d := l.MaxDrain; d != "" {
		if v, err := time.ParseDuration(d); err != nil || v <= 0 {
			c.bad("limits.max_drain", "%q (accepted: a duration such as 30s, no shorter than the clients' whole deadline; or leave the key out, for the longer of 15s and that deadline)", d)
		}
	}
}

// envRef is ${VAR} in a value.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${VAR} in the value at path from the environment; a
// variable that is not set is a problem, and leaves the value empty; or,
// for a dry run (c.later), it is needed at run time and reads as empty,
// the rest of the value kept (a DSN's host is still checked).
func (c *checker) expand(path, v string) string {
	var missing []string
	out := envRef.ReplaceAllStringFunc(v, func(ref string) string {
		name := envRef.FindStringSubmatch(ref)[1]
		val, ok := c.env(name)
		if !ok {
			missing = append(missing, name)
		}
		return val
	})
	switch {
	case len(missing) > 0 && c.later:
		for _, name := range missing {
			c.f.Needed = append(c.f.Needed, Needed{Var: name, Field: path, Line: c.line(path)})
		}
		return out
	case len(missing) > 0:
		c.bad(path, "environment variable %s is not set (accepted: export it before the run; secrets are read from the environment, never written to results)",
			strings.Join(missing, ", "))
		return ""
	}
	return out
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
