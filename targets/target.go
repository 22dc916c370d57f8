// Package targets provides what an experiment attacks and observes: its
// endpoints and how a key becomes a request, handles to the cache (Redis
// or Memcached) and the database (Postgres, or MySQL and MariaDB) behind
// it, and what herdbench may touch of them. Testbed opens
// the bundled testbed, which herdbench controls; ReadFile and FromFile
// describe a service it did not start, from a target file (strictly
// decoded, secrets from the environment); FromURL a bare base URL.
//
// Guarantees: nothing is contacted before Connect, so a dry run and the
// safety checks (CheckHosts) send nothing; a file target's Postgres and
// MySQL are opened read-only; triggers get only what the target declares.
package targets

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/stores/memcached"
	"github.com/herdbench/herdbench/stores/mysql"
	"github.com/herdbench/herdbench/stores/postgres"
	"github.com/herdbench/herdbench/stores/redis"
	"github.com/herdbench/herdbench/triggers"
)

// Kinds of target: a target file's and a URL's; a plug-in that describes
// a target names its own kind (the testbed's is "testbed").
const (
	KindFile = "file" // a service described by a target file
	KindURL  = "url"  // a bare base URL: HTTP only
)

// Target is a service under test with the handles an experiment needs.
// What a target does not declare is nil or empty, and what needs it says
// so (Caps).
type Target struct {
	Kind string
	Name string // the testbed, the target file, or the URL
	// Versions are its servers' versions (redis, postgres, ...), when
	// herdbench started it
	Versions map[string]string

	Endpoints []string     // base URLs the load goes to, round-robin
	Request   load.Request // how a key becomes a request: the herd's, with Classes
	// Classes are the target's traffic as classes of requests, one of
	// them the herd's (Request); none: Request is the whole traffic
	Classes []Class
	Header  http.Header // sent with every request; may hold secrets, never written
	Space   *KeySpace   // where keys come from; nil: the plan's Zipf over item ids

	Redis    *redis.Client // direct, for triggers and observers; nil: none
	RedisKey string        // the Redis key of a request's key: item:{key}
	Pattern  string        // the only Redis keys triggers may touch
	Channel  string        // broadcast invalidations

	DB         *postgres.DB // for observers, read-only but for conndrop; nil: none
	Statements observe.Statements
	Role       string

	// MySQL is a MySQL or MariaDB instead of Postgres: observed by digest,
	// read-only but for conndrop's KILL of its user's connections; nil: none
	MySQL *mysql.DB
	// Memcached is a Memcached instead of Redis, its stats read; its
	// items are touched through Caches; nil: none
	Memcached *memcached.Client

	// Toxiproxy controls the proxies between the service and its
	// dependencies; nil when the target has none.
	Toxiproxy *toxiclient.Client
	Proxies   map[string]string // dependency -> proxy name

	Prometheus *PrometheusSpec
	HAProxy    *HAProxySpec // a load balancer in front of the service; nil: none
	Arms       []ArmSpec    // how arms are selected on a service herdbench does not control
	Limits     Limits
	// ShedStatuses are the statuses the service sheds load with; empty:
	// load's default, 429 and 503
	ShedStatuses []int
	// FailStatuses are the 4xx the service's file counts as failures
	FailStatuses []int
	Abort        []string          // stop conditions the target file adds
	Hosts        map[string]string // every host the target touches -> where it is declared
	Allow        []string          // hosts besides loopback that may be touched

	// Grants is what herdbench controls of the target beyond what a file
	// declares, set by the kind that describes it (the testbed's); the
	// zero value on a target file or a URL
	Grants Grants

	file *File
}

// Grants is what a kind of subject lets herdbench do with its target
// beyond what a file declares, each read for what it allows, never as
// "is this the testbed".
type Grants struct {
	// Provider is where the target runs, when herdbench started it
	Provider string
	// ResetProxies: every toxic and closed proxy on its toxiproxy is
	// herdbench's, so a rollback resets them all
	ResetProxies bool
	// Restarter is how its parts restart; nil when they cannot
	Restarter triggers.Restarter
	// Caps is what it lets triggers do beyond what Caps reads of the
	// target (its parts, its stores' rights)
	Caps triggers.Caps
	// Observed is what herdbench may observe of it; nil: what its file
	// declares
	Observed *Observes
	// OwnedItems is the key of an item (item:{key}) in a Memcached
	// herdbench started, every item of which a trigger may touch and
	// flush; "" on any other target
	OwnedItems string
	// Likes is where a write herd's likes land and are counted; nil: the
	// target takes no write herd
	Likes triggers.LikesTable
}

