package main

import "strings"

// fileBadInputs are the kinds of docs/bad-input.md told at a file's line:
// target files, scenario files and results files.
var fileBadInputs = map[string][]badInput{
	"a file's value a flag replaces": {
		{args: []string{"run", "--dry-run", "{dir}/s.yaml", "--rate", "100"}, files: map[string]string{"s.yaml": "load:\n  rate: 0\n"},
			want: "s.yaml:2: load.rate: 0 out of range (accepted: 1 to 20000 requests/s)", not: "--rate"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml", "--ttl", "1s"}, files: map[string]string{"s.yaml": "knobs:\n  ttl: 1h\n"},
			want: "s.yaml:2: knobs.ttl: 1h0m0s is not shorter than stale_ttl's default, 10m0s"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst", "--rate", "100"}, files: map[string]string{"t.yaml": targetFile + "plan:\n  rate: 100000\n"},
			want: "t.yaml:9: plan.rate: 100000 out of range (accepted: 1 to 20000 requests/s)", not: "--rate"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst", "--rate", "100"}, files: map[string]string{"t.yaml": targetFile + "plan:\n  rate: abc\n"},
			want: `t.yaml:9: plan.rate: "abc" is not a rate (accepted: whole requests per second`},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--burst", "10"}, files: map[string]string{"t.yaml": targetFile + "trigger:\n  name: burst\n  burst: -5\n"},
			want: "t.yaml:10: trigger.burst: -5 out of range (accepted: 1 to 10000 clients)", not: "--burst"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "command", "--run", "true"}, files: map[string]string{"t.yaml": targetFile + "trigger:\n  name: burst\n  burst: -5\n"},
			want: "t.yaml:10: trigger.burst: -5 out of range (accepted: 1 to 10000 clients)"},
	},
	"a file that does not decode": {
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst"}, files: map[string]string{"t.yaml": targetFile + "redis:\n  address: 127.0.0.1:6379\n  allow_pause: \"yes\"\n"},
			want: "t.yaml:10: redis.allow_pause: \"yes\" is not true or false (accepted: true or false, unquoted)"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": "name: t\n" + targetFile},
			want: "t.yaml:2: name: given twice, at lines 1 and 2 (accepted: each key once)\n", not: "endpoints"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "arms:\n  - name: j\n    strategy: ttl_jitter\n    knobs:\n      ttl_jitter: 0.1\n      ttl_jitter: 0.2\n"},
			want: "s.yaml:6: arms[0].knobs.ttl_jitter: given twice, at lines 5 and 6 (accepted: each key once)\n", not: "arms: empty"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "limits:\n  max_rate: .inf\n"},
			want: "t.yaml:9: limits.max_rate: .inf is not a finite number (accepted: a whole number, such as 100)", not: "max_rate: 0"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load:\n  zipf: 1e999\n"},
			want: "s.yaml:2: load.zipf: 1e999 is not a finite number (accepted: a number, such as 0.5)"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "plan:\n  rate: 100000\n"},
			want: "t.yaml:9: plan.rate: 100000 out of range (accepted: 1 to 20000 requests/s)", not: "--rate"},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--burst", "100", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "plan:\n  rate: 100000\nlimits:\n  max_rate: 300\n"},
			want: "t.yaml:9: plan.rate: 100000 out of range (accepted: 1 to 20000 requests/s)\n", not: "over the target's cap"},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "prometheus:\n  address: http://127.0.0.1:9090\n"},
			want: `t.yaml:9: prometheus.address: unknown key "address" (accepted: drain, series, url)`, not: "prometheus.url"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load:\n  rate: 1.5\n"},
			want: "s.yaml:2: load.rate: 1.5 is not a whole number (accepted: a whole number, such as 100)"},
	},
	"a file whose parts cannot work together": {
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst"}, files: map[string]string{"t.yaml": targetFile + "abort: [\"http.drop_rate > 20%\", \"http.drop_rate > 0.2\"]\n"},
			want: `t.yaml:8: abort[1]: the same stop condition as "http.drop_rate > 20%", given twice (accepted: each once)`},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst"}, files: map[string]string{"t.yaml": targetFile + "arms:\n  - name: a\n    endpoints: [\"http://u:pw@127.0.0.1:1\"]\n"},
			want: `t.yaml:10: arms[0].endpoints[0]: "http://u:xxxxx@127.0.0.1:1" holds credentials`, not: "pw@"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst"}, files: map[string]string{"t.yaml": targetFile + "arms:\n  - name: a\n    backend: api-b\n"},
			want: `t.yaml:10: arms[0].backend: "api-b", and the file has no haproxy: to read it from (accepted: a backend with haproxy: {stats, backend} in the file; or leave the key out)`, not: "for usage"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst"}, files: map[string]string{"t.yaml": targetFile + "allow: [\"*.example\"]\n"},
			want: `t.yaml:8: allow[0]: "*.example" is a wildcard, and hosts are matched exactly, so it allows nothing`},
		{args: []string{"stampede", "--dry-run", "--escape", "on", "--abort-on", "verdict == metastable"}, want: `--abort-on: "verdict == metastable": ends the arm where --escape begins`},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "redis:\n  address: 127.0.0.1:6379\n  key: \"item:{key}\"\n  pattern: \"product:*\"\n"},
			want: `t.yaml:10: redis.key: "item:{key}" makes keys such as "item:1", which pattern "product:*" does not match`, not: "for usage"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "prometheus:\n  url: http://127.0.0.1:9090\n  series:\n    db_qps: \"sum(rate(x[10s]\"\n"},
			want: `t.yaml:11: prometheus.series.db_qps: "sum(rate(x[10s]" is not PromQL: 1:16: parse error: unclosed left parenthesis`},
		{args: []string{"stampede", "--dry-run", "--allow-host", "http://example.com"}, want: `--allow-host: "http://example.com" is not a host name or address (accepted: a host as it appears in the URLs`},
		{args: []string{"worker", "--allow-host", "https://example.com"}, want: `--allow-host: "https://example.com" is not a host name or address`},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "limits:\n  max_duration: 1s\n"},
			want: "t.yaml:9: limits.max_duration: 1s is shorter than an arm, warmup + before + after = 13s (accepted: 13s or more", not: "for usage"},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--target", "{dir}/t.yaml", "--timeout", "2s", "--retry", "fixed:500ms:2"}, files: map[string]string{"t.yaml": targetFile + "limits:\n  max_drain: 5s\n"},
			want: "t.yaml:9: limits.max_drain: 5s is shorter than the clients' whole deadline on arm baseline, 7s (3 attempts of --timeout 2s and 1s of backoff, --retry fixed:500ms:2): the drain would give up on work a client may still wait for (accepted: 7s or more; or leave the key out, for the longer of 15s and that deadline; or a shorter --timeout or --retry)", not: "for usage"},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "prometheus:\n  url: http://127.0.0.1:9090\n  series: {rps: \"sum(rate(x[10s]))\"}\n  drain: [qps]\n"},
			want: "t.yaml:11: prometheus.drain[0]: \"qps\" is not a series of prometheus.series (accepted: rps)"},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "prometheus:\n  url: http://127.0.0.1:9090\n  series: {rps: \"sum(rate(x[10s]))\"}\n  drain: [rps, rps]\n"},
			want: "t.yaml:11: prometheus.drain[1]: \"rps\" is named twice (accepted: each series once)"},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "limits:\n  max_drain: 0s\n"},
			want: `t.yaml:9: limits.max_drain: "0s" (accepted: a duration such as 30s, no shorter than the clients' whole deadline; or leave the key out, for the longer of 15s and that deadline)`},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "plan:\n  warmup: 1h\nlimits:\n  max_duration: 1m\n"},
			want: "t.yaml:9: plan.warmup: warmup + before + after = 1h0m11s exceeds the cap of 10m0s per arm (accepted: warmup + before at most 9m59s, leaving after 1s or more)\n", not: "--after"},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": strings.Replace(targetFile, "127.0.0.1:1", "example.com:8080", 1)},
			want: "t.yaml:2: endpoints[0]: host example.com is not loopback and not allowed (accepted: loopback; or list it under allow: in the target file, or --allow-host example.com)", not: "for usage"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "limits:\n  max_rate: 0\n"},
			want: "t.yaml:9: limits.max_rate: 0 (accepted: 1 or more requests/s; no max_rate for no cap of the target's own)"},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "abort:\n  - \"http.drop_rate > 50%\"\n  - \"db.qps > 10\"\n"},
			want: "t.yaml:10: abort[1]: db.qps names postgres, which {dir}/t.yaml does not let herdbench observe (accepted: a path of what it declares; db.qps would need postgres in the target file)", not: "--abort-on"},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "abort:\n  - \"db.querys > 10\"\n"},
			want: "t.yaml:9: abort[0]: unknown path \"db.querys\" (accepted: db.qps, http.requests,", not: "--abort-on"},
	},
	"results that cannot be true": {
		{args: []string{"report", "{dir}/r.json", "--gate", "lock:db.queries <= 10"}, files: map[string]string{"r.json": strings.Replace(resultsFile, `"queries": 97,`, `"queries": null,`, 1)},
			want: "r.json: arms[1].db.queries: null, and a run writes db.queries as a number wherever it writes db (accepted: a number 0 or more"},
		{args: []string{"report", "{dir}/r.json"}, files: map[string]string{"r.json": strings.Replace(resultsFile, `"drop_rate": 0,`, `"drop_rate": 1.5,`, 1)},
			want: "r.json: arms[0].http.drop_rate: 1.5 out of range (accepted: 0 to 1: a ratio)"},
	},
	"results the model cannot predict from": {
		{args: []string{"model", "{dir}/r.json"}, files: map[string]string{"r.json": strings.Replace(resultsFile, `"trigger": "expire"`, `"trigger": ""`, 1)},
			want: "r.json: plan.trigger: none, and the model predicts a fault's effect (accepted: the results of a run with a trigger: herdbench stampede --trigger slowdb", not: "for usage"},
		{args: []string{"model", "{dir}/r.json"}, files: map[string]string{"r.json": strings.Replace(resultsFile, `"trigger": "expire"`, `"trigger": "slowdb"`, 1)},
			want: "r.json: arms[0]: none: no run measured the database's queries beside the attempts before the trigger (db.baseline_qps, windows.before): a run on the testbed measures them"},
		{args: []string{"model", "{dir}/r.json", "--db-pool", "4"}, files: map[string]string{"r.json": strings.ReplaceAll(slowdbResults, `"query_cost": "50ms"`, `"query_cost": "0s"`)},
			want: "r.json: arms[1]: retry-budget=10%: config.query_cost 0s: a capacity of 0 serves nothing, and the model needs the run's own (a run whose query_cost is above 0)"},
		{args: []string{"model", "{dir}/r.json", "--db-pool", "0"}, files: map[string]string{"r.json": slowdbResults},
			want: "--db-pool: 0 out of range (accepted: 1 to 1000 connections per replica; a capacity of 0 serves nothing)"},
	},
	"a trigger its target cannot run": {
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "trigger: {name: outage}\n"},
			want: "t.yaml:8: trigger.name: trigger outage needs toxiproxy", not: "for usage"},
		{args: []string{"stampede", "--dry-run", "--target", "http://127.0.0.1:1/items/{key}"},
			want: "--target: http://127.0.0.1:1/items/{key}: no --trigger given, and the default, expire, needs a Redis", not: "--trigger:"},
		{args: []string{"stampede", "--dry-run", "--cache", "memcached", "--trigger", "notify"},
			want: "--trigger: the local testbed the run would start in {state} (3 replicas, 10000 items, one tier): trigger notify needs a Redis the replicas read their items from, and a channel they listen on for invalidations (accepted on it: expire, ttl,"},
		{args: []string{"stampede", "--dry-run", "--trigger", "restart", "--restart", "api-9"},
			want: "--restart: trigger restart needs a testbed that runs api-9 (this one runs api-1 to api-3)", not: "--trigger"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "trigger:\n  name: command\n"},
			want: "t.yaml:8: trigger.run: required with trigger command (accepted: a shell command, run with sh -c at T)", not: "--run"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "plan:\n  rate: 100\n"},
			want: "t.yaml: trigger: none, and the default, expire, needs a Redis (redis.address in the target file), a Memcached's key (memcached.key), or an HTTP cache's purge request (http_cache.purge in the target file) (accepted: a trigger: naming one it can run, burst, command, such as trigger: {name: burst}; or --trigger NAME)",
			not:  "for usage"},
	},
}

// joinKinds is every kind of the maps, each once.
func joinKinds(ms ...map[string][]badInput) map[string][]badInput {
	out := map[string][]badInput{}
	for _, m := range ms {
		for k, v := range m {
			if _, twice := out[k]; twice {
				panic("kind " + k + " in two tables")
			}
			out[k] = v
		}
	}
	return out
}
