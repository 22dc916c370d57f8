package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/targets"
)

// initOptions are what herdbench init writes a starter target file from.
type initOptions struct {
	URL, Redis, Postgres, MySQL, File string
	Force                             bool
}

func newInitCmd(stdout io.Writer) *cobra.Command {
	var o initOptions
	c := &cobra.Command{
		Use:   "init",
		Short: "Write a commented starter target file for your service, whose dry run passes",
		Long: `Write a starter target file (docs/targets.md) for a service herdbench did not
start: its endpoint and request from --url, and, when given, its Redis, its
Postgres or its MySQL, each with the fields to fill in commented. The file's
dry run passes as written; edit it, then:

  herdbench stampede --target FILE --dry-run`,
		Example: `  herdbench init --url 'http://127.0.0.1:8080/products/{key}'
  herdbench init --url 'http://staging.internal:8080/items/{key}' --redis 10.0.0.7:6379 \
    --postgres 10.0.0.8:5432 --file staging.yaml`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return runInit(stdout, o) },
	}
	fs := c.Flags()
	fs.StringVar(&o.URL, "url", "", "the service's request for one key, `URL` with {key}, such as http://127.0.0.1:8080/items/{key}")
	fs.StringVar(&o.Redis, "redis", "", "the service's Redis, `HOST:PORT` (the expire, ttl and flush triggers need it)")
	fs.StringVar(&o.Postgres, "postgres", "", "the service's Postgres, `HOST:PORT` (its DSN is read from SERVICE_PG_DSN at run time)")
	fs.StringVar(&o.MySQL, "mysql", "", "or its MySQL or MariaDB, `HOST:PORT` (its DSN from SERVICE_MYSQL_DSN at run time)")
	fs.StringVar(&o.File, "file", "herdbench-target.yaml", "where to write the target file")
	fs.BoolVar(&o.Force, "force", false, "overwrite the file if it exists")
	return c
}

// starter is what the template writes.
type starter struct {
	Name, Endpoint, Path   string
	Query                  map[string]string
	Allow                  string // the hosts named that are not loopback, comma-separated
	Redis, Postgres, MySQL string
}

func runInit(stdout io.Writer, o initOptions) error {
	s, bad := o.starter()
	if len(bad) > 0 {
		return usageError{bad}
	}
	if msg := notAFile(o.File); msg != "" { // --force would not help
		return usageErrorf("--file: %s (accepted: a file's path, such as herdbench-target.yaml)", msg)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if o.Force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(o.File, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return usageErrorf("--file: %s exists (accepted: a new file, or --force to overwrite it)", o.File)
	}
	if err != nil { // a directory that cannot be written: the user's to pick another
		return usageErrorf("--file: %v (accepted: a new file in a directory you may write, such as herdbench-target.yaml)", err)
	}
	if err := starterTemplate.Execute(f, s); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s\nnext: herdbench stampede --target %s --dry-run\n", o.File, o.File)
	return err
}

// starter checks o and works out the file's values.
func (o initOptions) starter() (starter, herd.FieldErrors) {
	var bad herd.FieldErrors
	u, err := url.Parse(o.URL)
	_, ferr := targets.FromURL(o.URL) // as --target reads a URL: its scheme, port and no credentials
	switch {
	case o.URL == "":
		bad.Add("url", "none (accepted: the service's request for one key, such as http://127.0.0.1:8080/items/{key})")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		bad.Add("url", "%q (accepted: http:// or https:// with a host, such as http://127.0.0.1:8080/items/{key})", o.URL)
	case ferr != nil:
		bad.Add("url", "%v", ferr)
	case !strings.Contains(u.Path, "{key}") && !strings.Contains(u.RawQuery, "{key}"):
		bad.Add("url", "%q has no {key} (accepted: the key's place in the path or query, such as http://127.0.0.1:8080/items/{key})", o.URL)
	}
	for k, vs := range u.Query() {
		if err == nil && len(vs) > 1 { // the file's query holds one value a name
			bad.Add("url", "query %s given %d times (accepted: each name once)", k, len(vs))
		}
	}
	for _, hp := range []struct{ flag, v, such string }{{"redis", o.Redis, "127.0.0.1:6379"}, {"postgres", o.Postgres, "127.0.0.1:5432"}, {"mysql", o.MySQL, "127.0.0.1:3306"}} {
		_, port, err := net.SplitHostPort(hp.v)
		switch n, perr := strconv.Atoi(port); {
		case hp.v == "":
		case err != nil:
			bad.Add(hp.flag, "%q is not host:port (accepted: such as %s)", hp.v, hp.such)
		case perr != nil || n < 1 || n > 65535:
			bad.Add(hp.flag, "%q: port %s out of range (accepted: host:port, port 1 to 65535, such as %s)", hp.v, port, hp.such)
		}
	}
	if o.Postgres != "" && o.MySQL != "" {
		bad.Add("mysql", "beside --postgres (accepted: one database, --postgres or --mysql)")
	}
	if dir := filepath.Dir(o.File); o.File == "" {
		bad.Add("file", "empty (accepted: a file name, such as herdbench-target.yaml)")
	} else if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		bad.Add("file", "%s: no directory %s (accepted: a file in a directory that exists, such as herdbench-target.yaml)", o.File, dir)
	}
	if len(bad) > 0 {
		return starter{}, bad
	}
	path := strings.ReplaceAll(u.EscapedPath(), "%7Bkey%7D", "{key}")
	query := map[string]string{}
	for k, vs := range u.Query() {
		query[k] = vs[0]
	}
	var allow []string
	for _, h := range []string{u.Host, o.Redis, o.Postgres, o.MySQL} {
		if host, _, err := net.SplitHostPort(h); err == nil {
			h = host
		}
		if h != "" && !targets.Loopback(h) && !slices.Contains(allow, h) {
			allow = append(allow, h)
		}
	}
	return starter{Name: u.Hostname(), Endpoint: u.Scheme + "://" + u.Host, Path: path, Query: query, Allow: strings.Join(allow, ", "),
		Redis: o.Redis, Postgres: o.Postgres, MySQL: o.MySQL}, nil
}