// FromFile describes the target a target file declares, without
// connecting to anything: what a dry run shows, and what the safety
// checks read.
func FromFile(f *File) *Target {
	classes, herd := classesOf(f)
	t := &Target{Kind: KindFile, Name: f.doc.Name, Endpoints: f.Endpoints, Space: &f.Keys,
		Request: herd, Classes: classes,
		Header: http.Header{}, Prometheus: f.Prometheus, HAProxy: f.HAProxy, Arms: f.Arms, Limits: f.Limits, Abort: f.Abort, ShedStatuses: f.ShedStatuses, FailStatuses: f.FailStatuses,
		Hosts: f.Hosts(), Allow: f.Allow, file: f}
	for k, v := range f.Headers {
		t.Header.Set(k, v)
	}
	if r := f.Redis; r != nil {
		t.RedisKey, t.Pattern, t.Channel = r.Key, r.Pattern, r.Channel
	}
	if p := f.Postgres; p != nil {
		t.Statements = observe.Statements{QueryIDs: p.QueryIDs, Pattern: p.Statements}
		t.Role = p.Role
	}
	if tp := f.Toxiproxy; tp != nil {
		t.Proxies = map[string]string{}
		for dep, name := range tp.Proxies { // mysql is the database, memcached the cache
			t.Proxies[cmp.Or(proxyRoles[dep], dep)] = name
		}
	}
	return t
}

// FromURL describes a bare base URL as a target: HTTP only. A {key} in the
// URL places the key; without one every request asks for the URL itself.
// Credentials do not belong in it: a target file sends them as headers,
// from the environment.
func FromURL(raw string) (*Target, error) {
	u, err := url.Parse(raw)
	switch {
	case err == nil && u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("target %s: scheme %s not accepted (accepted: http:// or https://, such as http://127.0.0.1:8080/items/{key})", redactURL(raw), u.Scheme)
	case err != nil:
		var ue *url.Error
		why := err
		if errors.As(err, &ue) {
			why = ue.Err // the URL is named once, redacted
		}
		return nil, fmt.Errorf("target %q is not a URL: %v (accepted: testbed, a target file, or a base URL such as http://127.0.0.1:8080/items/{key})", redactURL(raw), why)
	case u.Host == "":
		return nil, fmt.Errorf("target %q is not a URL (accepted: testbed, a target file, or a base URL such as http://127.0.0.1:8080/items/{key})", redactURL(raw))
	}
	if err := herd.CheckPort(u.Port()); err != nil {
		return nil, fmt.Errorf("target %s: %w", redactURL(raw), err)
	}
	if u.User != nil {
		return nil, fmt.Errorf("target %s: credentials in the URL (accepted: a URL without them; a target file sends them as headers, from the environment)", redactURL(raw))
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		return nil, fmt.Errorf("target %s: a fragment, #%s, which a request never sends (accepted: a URL without one)", redactURL(raw), u.Fragment)
	}
	path := u.Path
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	name := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	return &Target{Kind: KindURL, Name: strings.ReplaceAll(name, "%7Bkey%7D", "{key}"), Endpoints: []string{u.Scheme + "://" + u.Host},
		Request: load.Request{Path: path}, Hosts: map[string]string{u.Hostname(): "--target"}}, nil
}

// userInfo is a URL's user information, as written.
var userInfo = regexp.MustCompile(`//[^/]*@`)

// redactURL keeps credentials and query values out of messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil { // as written, its user information and query left out
		raw, _, _ = strings.Cut(raw, "?")
		return userInfo.ReplaceAllString(raw, "//xxxxx@")
	}
	u.RawQuery = ""
	return strings.ReplaceAll(u.Redacted(), "%7Bkey%7D", "{key}")
}

// Connect opens the handles a file target declares and checks each
// answers. Call it after the safety checks: it is the first contact.
func (t *Target) Connect(ctx context.Context) error {
	f := t.file
	if f == nil {
		return nil
	}
	var err error
	if r := f.Redis; r != nil {
		if t.Redis, err = redis.Connect(ctx, r.Address, r.DB, r.Password); err != nil {
			t.Close()
			return fmt.Errorf("%s: redis %s: %w", f.doc.At("redis.address"), r.Address, err)
		}
	}
	if f.Postgres != nil { // herdbench only reads what the statistics views say
		if t.DB, err = postgres.Open(ctx, f.Postgres.DSN, 2, map[string]string{"default_transaction_read_only": "on", "application_name": "herdbench"}); err != nil {
			t.Close()
			return fmt.Errorf("%s: %v", f.doc.At("postgres.dsn"), redactDSN(errors.Unwrap(err))) // pgx's own words
		}
	}
	if f.MySQL != nil {
		if err := t.connectMySQL(ctx); err != nil {
			t.Close()
			return err
		}
	}
	if m := f.Memcached; m != nil {
		if err := t.OpenMemcached(ctx, m.Address); err != nil {
			t.Close()
			return fmt.Errorf("%s: %w", f.doc.At("memcached.address"), err)
		}
	}
	if err := t.checkBackends(ctx); err != nil {
		t.Close()
		return err
	}
	if tp := f.Toxiproxy; tp != nil {
		t.Toxiproxy = toxiclient.NewClient(tp.URL)
		for dep, name := range tp.Proxies {
			if _, err := t.Toxiproxy.Proxy(name); err != nil {
				t.Close()
				return fmt.Errorf("%s: toxiproxy proxy %q: %w", f.doc.At("toxiproxy.proxies."+dep), name, err)
			}
		}
	}
	return nil
}

