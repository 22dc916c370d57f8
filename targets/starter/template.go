package starter

import "text/template"

// tmpl writes a starter target file. Its placeholders (a
// user, a statement filter, a cache key) pass the dry run and stop the
// run before T when they match nothing (docs/targets.md, "Nothing read is
// a refusal").
var tmpl = template.Must(template.New("starter").Parse(`# A target file for herdbench (docs/targets.md): the service under test, what
# herdbench may touch of it, and the plan it is tested with. Written by
# herdbench init; its dry run passes as written:
#
#   herdbench stampede --target THIS_FILE --dry-run
#
# A placeholder left below (a user, a statement filter, a cache key) stops
# the run before T if it reads nothing, naming the field.
name: {{printf "%q" .Name}}

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

# where keys come from: {{.Keys.From}}.
{{- if .Keys.Invented}}
# Replace them with keys your service has: a key it does not have answers
# 4xx, which herdbench counts apart (http.status_4xx), not as the herd's.
# herdbench init --probe keeps those of 1 to 100 (or of --keys, --keys-file)
# that answer 2xx.
{{- end}}
# The hot keys (the first keys.hot) are warmed before each arm and hit by
# the trigger.
keys:
{{- if .Keys.List}}
  list:
{{- range .Keys.List}}
    - {{$.Keys.Quote .}}
{{- end}}
{{- else if .Keys.File}}
  file: {{.Keys.Quote .Keys.File}}
{{- else}}
  zipf: {from: 1, to: 10000, s: 1.1}
{{- end}}
  hot: {{.Keys.Hot}}

# sent with every request; secrets come from the environment, never written
# headers:
#   Authorization: "Bearer ${SERVICE_TOKEN}"
{{- if .Redis}}

# the service's Redis: the hot keys' Redis keys, and the only keys a trigger
# may touch; if no hot key's Redis key is there after the warm-up, or the
# pattern matches none, the run stops before T
redis:
  address: {{.Redis}}
{{- if .CacheKey}}
  key: {{printf "%q" .CacheKey}}
  pattern: {{printf "%q" .Pattern}}
{{- else}}
  key: "item:{key}"            # a placeholder
  pattern: "item:*"
{{- end}}
{{- else if .Memcached}}

# the service's Memcached: its stats read every 100 ms, the hot keys' items
# deleted by expire and touched by ttl; if no hot key's item is there after
# the warm-up, the run stops before T. flush sends flush_all, which empties
# the whole instance, only with allow_flush_all: true
memcached:
  address: {{.Memcached}}
{{- if .CacheKey}}
  key: {{printf "%q" .CacheKey}}
{{- else}}
  key: "item:{key}"            # the Memcached key of a request's key (a placeholder)
{{- end}}
  allow_flush_all: false
{{- else}}

# the service's cache, one of (the expire, ttl and flush triggers act on it):
# redis: {address: 127.0.0.1:6379, key: "item:{key}", pattern: "item:*"}
# memcached: {address: 127.0.0.1:11211, key: "item:{key}", allow_flush_all: false}
{{- end}}
{{- if .Postgres}}

# the service's Postgres, read-only: the statements that count as DB queries;
# if none of them was counted by the warm-up's end, the run stops before T
# export SERVICE_PG_DSN="postgres://USER:${SERVICE_PG_PASSWORD}@{{.Postgres}}/DB" before the run
postgres:
  dsn: "${SERVICE_PG_DSN}"
{{- if .DBUser}}
  role: {{printf "%q" .DBUser}}
{{- else}}
  role: app                    # the service's role (a placeholder)
{{- end}}
{{- if .Statements}}
  statements: {{printf "%q" .Statements}}
{{- else}}
  statements: "FROM items"     # a regular expression on the statement text (a placeholder)
{{- end}}
{{- end}}
{{- if .MySQL}}

# the service's MySQL or MariaDB, read-only: the statements that count; if
# none of them was counted by the warm-up's end, the run stops before T
# export SERVICE_MYSQL_DSN="USER:${SERVICE_MYSQL_PASSWORD}@tcp({{.MySQL}})/" before the run
mysql:
  dsn: "${SERVICE_MYSQL_DSN}"
{{- if .DBUser}}
  user: {{printf "%q" .DBUser}}
{{- else}}
  user: app                    # the service's user (a placeholder)
{{- end}}
{{- if .Statements}}
  statements: {{printf "%q" .Statements}}
{{- else}}
  statements: "FROM items"     # a regular expression on the digest text (a placeholder)
{{- end}}
{{- end}}

# how the herd is provoked at T{{if not (or .Redis .Memcached)}}: with a cache, expire (its hot keys
# invalidated); without, a burst of clients released at once{{end}}
trigger:
  name: {{if or .Redis .Memcached}}expire{{else}}burst
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
