package targets

import (
	"strings"
	"testing"
)

// oneRequest is a target file that passes: each case below adds to it.
const oneRequest = `name: t
endpoints: [http://127.0.0.1:1]
request:
  path: /items/{key}
keys:
  range: {from: 1, to: 100}
  hot: 10
`

// twoClasses is oneRequest's traffic as two classes.
const twoClasses = `name: t
endpoints: [http://127.0.0.1:1]
keys:
  range: {from: 1, to: 100}
  hot: 10
requests:
  - name: a
    path: /items/{key}
`

// Each input of #41 is refused at its line and field, saying what was
// wrong and what is accepted: no value is silently a default, and no
// part that cannot work with the rest is kept.
func TestRefusedAtTheirLines(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"a weight that overflows the total", twoClasses + "    weight: 9223372036854775807\n",
			"t.yaml:9: requests[0].weight: 9223372036854775807 out of range (accepted: 1 to 1000000: "},
		{"a class without weight", twoClasses,
			"t.yaml:7: requests[0].weight: no weight (accepted: 1 to 1000000"},
		{"a class name twice", twoClasses + "    weight: 1\n  - name: a\n    weight: 1\n    path: /x\n",
			`t.yaml:10: requests[1].name: "a" twice (accepted: a name of its own`},
		{"an endpoint with credentials, never shown", strings.Replace(oneRequest, "http://127.0.0.1:1", "http://user:pw@127.0.0.1:1", 1),
			`t.yaml:2: endpoints[0]: "http://user:xxxxx@127.0.0.1:1" holds credentials`},
		{"an endpoint with a query", strings.Replace(oneRequest, "http://127.0.0.1:1", `"http://127.0.0.1:1?x=1"`, 1),
			`t.yaml:2: endpoints[0]: "http://127.0.0.1:1?x=1" has a query, after which the request's path would be appended (accepted: http:// or https://`},
		{"an endpoint with a fragment", strings.Replace(oneRequest, "http://127.0.0.1:1", `"http://127.0.0.1:1#frag"`, 1),
			`t.yaml:2: endpoints[0]: "http://127.0.0.1:1#frag" has a fragment`},
		{"an endpoint with {key}", strings.Replace(oneRequest, "http://127.0.0.1:1", `"http://127.0.0.1:1/{key}"`, 1),
			`t.yaml:2: endpoints[0]: "http://127.0.0.1:1/{key}" has {key}, which a base URL sends as written`},
		{"an arm's endpoint with a query", oneRequest + "arms:\n  - name: a\n    endpoints: [\"http://127.0.0.1:2/?a=b\"]\n",
			`t.yaml:10: arms[0].endpoints[0]: "http://127.0.0.1:2/?a=b" has a query`},
		{"an arm's endpoints empty", oneRequest + "arms:\n  - name: a\n    endpoints: []\n",
			"t.yaml:10: arms[0].endpoints: empty (accepted: one or more base URLs, each http:// or https:// with a host, such as http://127.0.0.1:8080, or a base path, http://127.0.0.1:8080/api; or leave the key out, for the file's endpoints)"},
		{"the HTTP cache's urls empty", oneRequest + "http_cache:\n  urls: []\n  purge: {method: PURGE, path: \"/items/{key}\"}\n",
			"t.yaml:9: http_cache.urls: empty (accepted: one or more base URLs, each the cache's http:// or https:// base URL, such as http://127.0.0.1:6081; or leave the key out, for the endpoints)"},
		{"the HTTP cache's url with credentials", oneRequest + "http_cache:\n  urls: [\"http://u:secret@127.0.0.1:6081\"]\n  purge: {method: PURGE, path: \"/items/{key}\"}\n",
			`t.yaml:9: http_cache.urls[0]: "http://u:xxxxx@127.0.0.1:6081" holds credentials`},
		{"a header value with a newline", oneRequest + "headers:\n  X-A: \"a\\nb\"\n",
			`t.yaml:9: headers.X-A: "a\nb" has a newline or another control character, which net/http refuses to send (accepted: printable text and tabs)`},
		{"a header twice, in two cases", strings.Replace(oneRequest, "  path: /items/{key}\n", "  path: /items/{key}\n  headers: {X-A: a, x-a: b}\n", 1),
			"t.yaml:5: request.headers.x-a: the same header as X-A: header names are case-insensitive (accepted: each header once)"},
		{"an environment's header value with a newline", oneRequest + "headers:\n  Authorization: \"${HB_NL}\"\n",
			"t.yaml:9: headers.Authorization: the environment's value has a newline"},
		{"a range vector as a series", oneRequest + "prometheus:\n  url: http://127.0.0.1:9090\n  series: {up: \"up[5m]\"}\n",
			`t.yaml:10: prometheus.series.up: "up[5m]" is a range vector, which query_range refuses (accepted: an expression Prometheus' query_range takes`},
		{"a string as a series", oneRequest + "prometheus:\n  url: http://127.0.0.1:9090\n  series: {s: '\"x\"'}\n",
			`t.yaml:10: prometheus.series.s: "\"x\"" is a string, which query_range refuses`},
		{"a name given empty", strings.Replace(oneRequest, "name: t", `name: ""`, 1),
			"t.yaml:1: name: empty (accepted: a name for reports; or leave the key out: reports name the file)"},
		{"a method given empty", strings.Replace(oneRequest, "request:\n", "request:\n  method: \"\"\n", 1),
			"t.yaml:4: request.method: empty (accepted: GET, HEAD, POST, PUT, PATCH, DELETE; or leave the key out, for GET)"},
		{"a class's method given empty", twoClasses + "    weight: 1\n    method: \"\"\n",
			"t.yaml:10: requests[0].method: empty (accepted: GET, HEAD"},
		{"a query value given empty", strings.Replace(oneRequest, "request:\n", "request:\n  query: {page: \"\"}\n", 1),
			"t.yaml:4: request.query.page: empty (accepted: a value, {key} in it or not; or leave the key out, to send no page)"},
		{"an arm's query named empty", oneRequest + "arms:\n  - name: a\n    query: {\"\": x}\n",
			`t.yaml:10: arms[0].query: a value named "" (accepted: name: value, each name not empty)`},
		{"a redis password given empty", oneRequest + "redis: {address: \"127.0.0.1:6379\", password: \"\"}\n",
			"t.yaml:8: redis.password: empty (accepted: ${VAR}, read from the environment; or leave the key out, for a Redis without a password)"},
		{"a redis channel given empty", oneRequest + "redis:\n  address: 127.0.0.1:6379\n  invalidate_channel: \"\"\n",
			"t.yaml:10: redis.invalidate_channel: empty (accepted: the channel the service listens on for invalidations; or leave the key out"},
		{"a memcached key given empty", oneRequest + "memcached:\n  address: 127.0.0.1:11211\n  key: \"\"\n",
			"t.yaml:10: memcached.key: empty (accepted: the Memcached key of a request's key, such as item:{key}; or leave the key out"},
		{"a proxy given empty", oneRequest + "toxiproxy:\n  url: http://127.0.0.1:8474\n  proxies: {redis: \"\"}\n",
			"t.yaml:10: toxiproxy.proxies.redis: empty (accepted: the name of the proxy in toxiproxy, such as redis; or leave the dependency out)"},
		{"max_duration given empty", oneRequest + "limits: {max_duration: \"\"}\n",
			"t.yaml:8: limits.max_duration: empty (accepted: a duration such as 2m; or leave the key out, for no cap of the target's own)"},
		{"a hook given empty", oneRequest + "arms:\n  - name: a\n    before: [\" \"]\n    after: [\"\"]\n",
			"t.yaml:10: arms[0].before[0]: empty (accepted: a command, run with sh -c before the arm; or leave it out, for none)\nt.yaml:11: arms[0].after[0]: empty"},
		{"a zipf without s", strings.Replace(oneRequest, "range: {from: 1, to: 100}", "zipf: {from: 1, to: 100}", 1),
			"t.yaml:6: keys.zipf.s: no s (accepted: the exponent, greater than 1, such as 1.1)"},
		{"a range without to", strings.Replace(oneRequest, "range: {from: 1, to: 100}", "range: {from: 1}", 1),
			"t.yaml:6: keys.range.to: no to (accepted: whole numbers from and to, 0 <= from <= to, at most 2147483648 keys)"},
		{"a zipf without from", strings.Replace(oneRequest, "range: {from: 1, to: 100}", "zipf: {to: 100, s: 1.1}", 1),
			"t.yaml:6: keys.zipf.from: no from (accepted: whole numbers from and to, 0 <= from < to"},
		{"a key given empty", strings.Replace(oneRequest, "range: {from: 1, to: 100}\n  hot: 10", `list: [a, "", b]`, 1),
			`t.yaml:6: keys.list[1]: empty (accepted: a key, such as 42 or sku-1; or leave it out)`},
		{"a key twice", strings.Replace(oneRequest, "range: {from: 1, to: 100}\n  hot: 10", "list: [a, a, b]", 1),
			`t.yaml:6: keys.list[1]: "a" twice, first at keys.list[0] (accepted: each key once)`},
		{"a toxiproxy with no proxies", oneRequest + "toxiproxy:\n  url: http://127.0.0.1:8474\n",
			"t.yaml:8: toxiproxy.proxies: none: no trigger could break anything through it (accepted: each dependency"},
		{"a max_rate above herdbench's cap", oneRequest + "limits: {max_rate: 50000}\n",
			"t.yaml:8: limits.max_rate: 50000 is above herdbench's own cap of 20000 requests/s, so it caps nothing (accepted: 1 to 20000; no max_rate for herdbench's cap alone)"},
		{"an arm's backend without haproxy:", oneRequest + "arms:\n  - name: a\n    backend: api-b\n",
			`t.yaml:10: arms[0].backend: "api-b", and the file has no haproxy: to read it from (accepted: a backend with haproxy: {stats, backend} in the file; or leave the key out)`},
		{"an arm's backend given empty", oneRequest + "haproxy: {stats: http://127.0.0.1:8404/stats, backend: api}\narms:\n  - name: a\n    backend: \"\"\n",
			`t.yaml:11: arms[0].backend: empty (accepted: a backend's name as HAProxy's config gives it: letters, digits, '-', '_', '.', ':'; or leave the key out, for haproxy.backend's api)`},
		{"an arm's backend not a name", oneRequest + "haproxy: {stats: http://127.0.0.1:8404/stats, backend: api}\narms:\n  - name: a\n    backend: \"api b\"\n",
			`t.yaml:11: arms[0].backend: "api b" (accepted: a backend's name as HAProxy's config gives it: letters, digits, '-', '_', '.', ':')`},
		{"the backend not a name", oneRequest + "haproxy: {stats: http://127.0.0.1:8404/stats, backend: \"api/1\"}\n",
			`t.yaml:8: haproxy.backend: "api/1" (accepted: a backend's name as HAProxy's config gives it`},
		{"a wildcard allowed", oneRequest + "allow: [\"*.example\"]\n",
			`t.yaml:8: allow[0]: "*.example" is a wildcard, and hosts are matched exactly, so it allows nothing (accepted: a host as it appears in the URLs`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile([]byte(tc.file), "t.yaml", env(map[string]string{"HB_NL": "Bearer x\r\nX-Evil: 1"}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseFile(%s) = %v; want\n  %s", tc.name, err, tc.want)
			}
		})
	}
}