// redactDSN keeps a connection error from carrying the DSN's password.
func redactDSN(err error) string {
	return regexp.MustCompile(`(password=)\S+|(://[^:/@]+:)[^@]+@`).ReplaceAllString(err.Error(), "${1}${2}<redacted>@")
}

// Line is where path (such as "abort[0]") is in the target's file, 0 when
// the target has no file or the file has no such path.
func (t *Target) Line(path string) int {
	if t.file == nil {
		return 0
	}
	return t.file.Line(path)
}

// File is the target file a file target was described from, nil for
// other kinds.
func (t *Target) File() *File { return t.file }

// Caps is what the target lets triggers do.
func (t *Target) Caps() triggers.Caps {
	c := t.Grants.Caps
	c.Endpoints, c.Restart, c.Writes = len(t.Endpoints) > 0, t.Grants.Restarter != nil, c.Writes || t.Grants.Likes != nil
	if t.Kind == KindFile {
		f := t.file
		c.Redis = f.Redis != nil
		c.RedisKeys = c.Redis && f.Redis.Key != "" && f.Redis.Pattern != ""
		c.Pattern = c.Redis && f.Redis.Pattern != ""
		c.Channel = c.Redis && f.Redis.Channel != ""
		c.Role = f.Postgres != nil && f.Postgres.Role != ""
		c.Pause = c.Redis && f.Redis.AllowPause
		if h := f.HTTPCache; h != nil {
			c.HTTPPurge = h.Purge != nil
			c.HTTPFlush = h.Flush != nil
		}
		if m := f.Memcached; m != nil {
			c.Memcached, c.MemcachedKeys, c.FlushAll = true, m.Key != "", m.AllowFlushAll
		}
		c.MySQLUser = f.MySQL != nil && f.MySQL.User != ""
		c.At = t.declared
	}
	for dep := range t.Proxies {
		c.Proxies = append(c.Proxies, dep)
	}
	slices.Sort(c.Proxies)
	return c
}

// KeyOf is the Redis key of a request's key.
func (t *Target) KeyOf(key string) string { return strings.ReplaceAll(t.RedisKey, "{key}", key) }

// Hot is the n hottest keys of the target's key space: the lowest of a
// range, the first of a list or file. Without a key space they are the
// item ids 1..n.
func (t *Target) Hot(n int) []string {
	s := t.Space
	switch {
	case s == nil:
		return numbered(1, n)
	case s.Hot > 0:
		n = s.Hot
	}
	switch {
	case len(s.List) > 0:
		return slices.Clone(s.List[:min(n, len(s.List))])
	case s.Range != nil:
		return numbered(s.Range.From, int(min(int64(n), s.Range.To-s.Range.From+1)))
	case s.Zipf != nil:
		return numbered(s.Zipf.From, int(min(int64(n), s.Zipf.To-s.Zipf.From+1)))
	}
	return nil
}

func numbered(from int64, n int) []string {
	out := make([]string, max(n, 0))
	for i := range out {
		out[i] = strconv.FormatInt(from+int64(i), 10)
	}
	return out
}

// Source is where the load draws keys from, seeded; nil for the plan's
// Zipf over item ids.
func (t *Target) Source(seed uint64) load.KeySource { return t.Space.Source(seed) }

// Source is where the load draws keys from, seeded; nil for a nil space.
func (s *KeySpace) Source(seed uint64) load.KeySource {
	switch {
	case s == nil:
		return nil
	case len(s.List) > 0:
		return load.NewListKeys(s.List, seed)
	case s.Range != nil:
		return load.NewRangeKeys(s.Range.From, s.Range.To, seed)
	case s.Zipf != nil:
		return load.NewZipfKeys(s.Zipf.From, s.Zipf.To, s.Zipf.S, seed)
	}
	return nil
}

// NewRequest builds the service's request for key on base, with the
// target's headers, as the load sends it.
func (t *Target) NewRequest(ctx context.Context, base, key string) (*http.Request, error) {
	return t.Request.New(ctx, base, key, t.Header, nil)
}

// AddHost notes the host of the base URL raw as one the target touches,
// for where (the safety checks and a dry run name it): a plug-in that
// describes a target adds its own.
func (t *Target) AddHost(raw, where string) {
	if t.Hosts == nil {
		t.Hosts = map[string]string{}
	}
	t.Hosts[hostOf(raw)] = where
}

// hostOf is the host raw names. A URL whose port is a placeholder (the
// testbed a dry run would start: http://127.0.0.1:PORT1) does not parse,
// but its host is still the one it names.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err == nil {
		return u.Hostname()
	}
	_, rest, _ := strings.Cut(raw, "://")
	authority, _, _ := strings.Cut(rest, "/")
	if h, _, err := net.SplitHostPort(authority); err == nil {
		return h
	}
	return ""
}

// Close releases the handles.
func (t *Target) Close() {
	if t.DB != nil {
		t.DB.Close()
	}
	if t.MySQL != nil {
		t.MySQL.DB.Close()
		t.MySQL = nil
	}
	if t.Memcached != nil {
		t.Memcached.Close()
		t.Memcached = nil
	}
	if t.Redis != nil {
		_ = t.Redis.Close()
	}
}
