package targets

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const stagingYAML = `name: staging
endpoints: [http://10.0.0.5:8080, "http://api.staging.internal:8080"]
allow: [10.0.0.5]
request:
  path: /items/{key}
  headers: {X-Item: "{key}", X-Client: "${HB_CLIENT}"}
keys:
  zipf: {from: 1, to: 100000, s: 1.1}
  hot: 100
headers:
  Authorization: Bearer ${HB_TOKEN}
redis:
  address: 10.0.0.7:6379
  key: "item:{key}"
  pattern: "item:*"
postgres:
  dsn: ${HB_PG_DSN}
  role: app
  statements: "FROM items"
arms:
  - name: none
  - name: lock
    headers: {X-Cache-Mode: lock}
    before: ["./flags set lock on"]
    after: ["./flags set lock off"]
limits: {max_rate: 200, max_duration: 1m}
abort: ["http.drop_rate > 50%"]
`

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestParseFile(t *testing.T) {
	f, err := ParseFile([]byte(stagingYAML), "staging.yaml", env(map[string]string{"HB_TOKEN": "s3cret", "HB_PG_DSN": "postgres://app@10.0.0.8/db", "HB_CLIENT": "herd"}))
	if err != nil {
		t.Fatalf("ParseFile = %v; want nil", err)
	}
	tg := FromFile(f)
	if got := tg.Header.Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("Authorization = %q; want the secret read from the environment", got)
	}
	// the request's own headers read the environment too (they were sent
	// as written, ${HB_CLIENT} and all)
	if got := tg.Request.Headers["X-Client"]; got != "herd" {
		t.Errorf("request.headers.X-Client = %q; want herd, read from the environment", got)
	}
	if tg.KeyOf("42") != "item:42" || tg.Pattern != "item:*" || tg.Role != "app" || tg.Statements.Pattern != "FROM items" {
		t.Errorf("target = key %q, pattern %q, role %q, statements %+v", tg.KeyOf("42"), tg.Pattern, tg.Role, tg.Statements)
	}
	if hot := tg.Hot(5); len(hot) != 100 || hot[0] != "1" || hot[99] != "100" {
		t.Errorf("Hot = %d keys from %v; want keys.hot's 100, from 1", len(hot), hot[:min(3, len(hot))])
	}
	c := tg.Caps()
	if !c.Redis || !c.RedisKeys || !c.Role || c.Restart || len(c.Proxies) != 0 || c.Channel {
		t.Errorf("Caps = %+v; want redis, its keys and a role, nothing else", c)
	}
	// loopback and the allowed host pass; the other is named, with its place
	err = tg.CheckHosts(nil)
	if err == nil || !strings.Contains(err.Error(), "staging.yaml:2: endpoints[1]: host api.staging.internal is not loopback and not allowed") ||
		!strings.Contains(err.Error(), "--allow-host api.staging.internal") || strings.Contains(err.Error(), "10.0.0.5") {
		t.Errorf("CheckHosts = %v; want only api.staging.internal refused, at its line, with how to allow it", err)
	}
	if err := tg.CheckHosts([]string{"api.staging.internal", "10.0.0.7", "10.0.0.8"}); err != nil {
		t.Errorf("CheckHosts with every host allowed = %v; want nil", err)
	}
}