var starterTemplate = template.Must(template.New("starter").Parse(`# A target file for herdbench (docs/targets.md): the service under test, what
# herdbench may touch of it, and the plan it is tested with. Written by
# herdbench init; its dry run passes as written:
#
#   herdbench stampede --target THIS_FILE --dry-run
#
name: {{.Name}}

# base URLs the load goes to, round-robin
endpoints:
  - {{.Endpoint}}
{{- if .Allow}}

# hosts besides loopback herdbench may touch: every one this file names
allow: [{{.Allow}}]
{{- end}}

# how a key becomes a request; {{"{"}}key{{"}"}} may also be in a query or header value,
# or a body (method: POST, body: '{"id": "{key}"}')
request:
  path: "{{.Path}}"
{{- if .Query}}
  query:
{{- range $k, $v := .Query}}
    {{printf "%q" $k}}: {{printf "%q" $v}}
{{- end}}
{{- end}}

# your traffic as classes instead of one request, each reported on its own
# (the herd's blast radius on the rest): docs/targets.md
# requests:
#   - {name: product, weight: 6, path: "/products/{key}"}
#   - {name: checkout, weight: 1, method: POST, path: /checkout, body_file: cart.json}

# where keys come from; the hot keys are warmed before each arm and hit by
# the trigger
keys:
  zipf: {from: 1, to: 10000, s: 1.1}
  hot: 100

# sent with every request; secrets come from the environment, never written
# headers:
#   Authorization: "Bearer ${SERVICE_TOKEN}"
{{- if .Redis}}

# the service's Redis: the hot keys' Redis keys, and the only keys a trigger
# may touch
redis:
  address: {{.Redis}}
  key: "item:{key}"
  pattern: "item:*"
{{- end}}
{{- if .Postgres}}

# the service's Postgres, read-only: the statements that count as DB queries
# export SERVICE_PG_DSN=postgres://USER@{{.Postgres}}/DB before the run
postgres:
  dsn: "${SERVICE_PG_DSN}"
  role: app                    # the service's role
  statements: "FROM items"     # a regular expression on the statement text
{{- end}}
{{- if .MySQL}}

# the service's MySQL or MariaDB, read-only: the statements that count
# export SERVICE_MYSQL_DSN='USER:${SERVICE_MYSQL_PASSWORD}@tcp({{.MySQL}})/DB' before the run
mysql:
  dsn: "${SERVICE_MYSQL_DSN}"
  user: app                    # the service's user
  statements: "FROM items"     # a regular expression on the digest text
{{- end}}

# how the herd is provoked at T{{if not .Redis}}: with a Redis, expire (its hot keys
# invalidated); without, a burst of clients released at once{{end}}
trigger:
  name: {{if .Redis}}expire{{else}}burst
  burst: 100                   # clients released at once{{end}}

# the arms compared: each is what your service honours, a header, a query
# value or a hook
arms:
  - name: baseline
  # - name: collapsed
  #   headers: {X-Cache-Mode: collapse}

# the plan for this service, under a scenario file and flags
plan:
  rate: 100
  before: 5s
  after: 10s

# caps a run may not exceed
limits:
  max_rate: 500
  max_duration: 2m
`))