// A base path is a base URL: the request's path is appended to it.
func TestABasePathIsAccepted(t *testing.T) {
	file := strings.Replace(oneRequest, "http://127.0.0.1:1", "http://127.0.0.1:1/api/", 1)
	if _, err := ParseFile([]byte(file), "t.yaml", env(nil)); err != nil {
		t.Errorf("ParseFile(a base path) = %v; want nil", err)
	}
}

// What query_range takes passes: an instant vector, a scalar.
func TestInstantSeriesAreAccepted(t *testing.T) {
	file := oneRequest + "prometheus:\n  url: http://127.0.0.1:9090\n  series: {qps: \"sum(rate(x[10s]))\", one: \"1\", s: \"scalar(up)\"}\n"
	if _, err := ParseFile([]byte(file), "t.yaml", env(nil)); err != nil {
		t.Errorf("ParseFile(instant series) = %v; want nil", err)
	}
}

// Host names are case-insensitive, as curl and nginx read them: an
// allowed host matches whatever its case, in the file or --allow-host; a
// wildcard is refused there too.
func TestAllowedHostsIgnoreCase(t *testing.T) {
	file := strings.Replace(oneRequest, "http://127.0.0.1:1", "http://Api.Example:1", 1) + "allow: [API.EXAMPLE]\nredis: {address: \"CACHE.example:6379\"}\n"
	f, err := ParseFile([]byte(file), "t.yaml", env(nil))
	if err != nil {
		t.Fatalf("ParseFile = %v; want nil", err)
	}
	if err := FromFile(f).CheckHosts([]string{"cache.EXAMPLE"}); err != nil {
		t.Errorf("CheckHosts(cache.EXAMPLE) = %v; want the hosts allowed whatever their case", err)
	}
	if !Loopback("LocalHost") {
		t.Errorf("Loopback(LocalHost) = false; want true")
	}
	if err := CheckHost("*.example"); err == nil || !strings.Contains(err.Error(), "hosts are matched exactly") {
		t.Errorf("CheckHost(*.example) = %v; want the wildcard refused", err)
	}
}