func TestParseFileReportsEveryProblem(t *testing.T) {
	bad := `endpoints: [ftp://x, "http://127.0.0.1:1"]
request: {method: FETCH, path: items, headers: {X-Empty: "", "X Bad": v}}
keys: {range: {from: 5, to: 1}, list: [a]}
headers: {Authorization: "Bearer ${NOPE}"}
redis: {address: nohost, key: "item:"}
postgres: {dsn: "postgres://app:hunter2@127.0.0.1/db", role: ""}
arms: [{name: a}, {name: a}]
limits: {max_duration: soon}
colour: red
`
	_, err := ParseFile([]byte(bad), "bad.yaml", env(nil))
	if err == nil {
		t.Fatal("ParseFile of a file full of problems = nil")
	}
	for _, want := range []string{
		`bad.yaml:9: colour: unknown key "colour" (accepted: abort, allow, arms, endpoints,`,
		`bad.yaml:1: endpoints[0]: "ftp://x" is not a base URL`,
		`bad.yaml:2: request.method: "FETCH" (accepted: GET, HEAD, POST, PUT, PATCH, DELETE)`,
		`bad.yaml:2: request.path: "items" does not start with /`,
		`bad.yaml:2: request.headers.X-Empty: empty (accepted: a value, or ${VAR} from the environment; or leave the header out to send none)`,
		`bad.yaml:2: request.headers.X Bad: "X Bad" is not a header name`,
		`request: {key} appears nowhere`,
		`bad.yaml:3: keys: 2 sources of keys (accepted: exactly one of list, file, range, zipf)`,
		`bad.yaml:4: headers.Authorization: environment variable NOPE is not set`,
		`bad.yaml:5: redis.address: "nohost" is not host:port`,
		`bad.yaml:5: redis.key: "item:" has no {key}`,
		`bad.yaml:6: postgres.dsn: holds a password (accepted: ${VAR}`,
		`bad.yaml:6: postgres.role: empty`,
		`postgres: no statements to count`,
		`bad.yaml:7: arms[1].name: "a" twice`,
		`bad.yaml:8: limits.max_duration: "soon"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFile error lacks\n  %s\nin\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("ParseFile error shows the DSN's password:\n%v", err)
	}
}

// The Postgres hosts a DSN reaches are every host pgx would try: its own,
// its fallbacks, PGHOST from the environment, and a host given as a query
// parameter or with spaces around '='.
func TestPostgresHostsAreTheOnesPgxUses(t *testing.T) {
	t.Setenv("PGHOST", "db.env")
	for _, tt := range []struct {
		dsn  string
		want string // the host CheckHosts must refuse
	}{
		{"postgres://app@127.0.0.1/db?host=db.prod", "db.prod"},
		{"host = db.prod dbname=app", "db.prod"},
		{"dbname=app", "db.env"},
		{"postgres://app@127.0.0.1,db.standby:5432/db", "db.standby"},
		{"postgres://app@%zz", "(postgres.dsn does not parse)"},
	} {
		y := "endpoints: [http://127.0.0.1:1]\nrequest: {path: \"/{key}\"}\nkeys: {list: [a]}\npostgres: {dsn: \"${DSN}\", role: app, statements: x}\n"
		f, _ := ParseFile([]byte(y), "t.yaml", env(map[string]string{"DSN": tt.dsn}))
		if f == nil {
			t.Fatalf("ParseFile with dsn %q = nil", tt.dsn)
		}
		err := FromFile(f).CheckHosts(nil)
		if err == nil || !strings.Contains(err.Error(), "host "+tt.want+" is not loopback") {
			t.Errorf("dsn %q: CheckHosts = %v; want %s refused", tt.dsn, err, tt.want)
		}
	}
	// a Unix socket is this machine
	y := "endpoints: [http://127.0.0.1:1]\nrequest: {path: \"/{key}\"}\nkeys: {list: [a]}\npostgres: {dsn: \"${DSN}\", role: app, statements: x}\n"
	f, err := ParseFile([]byte(y), "t.yaml", env(map[string]string{"DSN": "host=/var/run/postgresql dbname=app"}))
	if err != nil || FromFile(f).CheckHosts(nil) != nil {
		t.Errorf("a Unix socket DSN: %v, %v; want it allowed as this machine", err, FromFile(f).CheckHosts(nil))
	}
}

func TestLiteralPasswordsAreRefused(t *testing.T) {
	for _, tt := range []struct {
		dsn     string
		literal bool
	}{
		{"${DSN}", false},
		{"postgres://app:${PW}@h/db", false},
		{"postgres://app:pw@h/${DB}", true},
		{"host=h password=${PW}", false},
		{"host=h password=pw dbname=${DB}", true},
		{"postgres://app@h/db", false},
	} {
		if got := literalPassword(tt.dsn); got != tt.literal {
			t.Errorf("literalPassword(%q) = %v; want %v", tt.dsn, got, tt.literal)
		}
	}
}

func TestKeysFromAFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keys.txt"), []byte("# hottest first\nalpha\nbeta\n\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "t.yaml")
	y := "endpoints: [http://127.0.0.1:1]\nrequest: {path: \"/k/{key}\"}\nkeys: {file: keys.txt, hot: 2}\n"
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tg := FromFile(f)
	if hot := strings.Join(tg.Hot(10), ","); hot != "alpha,beta" || f.Keys.Size() != 3 {
		t.Errorf("keys from the file: hot %s, size %d; want alpha,beta of 3 (the file next to the target file)", hot, f.Keys.Size())
	}
}

func TestFromURL(t *testing.T) {
	tg, err := FromURL("http://127.0.0.1:8080/items/{key}?v=1")
	if err != nil || tg.Endpoints[0] != "http://127.0.0.1:8080" || tg.Request.Path != "/items/{key}?v=1" || tg.CheckHosts(nil) != nil {
		t.Errorf("FromURL = %+v, %v; want the base and the path, loopback allowed", tg, err)
	}
	if _, err := FromURL("ftp://x"); err == nil || !strings.Contains(err.Error(), "scheme ftp not accepted (accepted: http:// or https://") {
		t.Errorf("FromURL(ftp) = %v; want the scheme and the accepted ones", err)
	}
	if _, err := FromURL("http://127.0.0.1:99999/x"); err == nil || !strings.Contains(err.Error(), "port 99999 out of range (accepted: 1 to 65535)") {
		t.Errorf("FromURL(port 99999) = %v; want the port out of range", err)
	}
	if _, err := FromURL("http://user:pw@127.0.0.1:8080/x?api_key=s3cret"); err == nil || strings.Contains(err.Error(), "pw") ||
		strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "credentials in the URL") {
		t.Errorf("FromURL with credentials = %v; want them refused, and not repeated", err)
	}
	if c := tg.Caps(); c.Redis || !c.Endpoints {
		t.Errorf("a URL's caps = %+v; want endpoints only", c)
	}
}

func FuzzParseFile(f *testing.F) {
	f.Add([]byte(stagingYAML))
	f.Add([]byte("endpoints: [http://127.0.0.1:1]\nrequest: {path: \"/{key}\"}\nkeys: {list: [a]}\n"))
	f.Add([]byte("keys: {zipf: {from: 1, to: 0, s: 0}}"))
	f.Add([]byte("headers: {A: ${X}${Y}}"))
	f.Add([]byte(storesYAML))
	f.Add([]byte("mysql: {dsn: \"a:${X}@tcp(h:1)/d\", user: u, digests: [0123456789abcdef0123456789abcdef]}\nmemcached: {address: \"h:1\", key: \"{key}\"}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := ParseFile(b, "f.yaml", env(map[string]string{"X": "x"}))
		if err != nil && !strings.HasPrefix(err.Error(), "f.yaml") {
			t.Fatalf("ParseFile error %q does not name the file", err)
		}
		if file == nil || err != nil {
			return
		}
		// a file that checks out describes a target without panicking,
		// and draws keys
		tg := FromFile(file)
		_ = tg.Caps()
		_ = tg.Caches()
		_ = tg.Conns()
		_ = tg.Hot(10)
		_ = tg.CheckHosts(nil)
		if src := tg.Source(1); src != nil {
			_ = src.Key()
		}
		if len(tg.Endpoints) == 0 {
			t.Fatal("a valid target file without endpoints")
		}
	})
}

// An http_cache section: the purge request each arm's invalidations use,
// the flush, the hosts it adds, and every problem at its line.
func TestHTTPCacheSection(t *testing.T) {
	good := `endpoints: ["http://127.0.0.1:8080"]
request: {path: "/items/{key}"}
keys: {list: ["1", "2"]}
http_cache:
  urls: ["http://10.0.0.9:6081"]
  purge: {method: PURGE, path: "/items/{key}", headers: {X-Purge-Token: "${HB_PURGE}"}}
  flush: {method: BAN, path: /, headers: {X-Ban-Url: "^/items/"}}
`
	f, err := ParseFile([]byte(good), "cache.yaml", env(map[string]string{"HB_PURGE": "tok"}))
	if err != nil {
		t.Fatalf("ParseFile = %v; want nil", err)
	}
	tg := FromFile(f)
	c := tg.httpCache()
	if c == nil || c.Purge.Headers["X-Purge-Token"] != "tok" || c.FlushRequest == nil || c.FlushRequest.Method != "BAN" || c.URLs[0] != "http://10.0.0.9:6081" {
		t.Fatalf("HTTPCache = %+v; want the purge with its secret read, the BAN flush, the cache's URL", c)
	}
	if caps := tg.Caps(); !caps.HTTPPurge || !caps.HTTPFlush || caps.Redis {
		t.Errorf("Caps = %+v; want an HTTP cache's purge and flush, no Redis", caps)
	}
	if err := tg.CheckHosts(nil); err == nil || !strings.Contains(err.Error(), "cache.yaml:5: http_cache.urls[0]: host 10.0.0.9 is not loopback and not allowed") {
		t.Errorf("CheckHosts = %v; want the cache's host refused at its line", err)
	}

	bad := `endpoints: ["http://127.0.0.1:8080"]
request: {path: "/items/{key}"}
keys: {list: ["1"]}
http_cache:
  urls: ["ftp://cache"]
  purge: {method: "PUR GE", path: "items/all", headers: {"X Bad": "v"}}
  flush: {method: BAN, path: "/{key}", run: "varnishadm ban req.url '~' ."}
`
	_, err = ParseFile([]byte(bad), "bad.yaml", env(nil))
	for _, want := range []string{
		`bad.yaml:5: http_cache.urls[0]: "ftp://cache" is not a base URL`,
		`bad.yaml:6: http_cache.purge.method: "PUR GE" is not a method (accepted: an HTTP method token, such as PURGE, BAN or DELETE)`,
		`bad.yaml:6: http_cache.purge.path: "items/all" does not start with /`,
		`http_cache.purge: no key template: {key} appears nowhere (accepted: {key} in http_cache.purge.path or a http_cache.purge.headers value)`,
		`http_cache.purge.headers.X Bad: "X Bad" is not a header name`,
		`bad.yaml:7: http_cache.flush: both a request and run (accepted: one of them`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFile(bad) = %v\nwant it to hold %q", err, want)
		}
	}
	_, err = ParseFile([]byte("endpoints: [\"http://127.0.0.1:8080\"]\nrequest: {path: \"/items/{key}\"}\nkeys: {list: [\"1\"]}\nhttp_cache: {flush: {run: \"true\"}}\n"), "nopurge.yaml", env(nil))
	if err == nil || !strings.Contains(err.Error(), "nopurge.yaml:4: http_cache: no purge (accepted: http_cache.purge, the request that invalidates one key") {
		t.Errorf("ParseFile(no purge) = %v; want the missing purge named", err)
	}
}

// shed_statuses says which statuses mean the service shed the load: each
// a 4xx or 5xx, once, refused at its line otherwise; the target carries
// them to the load.
func TestShedStatuses(t *testing.T) {
	const base = "endpoints: [http://127.0.0.1:1]\nrequest: {path: \"/{key}\"}\nkeys: {list: [a]}\n"
	f, err := ParseFile([]byte(base+"shed_statuses: [429]\n"), "t.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := FromFile(f).ShedStatuses; len(got) != 1 || got[0] != 429 {
		t.Errorf("ShedStatuses = %v; want [429]", got)
	}
	_, err = ParseFile([]byte(base+"shed_statuses: [503, 200, 503]\n"), "t.yaml", env(nil))
	for _, want := range []string{
		"t.yaml:4: shed_statuses[1]: 200 (accepted: an HTTP status from 400 to 599",
		"t.yaml:4: shed_statuses[2]: 503 twice",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFile error lacks\n  %s\nin\n%v", want, err)
		}
	}
}

// For a dry run, a ${VAR} that is not set is needed at run time, at its
// field and line, and reads as empty, the rest of its value kept, without
// a problem; the run's read of the same file refuses it.
func TestADryRunNeedsTheVariablesLater(t *testing.T) {
	y := "name: s\nendpoints: [\"http://127.0.0.1:8080\"]\nrequest: {path: \"/items/{key}\"}\nkeys: {range: {from: 1, to: 10}}\nheaders: {Authorization: \"Bearer ${HB_T}\"}\npostgres: {dsn: \"${HB_DSN}\", role: app, statements: items}\n"
	none := func(string) (string, bool) { return "", false }
	f, err := parseFile([]byte(y), "t.yaml", none, true)
	if err != nil {
		t.Fatalf("dry run's read: %v; want no problem", err)
	}
	want := []Needed{{Var: "HB_T", Field: "headers.Authorization", Line: 5}, {Var: "HB_DSN", Field: "postgres.dsn", Line: 6}}
	if !slices.Equal(f.Needed, want) || f.Headers["Authorization"] != "Bearer " || len(f.Hosts()) != 1 {
		t.Errorf("needed %v, header %q, hosts %v; want %v, the header without its variable, the endpoint's host only", f.Needed, f.Headers["Authorization"], f.Hosts(), want)
	}
	// a DSN short of its password keeps its host, which is still checked
	partial := strings.Replace(y, `${HB_DSN}`, `postgres://app:${HB_PW}@db.example.com/x`, 1)
	if f, err := parseFile([]byte(partial), "t.yaml", none, true); err != nil || f.Hosts()["db.example.com"] != "postgres.dsn" {
		t.Errorf("a DSN short of its password: %v, hosts %v; want its host kept, from postgres.dsn", err, f.Hosts())
	}
	if _, err := ParseFile([]byte(y), "t.yaml", none); err == nil || !strings.Contains(err.Error(), "t.yaml:5: headers.Authorization: environment variable HB_T is not set") {
		t.Errorf("the run's read: %v; want the variable refused at its line", err)
	}
}

// fail_statuses says which 4xx count as failures: each a 4xx (a 5xx is a failure already), once,
// and none a shed status (a failure already), refused at its line
// otherwise; the target carries them to the load.
func TestFailStatuses(t *testing.T) {
	const base = "endpoints: [http://127.0.0.1:1]\nrequest: {path: \"/{key}\"}\nkeys: {list: [a]}\n"
	f, err := ParseFile([]byte(base+"fail_statuses: [404, 410]\n"), "t.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := FromFile(f).FailStatuses; len(got) != 2 || got[0] != 404 || got[1] != 410 {
		t.Errorf("FailStatuses = %v; want [404 410]", got)
	}
	_, err = ParseFile([]byte(base+"fail_statuses: [404, 302, 404, 429, 500]\n"), "t.yaml", env(nil))
	for _, want := range []string{
		"t.yaml:4: fail_statuses[1]: 302 (accepted: an HTTP status from 400 to 499, such as 404 or 410: a 5xx is a failure already)",
		"t.yaml:4: fail_statuses[2]: 404 twice",
		"t.yaml:4: fail_statuses[3]: 429 is a shed status",
		"t.yaml:4: fail_statuses[4]: 500 (accepted: an HTTP status from 400 to 499, such as 404 or 410: a 5xx is a failure already)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFile error lacks\n  %s\nin\n%v", want, err)
		}
	}
	if _, err := ParseFile([]byte(base+"shed_statuses: [503]\nfail_statuses: [429]\n"), "t.yaml", env(nil)); err != nil {
		t.Errorf("fail_statuses: [429] beside shed_statuses: [503] = %v; want it taken: 429 is no shed status there", err)
	}
}
