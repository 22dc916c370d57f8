package main

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// badInput is one input of a kind of bad input (docs/bad-input.md): a
// command line, the files it reads, and what its error must say. Every one
// exits 2, before anything starts, with no Go stack trace.
type badInput struct {
	args  []string          // "{dir}" stands for the test's directory, where files are written
	files map[string]string // file name in {dir}: content
	want  string            // a part of stderr: the field or flag, and the accepted values
	not   string            // not in stderr, if set
}

// badInputs are the kinds of docs/bad-input.md's table, each with inputs
// of that kind: the table's first column names them.
var badInputs = appendKinds(joinKinds(flagBadInputs, fileBadInputs), secondsBadInputs)

// flagBadInputs are the kinds told against flags and arguments.
var flagBadInputs = map[string][]badInput{
	"a number that is not finite": {
		{args: []string{"stampede", "--dry-run", "--ttl-jitter", "NaN"}, want: "--ttl-jitter: NaN out of range (accepted: 0 to 1"},
		{args: []string{"stampede", "--dry-run", "--xfetch-beta", "Inf"}, want: "--xfetch-beta: +Inf out of range (accepted: greater than 0"},
		{args: []string{"stampede", "--dry-run", "--rate-limit", "NaN"}, want: "--rate-limit: NaN out of range (accepted: more than 0 loads/s)"},
		{args: []string{"stampede", "--dry-run", "--early-probability", "NaN"}, want: "--early-probability: NaN out of range (accepted: 0 to 1)"},
		{args: []string{"stampede", "--dry-run", "--local-jitter", "NaN"}, want: "--local-jitter: NaN out of range (accepted: 0 to 1"},
		{args: []string{"stampede", "--dry-run", "--apply-rate", "NaN"}, want: "--apply-rate: NaN out of range (accepted: 0, unbounded, or more writes/s)"},
		{args: []string{"stampede", "--dry-run", "--zipf", "NaN"}, want: "--zipf: NaN out of range (accepted: greater than 1)"},
		{args: []string{"stampede", "--dry-run", "--zipf", "-Inf"}, want: "--zipf: -Inf out of range (accepted: greater than 1)"},
		{args: []string{"stampede", "--dry-run", "--critical", "NaN"}, want: "--critical: NaN out of range (accepted: 0 to 1"},
		{args: []string{"stampede", "--dry-run", "--throttle", "Inf"}, want: "--throttle: +Inf out of range (accepted: 0, off, or K above 0 and at most 100"},
		{args: []string{"stampede", "--dry-run", "--retry-budget", "NaN%"}, want: `retry budget "NaN%": the ratio must be above 0% and at most 100%`},
		{args: []string{"stampede", "--dry-run", "--hedge", "50ms:NaN%"}, want: `error rate "NaN%" is not a percentage above 0% and at most 100%`},
		{args: []string{"stampede", "--dry-run", "--arms", "none,throttle=NaN"}, want: "throttle=NaN: NaN out of range (accepted: 0, off, or K above 0"},
		{args: []string{"testbed", "up", "--ttl-jitter", "NaN"}, want: "--ttl-jitter: NaN out of range (accepted: 0 to 1"},
		{args: []string{"report", "--baseline", "{dir}/old.json", "{dir}/new.json", "--max-regression", "db.queries=NaN"}, want: `MAX "NaN" is not a number 0 or more`},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load:\n  zipf: .inf\n"},
			want: "s.yaml:2: load.zipf: +Inf out of range (accepted: greater than 1)"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "knobs:\n  ttl_jitter: .nan\n"},
			want: "s.yaml:2: knobs.ttl_jitter: \".nan\" is not a finite number, such as 0.5", not: "no arm uses"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "arms:\n  - name: j\n    strategy: ttl_jitter\n    knobs:\n      ttl_jitter: NaN\n"},
			want: "s.yaml:5: arms[0].knobs.ttl_jitter: NaN out of range (accepted: 0 to 1"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": "name: t\nendpoints: [http://127.0.0.1:1]\nrequest:\n  path: /items/{key}\nkeys:\n  zipf: {from: 1, to: 100, s: .nan}\n  hot: 10\n"},
			want: "t.yaml:6: keys.zipf.s: s NaN (accepted: greater than 1)"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": strings.Replace(targetFile, "hot: 10", "hot: -.inf", 1)},
			want: "t.yaml:7: keys.hot: -.inf is not a finite number (accepted: a whole number, such as 100)", not: "9223372036854775808"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load:\n  keys: -.inf\n"},
			want: "s.yaml:2: load.keys: -.inf is not a finite number (accepted: a whole number, such as 100)"},
	},
	"a command line only the cluster checked": {
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/t.yaml"}, want: "--yes: not given after --, and the controller's pod has no terminal to ask on"},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/s.yaml", "--yes", "--rate", "0"}, want: "--rate: 0 out of range"},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/t.yaml", "--yes", "--json", "/config/out.json"}, want: "--json: /config/out.json is in the ConfigMap's mount, /config, which is read-only"},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--worker-cpu", "1e9"}, want: `--worker-cpu: "1e9" is not above 0 and at most 64`},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "stampede"}, want: "after --: stampede without --target would start the local testbed in the controller's pod"},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "http://127.0.0.1:8080/items/{key}", "--trigger", "burst"}, want: "loopback, which in a pod is the pod itself"},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "http://svc:8080/items/{key}", "--trigger", "burst"}, want: "--allow-host: svc, the host of --target after --, is not listed"},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "t.yaml"}, want: "--target t.yaml is not in the ConfigMap"},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--zipf", "NaN"}, want: "--zipf: NaN out of range (accepted: greater than 1)"},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--outage", "5s"}, want: "--outage: an option of trigger outage"},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--gate", "db.querys < 1"}, want: `--gate: "db.querys < 1": unknown path "db.querys" (nearest: db.queries,`},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--gate", "http.drop_rate < 150%"}, want: "http.drop_rate < 150% holds whatever the run does"},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "run"}, want: "after --: run: a scenario file is required, such as examples/stampede.yaml"},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "extra"}, want: "after --: stampede: takes no arguments, and was given extra"},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "http://x", "--worker-cpu", "-1"}, want: `--worker-cpu: "-1" is not above 0`},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "stampede", "--target", "http://svc:8080/items/{key}", "--trigger", "burst", "--yes", "-o", "html=/config/x.html"}, want: `--output: html=/config/x.html: /config/x.html is in the ConfigMap's mount, /config, which is read-only`},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "stampede", "--target", "http://svc:8080/items/{key}", "--trigger", "burst", "--yes", "--results-dir", "/config"}, want: `--results-dir: /config is in the ConfigMap's mount`},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "stampede", "--target", "/config/t.yaml", "--yes", "--workers", "http://w:1"}, want: `--workers after --: the manifests set it to the workers' Service (accepted: kube --workers N)`},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "report", "x"}, want: `after --: the controller's command "report" (accepted: stampede or run, after --)`},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "run", "s.yaml", "--yes"}, want: `after --: run's scenario file s.yaml is not in the ConfigMap`},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "stampede", "--target", "ftp://svc/x"}, want: `after --: --target: target ftp://svc/x: scheme ftp not accepted`},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "stampede", "--target", "/config/t.yaml", "--rate", "fast"}, want: `after --: stampede: invalid argument "fast" for "--rate" flag: "fast" is not a rate`},
		{args: []string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "stampede", "--zipf", "NaN"}, want: "the service's URL as the pods reach it)\n--zipf: NaN out of range"},
	},
	"a testbed option only the run checked": {
		{args: []string{"stampede", "--dry-run", "--provider", "docker", "--compose-file", "{dir}"}, want: `a directory (accepted: the compose file of the herdbench repository`},
		{args: []string{"stampede", "--dry-run", "--db-pool", "0"}, want: "--db-pool: 0 out of range (accepted: 1 to 1000 connections per replica)"},
		{args: []string{"stampede", "--dry-run", "--redis-pool", "0"}, want: "--redis-pool: 0 out of range (accepted: 1 to 10000 connections per replica)"},
		{args: []string{"stampede", "--dry-run", "--db-timeout", "0s"}, want: "--db-timeout: 0s out of range (accepted: 1ms or more, such as 1s)"},
		{args: []string{"stampede", "--dry-run", "--cache", "memcached", "--write-invalidate", "refresh"}, want: "--write-invalidate: refresh broadcasts the written items on Redis pub/sub, which Memcached lacks (accepted with --cache memcached: none, delete; or --cache redis)"},
		{args: []string{"stampede", "--dry-run", "--db-pool", "0", "--zipf", "0"}, want: "--zipf: 0 out of range (accepted: greater than 1)\n--db-pool: 0 out of range"},
		{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--vary", "burst=10..100", "--redis-pool", "0"}, want: "--redis-pool: 0 out of range"},
		{args: []string{"stampede", "--dry-run", "--provider", "docker", "--compose-file", "/nonexistent.yml"},
			want: `--compose-file: "/nonexistent.yml": no such file (accepted: the compose file of the herdbench repository`},
		{args: []string{"testbed", "up", "--provider", "docker", "--compose-file", "/nonexistent.yml"}, want: `--compose-file: "/nonexistent.yml": no such file`},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "testbed:\n  db_pool: 0\n"},
			want: "s.yaml:2: testbed.db_pool: 0 out of range (accepted: 1 to 1000 connections per replica)"},
	},
	"an option that cannot take effect": {
		{args: []string{"stampede", "--dry-run", "--hedge", "2s", "--timeout", "1s"}, want: "--hedge: 2s is not below the timeout, 1s: each attempt ends at its timeout before the hedge would be sent, so it would never fire"},
		{args: []string{"stampede", "--dry-run", "--arms", "throttle=2,throttle=3", "--throttle", "4"}, want: "--throttle: every arm sets its own throttle"},
		{args: []string{"stampede", "--dry-run", "--arms", "none,retry=none"}, want: "it is the same as none"},
		{args: []string{"stampede", "--dry-run", "--escape", "on", "--after", "1s"}, want: "--after: 1s is too short for --escape"},
		{args: []string{"stampede", "--dry-run", "--trigger", "writes", "--write-restart", "api", "--write-restart-after", "9s", "--after", "2s"}, want: "--write-restart-after: 9s is not shorter than after, 2s"},
		{args: []string{"sweep", "--dry-run", "--trigger", "writes", "--vary", "write_restart_after=1ms..5s"}, want: "--vary: write_restart_after=1ms..5s: 1ms without write_restart, so it would do nothing", not: "--write-restart-after:"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "arms:\n  - name: a\n    strategy: lock\n    knobs:\n      xfetch_beta: 2\n"},
			want: "s.yaml:2: arms[0] (a): xfetch_beta is a knob of xfetch, and the arm's strategy is lock, so it would do nothing (accepted: a strategy with xfetch, such as lock+xfetch; or the knob left out)"},
		{args: []string{"stampede", "--dry-run", "--trigger", "restart", "--restart", "redis", "--rolling"}, want: "--rolling: true beside restart redis, one process, so it would do nothing"},
		{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--grid", "burst=100,,"}, want: "--grid: burst=100,,: value 2 is empty"},
		{args: []string{"report", "--baseline", "{dir}/r.json", "{dir}/r.json", "--max-regression", "db.queries=10%", "--max-regression", "db.queries=20%"}, files: map[string]string{"r.json": resultsFile},
			want: `max regression "db.queries=20%": db.queries has a limit already, "db.queries=10%" (accepted: one limit a path)`},
		{args: []string{"stampede", "--dry-run", "--retry-budget", "10%"}, want: "--retry-budget: 10% bounds the clients' retries, and no arm it applies to retries, so it would do nothing (accepted: with --retry or an arm's retry=..., or left out)"},
		{args: []string{"stampede", "--dry-run", "--arms", "none,retry-budget=10%"}, want: "--arms: retry-budget=10%: retry_budget=10% bounds the arm's retries, and it makes none, so it would do nothing"},
		{args: []string{"stampede", "--dry-run", "--trigger", "writes", "--write-restart-after", "1s"}, want: "--write-restart-after: 1s without write_restart, so it would do nothing (accepted: with write_restart naming a part, such as api; or left out)"},
		// --dry-run --dry-run=false alike, which the dry run's own test cannot take out
		{args: []string{"stampede", "--dry-run", "--yes", "--yes=false"}, want: `--yes: given twice, "true" and "false" (accepted: one value; the second would replace the first)`},
		{args: []string{"stampede", "--dry-run", "-o", "html", "-o", "json"}, want: "--output: json: json on stdout beside html, which is there already (accepted: one output on stdout, the others as FORMAT=FILE)"},
		{args: []string{"stampede", "--dry-run", "-o", "vegeta={dir}/a.bin", "-o", "vegeta={dir}/b.bin"}, want: "a second vegeta output: a run writes its requests to one (accepted: one vegeta=FILE)"},
		{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--vary", "burst=10..100", "-o", "vegeta={dir}/v.bin"}, want: "--output: vegeta: a run's every request, and a sweep's results are its tipping points (accepted: html, json, junit, markdown, table)"},
		{args: []string{"stampede", "--dry-run", "--gate", "http.drop_rate<1%", "--gate", "http.drop_rate < 0.01"}, want: `--gate: "http.drop_rate < 0.01": the same gate as "http.drop_rate<1%", given twice (accepted: each gate once)`},
		{args: []string{"stampede", "--dry-run", "--target", "http://127.0.0.1:8080/", "--trigger", "burst", "--keys", "50"}, want: "--keys: --target http://127.0.0.1:8080/ has no {key}, so every request asks for that one path and --keys would do nothing", not: "fewer than hot_keys"},
		{args: []string{"stampede", "--dry-run", "--keys", "0"}, want: "--keys: 0 out of range (accepted: 1 or more)", not: "hot-keys"},
		{args: []string{"stampede", "--dry-run", "--outage", "5s"}, want: "--outage: an option of trigger outage, and the plan's trigger is expire, so it would do nothing (accepted: with trigger outage, or left out)"},
		{args: []string{"stampede", "--dry-run", "--trigger", "expire", "--rolling"}, want: "--rolling: an option of trigger restart, and the plan's trigger is expire"},
		{args: []string{"stampede", "--dry-run", "--command-timeout", "3s"}, want: "--command-timeout: an option of trigger command, and the plan's trigger is expire"},
		{args: []string{"stampede", "--dry-run", "--trigger", "command", "--run", "true", "--undo-timeout", "5s"}, want: "--undo-timeout: 5s, and there is no undo for it to bound (accepted: with undo, or left out)"},
		{args: []string{"stampede", "--dry-run", "--arms", "none,retry=immediate:2+retry=fixed:1s:2"}, want: "retry twice: the second would replace the first (accepted: one retry=VALUE an arm"},
		{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--vary", "burst=10..100", "--vary", "burst=20..200"}, want: `for "--vary" flag: given twice, "burst=10..100" and "burst=20..200" (accepted: one axis to bisect`},
		{args: []string{"stampede", "--dry-run", "--trigger", "expire", "--trigger", "ttl"}, want: `--trigger: given twice, "expire" and "ttl" (accepted: one value; the second would replace the first)`},
		{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--grid", "burst=10,20", "--resolution", "0.1"},
			want: "--resolution: 0.1: bisects a --vary, and --grid runs every cell it lists, so it would do nothing (accepted: with --vary, or left out)"},
		{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--grid", "burst=10,10,20"}, want: "--grid: burst=10,10,20: 10 twice (accepted: each value once)"},
		{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--vary", "burst=10..100", "--burst", "50"},
			want: "--vary: burst=10..100: sweeps burst, and --burst 50 sets it too: every run would replace it with the axis's value (accepted: one of them"},
		{args: []string{"sweep", "--dry-run", "--vary", "rate=100..1000", "--rate", "700"}, want: "sweeps rate, and --rate 700 sets it too"},
		{args: []string{"stampede", "--dry-run", "--xfetch-beta", "2", "--arms", "none,lock"}, want: "--xfetch-beta: no arm uses xfetch (arms: none, lock), so it would do nothing (accepted: an arm whose strategy has xfetch, or left out)"},
		{args: []string{"stampede", "--dry-run", "--apply-rate", "5", "--write-strategy", "direct"},
			want: "--apply-rate: an option of write strategy queue, and the arms' is direct, so it would do nothing (accepted: with --write-strategy queue or an arm write=queue, or left out)"},
		{args: []string{"stampede", "--dry-run", "--lock-ttl", "5s", "--arms", "none,xfetch"}, want: "--lock-ttl: no arm uses lock (arms: none, xfetch)"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "knobs:\n  xfetch_beta: 2\narms: [none, lock]\n"},
			want: "s.yaml:2: knobs.xfetch_beta: no arm uses xfetch (arms: none, lock)"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "trigger:\n  name: expire\n  outage: 5s\n"},
			want: "s.yaml:3: trigger.outage: an option of trigger outage, and the plan's trigger is expire"},
	},
	"an explicitly empty value": {
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "outputs: []\n"},
			want: "s.yaml:1: outputs: empty (accepted: one or more, such as [table, json=results.json]; or no outputs: key, for the table on stdout)"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst"}, files: map[string]string{"t.yaml": targetFile + "limits:\n  max_duration: \"\"\n"},
			want: "t.yaml:9: limits.max_duration: empty (accepted: a duration such as 2m; or leave the key out, for no cap of the target's own)"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst"}, files: map[string]string{"t.yaml": targetFile + "limits:\n  max_drain: \"\"\n"},
			want: "t.yaml:9: limits.max_drain: empty (accepted: a duration such as 30s; or leave the key out, for the longer of 15s and the clients' whole deadline)"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst"}, files: map[string]string{"t.yaml": strings.Replace(targetFile, "  path: /items/{key}\n", "  path: /items/{key}\n  headers: {X-Token: \"\"}\n", 1)},
			want: "t.yaml:5: request.headers.X-Token: empty (accepted: a value, or ${VAR} from the environment; or leave the header out to send none)"},
		{args: []string{"stampede", "--dry-run", "--provider", ""}, want: "--provider: empty (accepted: auto, local, docker)", not: "invalid argument"},
		{args: []string{"stampede", "--dry-run", "--results-dir", ""}, want: `--results-dir: empty (accepted: a directory`},
		{args: []string{"stampede", "--dry-run", "--json", ""}, want: `--json: empty (accepted: a file name`},
		{args: []string{"stampede", "--dry-run", "--target", ""}, want: `--target: empty (accepted: testbed`},
		{args: []string{"testbed", "up", "--provider", ""}, want: `--provider: empty (accepted: auto, local, docker)`},
		{args: []string{"worker", "--listen", ""}, want: `--listen: empty (accepted: HOST:PORT, such as 127.0.0.1:7070, or :7070 for every interface)`},
		{args: []string{"stampede", "--dry-run", "--cache", ""}, want: "--cache: empty (accepted: the replicas' item cache: redis, memcached; or leave it out, for redis)"},
		{args: []string{"stampede", "--dry-run", "--db", ""}, want: "--db: empty (accepted: the replicas' database: postgres, mariadb; or leave it out, for postgres)"},
		{args: []string{"stampede", "--dry-run", "--retry-budget", ""}, want: "--retry-budget: empty (accepted: bounds each client's retries, a BUDGET: none, a ratio such as 10%"},
		{args: []string{"stampede", "--dry-run", "--hedge", ""}, want: "--hedge: empty (accepted: hedge an attempt to the next replica after a DELAY: none, a delay such as 50ms"},
		{args: []string{"stampede", "--dry-run", "--client-breaker", ""}, want: "--client-breaker: empty (accepted: each client's own circuit BREAKER: none, FAILURES:OPEN such as 5:2s"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load:\n  hedge: \"\"\n"},
			want: "s.yaml:2: load.hedge: empty (accepted: hedge an attempt", not: "for usage"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load:\n  retry_budget: \"\"\n"},
			want: "s.yaml:2: load.retry_budget: empty (accepted: bounds each client's retries"},
		{args: []string{"testbed", "up", "--cache", ""}, want: "--cache: empty (accepted: the replicas' item cache: redis, memcached"},
		{args: []string{"report", "{dir}/r.json", "--baseline", ""}, files: map[string]string{"r.json": resultsFile}, want: "--baseline: empty (accepted: compare the one results file given with this baseline FILE; or leave it out)"},
		{args: []string{"testbed", "status", "--state-dir", ""}, want: "--state-dir: empty (accepted: directory of the testbed's data, state file and logs; or leave it out, for "},
		{args: []string{"testbed", "status", "-t", ""}, want: "--template: empty (accepted: format the status with a Go template"},
		{args: []string{"testbed", "down", "--state-dir", ""}, want: "--state-dir: empty (accepted: directory of the testbed's data"},
		{args: []string{"init", "--postgres", ""}, want: "--postgres: empty (accepted: the service's Postgres, HOST:PORT; or leave it out)", not: "--url"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load:\n  rate: 100\narms: []\n"},
			want: "s.yaml:3: arms: empty (accepted: one arm or more"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "results_dir: \"\"\n"},
			want: "s.yaml:1: results_dir: empty (accepted: a directory"},
		{args: []string{"stampede", "--dry-run", "--workers", ""}, want: `--workers: empty (accepted: URL,URL,... of workers`},
		{args: []string{"stampede", "--dry-run", "--worker-token-file", ""}, want: `--worker-token-file: empty (accepted: a file holding the workers' token`},
		{args: []string{"stampede", "--dry-run", "--metrics-addr", ""}, want: `--metrics-addr: empty (accepted: HOST:PORT on loopback`},
		{args: []string{"stampede", "--dry-run", "--trigger", "command", "--run", "true", "--ended-when", ""}, want: `--ended-when: empty (accepted: the trigger's end`},
		{args: []string{"stampede", "--dry-run", "--provider", "docker", "--compose-file", ""}, want: `--compose-file: empty (accepted: a compose file`},
		{args: []string{"worker", "--token-file", ""}, want: `--token-file: empty (accepted: a file holding the token`},
		{args: []string{"kube", "--image", "x", "--configmap", "c", "--token-secret", "", "--", "stampede"}, want: `--token-secret: empty (accepted: the name of a Secret`},
		{args: []string{"kube", "--image", "x", "--configmap", "c", "--secret", "", "--", "stampede"}, want: `--secret: empty (accepted: the name of a Secret`},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": strings.Replace(targetFile, "hot: 10", "hot: 0", 1)},
			want: "t.yaml:7: keys.hot: 0 (accepted: 1 to the key space's 100 keys; no hot: for --hot-keys)"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "arms: []\n"},
			want: "t.yaml:8: arms: empty (accepted: one arm or more"},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "requests: []\n"},
			want: "t.yaml:8: requests: empty (accepted: one class or more, such as [{name: product, weight: 6, path: /products/{key}}]; or no requests: key, for request: alone)"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "# nothing yet\n"},
			want: "s.yaml:1: empty: no keys (accepted: a scenario's keys, docs/scenarios.md)", not: "for usage"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load: null\n"},
			want: "s.yaml:1: load: no value (accepted: a mapping; or leave the key out, for its default)"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load:\n  rate: ~\n"},
			want: "s.yaml:2: load.rate: no value (accepted: a whole number; or leave the key out, for its default)"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load:\n  rate: 100\n---\nload:\n  rate: 200\n"},
			want: "s.yaml:3: a second document at line 3: one scenario per file"},
	},
	"two values that cannot both hold": {
		{args: []string{"stampede", "--dry-run", "--trigger", "outage", "--after", "1s"}, want: "--after: 1s is not longer than outage's default, 2s"},
		{args: []string{"stampede", "--dry-run", "--items", "100"}, want: "--items: 100 is fewer than keys' default, 10000: keys beyond the items are not found (accepted: 10000 or more; or --keys 100 or fewer)", not: "--keys:"},
		{args: []string{"stampede", "--dry-run", "--workers", "http://10.0.0.5:7070", "--target", "http://svc.example:8080/items/{key}", "--trigger", "burst", "--allow-host", "svc.example"},
			want: "--workers: 10.0.0.5:7070 is on another machine, whose worker takes only calls that carry the workers' token, and none is given (accepted: --worker-token-file FILE, or $HERDBENCH_WORKER_TOKEN"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst", "--hot-keys", "500"}, files: map[string]string{"t.yaml": strings.Replace(targetFile, "  hot: 10\n", "", 1)},
			want: "--hot-keys: 500 is more than the 100 keys "},
		{args: []string{"stampede", "--dry-run", "--workers", "http://10.0.0.5:7070"}, want: "--workers: 10.0.0.5:7070 is on another machine, and the testbed listens on this machine's loopback"},
		{args: []string{"stampede", "--dry-run", "--workers", "http://127.0.0.1:7070", "-o", "vegeta={dir}/v.bin"},
			want: "v.bin: each worker writes its own file under its working directory, so FILE must be a relative path below it (accepted: such as vegeta/results.bin"},
		{args: []string{"stampede", "--dry-run", "--workers", "http://127.0.0.1:7070", "-o", "vegeta=../v.bin"},
			want: "--output: vegeta=../v.bin: each worker writes its own file under its working directory"},
		{args: []string{"stampede", "--dry-run", "--workers", "dns:herd-workers:7070", "--target", "http://127.0.0.1:1/items/{key}", "--trigger", "burst"}, want: "--workers: dns:herd-workers:7070 is on another machine, and http://127.0.0.1:1 listens on this machine's loopback"},
		{args: []string{"stampede", "--dry-run", "--ttl", "1h"},
			want: "--ttl: 1h0m0s is not shorter than stale_ttl's default, 10m0s (accepted: below 10m0s, or a stale_ttl above 1h0m0s)", not: "--stale-ttl"},
		{args: []string{"stampede", "--dry-run", "--stale-ttl", "30s"}, want: "--stale-ttl: 30s is not longer than ttl, 1m0s (accepted: above 1m0s, or a shorter ttl)", not: "--ttl"},
		{args: []string{"testbed", "up", "--ttl", "1h"}, want: "--ttl: 1h0m0s is not shorter than stale_ttl's default", not: "--stale-ttl"},
		{args: []string{"stampede", "--dry-run", "--keys", "50"},
			want: "--keys: 50 is fewer than hot_keys' default, 100 (accepted: 100 or more, or a hot_keys of at most 50)", not: "--hot-keys"},
		{args: []string{"stampede", "--dry-run", "--shed-min-limit", "20", "--shed-max-limit", "10", "--arms", "shed"},
			want: "--shed-max-limit: 10 out of range (accepted: shed_min_limit, 20, to 10000)", not: "shed-initial-limit"},
		{args: []string{"stampede", "--dry-run", "--keys", "50", "--hot-keys", "60"}, want: "--hot-keys: 60 is more than keys, 50 (accepted: 1 to keys"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "knobs:\n  ttl: 1h\n"},
			want: "s.yaml:2: knobs.ttl: 1h0m0s is not shorter than stale_ttl's default, 10m0s", not: "stale-ttl"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "arms:\n  - name: a\n    strategy: lock\n    knobs:\n      ttl: 1h\n"},
			want: "s.yaml:2: arms[0]: ttl: 1h0m0s is not shorter than stale_ttl's default, 10m0s"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml", "--stale-ttl", "30m"}, files: map[string]string{"s.yaml": "arms:\n  - name: a\n    strategy: lock\n    knobs:\n      ttl: 1h\n"},
			want: "s.yaml:2: arms[0]: stale_ttl: 30m0s is not longer than ttl, 1h0m0s (accepted: above 1h0m0s, or a shorter ttl)", not: "default"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load:\n  keys: 50\n"},
			want: "s.yaml:2: load.keys: 50 is fewer than hot_keys' default, 100", not: "hot-keys"},
	},
	"a gate the run cannot decide": {
		{args: []string{"stampede", "--dry-run", "--gate", "retries.hedges > 0"}, want: "retries.hedges counts the clients' hedged attempts, and no arm hedges"},
		{args: []string{"stampede", "--dry-run", "--gate", "retries.amplification < 0.5"}, want: "retries.amplification < 0.5 fails whatever the run does"},
		{args: []string{"report", "{dir}/r.json", "--gate", "layers.api_amplification < 3"}, files: map[string]string{"r.json": resultsFile},
			want: "no arm of these results has layers.api_amplification: the run did not measure it, so the gate could only fail"},
		{args: []string{"report", "--baseline", "{dir}/r.json", "{dir}/r.json", "--max-regression", "http.drop_rate=2"}, files: map[string]string{"r.json": resultsFile},
			want: `max regression "http.drop_rate=2": http.drop_rate is a ratio, 0 to 1, and cannot grow by 2, so the limit holds whatever the run does`},
		{args: []string{"stampede", "--dry-run", "--gate", "workers.count >= 2"}, want: "workers.count is a figure of the workers that send the load, and without --workers it is sent from here, so the gate could only fail"},
		{args: []string{"stampede", "--dry-run", "--gate", "burst.clients >= 5"}, want: "burst.clients is the release of a burst (the burst or writes trigger), and the plan's trigger is expire, so the gate could only fail (accepted: --trigger burst, or a gate on another figure)"},
		{args: []string{"stampede", "--dry-run", "--gate", "escape.rps > 10"}, want: "escape.rps is measured by --escape, which the plan leaves off, so the gate could only fail"},
		{args: []string{"stampede", "--dry-run", "--gate", "trigger.detail.exit_code == 0"}, want: "trigger.detail.exit_code is a detail of another trigger than expire, so the gate could only fail (accepted: one of expire's: "},
		{args: []string{"stampede", "--dry-run", "--gate", "http.drop_rate < 150%"}, want: `--gate: "http.drop_rate < 150%": http.drop_rate < 150% holds whatever the run does: a ratio is 0% to 100% (accepted: a bound inside it`},
		{args: []string{"stampede", "--dry-run", "--gate", "http.drop_rate > 100%"}, want: "http.drop_rate > 100% fails whatever the run does"},
		{args: []string{"stampede", "--dry-run", "--gate", "db.queries < 0"}, want: `--gate: "db.queries < 0": db.queries < 0 fails whatever the run does: db.queries is never negative (accepted: a bound above 0`},
		{args: []string{"stampede", "--dry-run", "--gate", "db.queries >= 0"}, want: "db.queries >= 0 holds whatever the run does: db.queries is never negative"},
		{args: []string{"stampede", "--dry-run", "--gate", "http.drop_rate < 1.5"}, want: "http.drop_rate < 1.5 holds whatever the run does: a ratio is 0 to 1, here as a bare number too (accepted: a bound inside it, such as http.drop_rate < 0.01"},
		{args: []string{"report", "--gate", "db.queries < 0", "{dir}/r.json"}, files: map[string]string{"r.json": resultsFile},
			want: "db.queries < 0 fails whatever the run does"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "gates:\n  - \"lock:http.drop_rate <= 100%\"\n"},
			want: "s.yaml:2: gates[0]: \"lock:http.drop_rate <= 100%\": http.drop_rate <= 100% holds whatever the run does"},
	},
	"a gate that does not read": {
		{args: []string{"stampede", "--dry-run", "--gate", "db.queries => 10"}, want: `--gate: "db.queries => 10": read the operator "=>", which is not one (did you mean >=?)`},
		{args: []string{"stampede", "--dry-run", "--gate", "db.querys < 10"}, want: `unknown path "db.querys" (nearest: db.queries, db.queries_total, warm.queries; all `},
		{args: []string{"report", "--baseline", "{dir}/old.json", "{dir}/new.json", "--max-regression", "db.querys=10%"}, want: `max regression "db.querys=10%": unknown path "db.querys" (nearest: db.queries,`},
	},
	"a value or argument that does not parse": {
		{args: []string{"init", "--url", "http://127.0.0.1:8080/items/{key}#frag", "--file", "{dir}/t.yaml"}, want: "a fragment, #frag, which a request never sends (accepted: a URL without one)"},
		{args: []string{"stampede", "--dry-run", "--retry", "immediate:0"}, want: "N 0 makes no retries: say none"},
		{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--vary", "burst=10..100", "--repeat", "9223372036854775807"}, want: "--repeat: 9223372036854775807 out of range (accepted: 1 to 20"},
		{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--vary", "rate=9999999999999999999..99999999999999999999"}, want: `FROM: "9999999999999999999" out of range (accepted: a whole number of 1 or more`},
		{args: []string{"stampede", "--dry-run", "--trigger", "command", "--run", "true", "--ended-when", "http://127.0.0.1:99999/"}, want: "--ended-when: http://127.0.0.1:99999/: port 99999 out of range (accepted: 1 to 65535)"},
		{args: []string{"stampede", "--dry-run", "--trigger", "command", "--run", "true", "--ended-when", "http://user:secretpw@127.0.0.1:8080/"}, want: "credentials in the URL", not: "secretpw"},
		{args: []string{"stampede", "--dry-run", "--target", "http://u:p@127.0.0.1:8080/it%zz/{key}"}, want: `--target: target "http://xxxxx@127.0.0.1:8080/it%zz/{key}" is not a URL: invalid URL escape "%zz"`, not: "u:p@"},
		{args: []string{"init", "--url", "http://127.0.0.1:0/items/{key}", "--file", "{dir}/t.yaml"}, want: "--url: target http://127.0.0.1:0/items/{key}: port 0 out of range (accepted: 1 to 65535)"},
		{args: []string{"init", "--url", "http://u:p@127.0.0.1:8080/items/{key}", "--file", "{dir}/t.yaml"}, want: "credentials in the URL", not: "u:p@"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "testbed:\n  db_pool: 10000000000\n"},
			want: "s.yaml:2: testbed.db_pool: 10000000000 out of range (accepted: a whole number: database connections per replica (Postgres or MariaDB), 1 to 1000)"},
		{args: []string{"stampede", "--dry-run", "--trigger", "slowdb", "--slowdb-latency", "500us"}, want: "--slowdb-latency: 500µs is not whole milliseconds, and toxiproxy's latency toxic takes only those (accepted: such as 1ms or 300ms)"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "metrics_addr: \"0.0.0.0:9090\"\n"},
			want: "s.yaml:1: metrics_addr: \"0.0.0.0:9090\" is not a loopback address", not: "for usage"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "target: \"http://svc.example/items/{key}\"\ntrigger:\n  name: burst\n"},
			want: "s.yaml:1: target: host svc.example is not loopback and not allowed", not: "for usage"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst"}, files: map[string]string{"t.yaml": strings.Replace(targetFile, "request:\n  path: /items/{key}\n", "requests:\n  - {name: a, weight: 9223372036854775807, path: \"/a/{key}\", herd: true}\n  - {name: b, weight: 2, path: /b}\n", 1)},
			want: "requests[0].weight: 9223372036854775807 out of range (accepted: 1 to 1000000"},
		{args: []string{"stampede", "--dry-run", "--target", "http://127.0.0.1:1/items/{key}", "--arms", "write=queue"},
			want: `--arms: write=queue: not an arm of http://127.0.0.1:1/items/{key} (accepted: baseline, or a client policy: retry=full-jitter:100ms:2s:3`},
		{args: []string{"stampede", "--dry-run", "--rate", "1.5"}, want: `invalid argument "1.5" for "--rate" flag: "1.5" is not a rate (accepted: whole requests per second, such as 500, 1k, 1.5k or 2k/s, 1 to 20000)`},
		{args: []string{"stampede", "--dry-run", "--db-pool", "99999999999"}, want: "--db-pool: 99999999999 out of range (accepted: a whole number: database connections per replica (Postgres or MariaDB), 1 to 1000)", not: "is not a whole number"},
		{args: []string{"stampede", "--dry-run", "--keys", "99999999999999999999"}, want: "--keys: 99999999999999999999 out of range (accepted: a whole number"},
		{args: []string{"stampede", "--dry-run", "--breaker-failures", "-1", "--arms", "breaker"}, want: "--breaker-failures: -1 out of range (accepted: a whole number: breaker: consecutive failed loads that open it, 1 or more)", not: "0 or more"},
		{args: []string{"stampede", "--dry-run", "--timeout", "5"}, want: `--timeout: "5" is not a duration such as 500ms, 2s or 1m30s`},
		{args: []string{"run"}, want: "run: a scenario file is required, such as examples/stampede.yaml"},
		{args: []string{"run", "{dir}/a.yaml", "{dir}/b.yaml"}, want: "run: one argument, a scenario file, and 2 were given"},
		{args: []string{"report"}, want: "report: a results file is required, such as "},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load:\n  rate: 1.5k\n"},
			want: "s.yaml:2: load.rate:", not: "for usage"},
		{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--vary", "burst=-5..100"}, want: `--vary: burst=-5..100: FROM: "-5" is not a whole number of 1 or more`, not: "--burst"},
		{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--vary", "burst=10..10"}, want: "FROM 10 is not below TO 10 (accepted: FROM < TO, such as burst=10..100)"},
		{args: []string{"worker", "--listen", "abc"}, want: "--listen abc: not HOST:PORT (accepted: HOST:PORT, port 1 to 65535", not: "without a token"},
		{args: []string{"worker", "--listen", ":99999"}, want: `--listen :99999: port "99999" is not a number from 1 to 65535`},
		{args: []string{"testbed", "down", "--timeout", "0s"}, want: "--timeout: 0s out of range (accepted: more than 0, such as 30s, the default)"},
		{args: []string{"testbed", "down", "--timeout", "-1s"}, want: "--timeout: -1s out of range (accepted: more than 0"},
		{args: []string{"worker", "extra"}, want: "herdbench worker: takes no arguments, and was given extra"},
		{args: []string{"testbed", "up", "extra"}, want: "herdbench testbed up: takes no arguments, and was given extra"},
		{args: []string{"report", "{dir}/bad.json"}, files: map[string]string{"bad.json": "{\n  \"a\": 1,,\n}\n"},
			want: "bad.json:2: not JSON at column 10: invalid character ',' looking for beginning of object key string (accepted: a results.json that herdbench stampede or run wrote", not: "for usage"},
		{args: []string{"report", "{dir}/empty.json"}, files: map[string]string{"empty.json": ""},
			want: "empty.json: empty (accepted: a results.json that herdbench stampede or run wrote, such as ", not: "column"},
		{args: []string{"report", "{dir}/missing.json"}, want: "missing.json: no such file or directory (accepted: a results.json that herdbench stampede or run wrote", not: "for usage"},
		{args: []string{"report", "--baseline", "{dir}/missing.json", "{dir}/r.json"}, files: map[string]string{"r.json": resultsFile},
			want: "missing.json: no such file or directory (accepted: a results.json that herdbench stampede or run wrote", not: "for usage"},
		{args: []string{"report", "{dir}/sweep.json"}, files: map[string]string{"sweep.json": "{\"schema\": \"herdbench.sweep/v2\"}\n"},
			want: "sweep.json: a sweep's results (schema herdbench.sweep/v2), which report does not read: sweep -o renders a sweep's reports (accepted: a results.json", not: "cannot unmarshal"},
		{args: []string{"report", "{dir}/noarms.json"}, files: map[string]string{"noarms.json": "{\"schema\": \"herdbench.results/v2\", \"arms\": []}\n"},
			want: "noarms.json: no arms, and not partial: a run writes each arm it measured (accepted: a results.json", not: "for usage"},
		{args: []string{"report", "{dir}/nullarm.json"}, files: map[string]string{"nullarm.json": "{\"schema\": \"herdbench.results/v2\", \"arms\": [null]}\n"},
			want: "nullarm.json: arms[0] has no name (null, or an arm without one) (accepted: a results.json", not: "for usage"},
		{args: []string{"run", "{dir}/missing.yaml"}, want: "missing.yaml: no such file or directory (accepted: a scenario file, such as examples/stampede.yaml)", not: "for usage"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": "name: t\nendpoints: [http://127.0.0.1:1\n"},
			want: "t.yaml:1: not YAML: did not find expected ',' or ']' (accepted: a target file in YAML, docs/targets.md)", not: "for usage"},
		{args: []string{"stampede", "--dry-run", "--warmup", "-1s"}, want: "--warmup: -1s is negative (accepted: 0 or more, such as 2s)"},
		{args: []string{"stampede", "--dry-run", "--after", "auto:1h"}, want: "exceeds the cap of 10m0s per arm (accepted: after at most 9m55s, with warmup 2s and before 3s)"},
		{args: []string{"stampede", "--dry-run", "--arms", "none,none"}, want: "--arms: none: named twice (accepted: each arm once)"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "arms:\n  - none\n  - none\n"},
			want: "s.yaml:3: arms[1] (none): named twice (accepted: each arm once)", not: "arms[0]"},
		{args: []string{"stampede", "--dry-run", "--target", "ftp://127.0.0.1/items/{key}"}, want: "--target: target ftp://127.0.0.1/items/{key}: scheme ftp not accepted (accepted: http:// or https://", not: "no such file"},
		{args: []string{"stampede", "--dry-run", "--trigger", "burst", "--target", "http://127.0.0.1:99999/items/{key}"}, want: "port 99999 out of range (accepted: 1 to 65535)"},
		{args: []string{"stampede", "--dry-run", "--workers", "http://127.0.0.1:99999"}, want: "--workers: http://127.0.0.1:99999: port 99999 out of range (accepted: 1 to 65535"},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": targetFile + "redis:\n  address: 127.0.0.1:99999\n"},
			want: `t.yaml:9: redis.address: "127.0.0.1:99999": port 99999 out of range (accepted: 1 to 65535)`},
		{args: []string{"init", "--url", "http://127.0.0.1:8080/items/{key}", "--redis", "127.0.0.1:99999", "--file", "{dir}/x.yaml"}, want: `--redis: "127.0.0.1:99999": port 99999 out of range (accepted: host:port, port 1 to 65535`},
		{args: []string{"init", "--url", "http://127.0.0.1:8080/items/{key}", "--file", "{dir}/nodir/x.yaml"}, want: "nodir/x.yaml: no directory "},
		{args: []string{"worker", "--token-file", "{dir}/missing"}, want: "--token-file: {dir}/missing: no such file or directory (accepted: a file holding the token, 16 characters or more"},
		{args: []string{"stampede", "--dry-run", "--dependency", "mysql", "--trigger", "outage"}, want: `--dependency: unknown "mysql" (accepted: postgres, redis)`, not: "--trigger"},
		{args: []string{"stampede", "--dry-run", "-o", "vegeta", "-o", "vegeta"}, want: "herdbench: --output: vegeta: needs a file, vegeta=FILE (vegeta's results are binary; stdout has the table)\nRun"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "timeline:\n  warmup: -1s\n"},
			want: "s.yaml:2: timeline.warmup: -1s is negative (accepted: 0 or more"},
		{args: []string{"stampede", "--dry-run", "--escape", "50%,75%"}, want: `"--escape" flag: "50%,75%": share 75% does not step down from 50% (accepted: on (75%,50%,25%,10%`},
		{args: []string{"stampede", "--dry-run", "--escape", "100%"}, want: `share 100% is not above 0% and under 100% of the rate (accepted: on`},
		{args: []string{"stampede", "--dry-run", "--escape", "on:1s"}, want: `LIMIT 1s out of range (accepted: on`},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "escape: 10%,20%\n"},
			want: "s.yaml:1: escape:", not: "for usage"},
	},
	"a place the run cannot write": {
		{args: []string{"init", "--url", "http://127.0.0.1:8080/items/{key}", "--file", "{dir}"}, want: "is a directory (accepted: a file's path, such as herdbench-target.yaml)", not: "--force"},
		{args: []string{"report", "{dir}/r.json", "-o", "html={dir}"}, files: map[string]string{"r.json": resultsFile}, want: "is a directory (accepted: a file's path, made with its directories if need be)"},
		{args: []string{"stampede", "--dry-run", "--results-dir", "{dir}/f"}, files: map[string]string{"f": "x"},
			want: "--results-dir: {dir}/f is a file (accepted: a directory, or a path where one can be made)"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml", "--results-dir", "{dir}/f/sub"}, files: map[string]string{"f": "x", "s.yaml": "load:\n  rate: 100\n"},
			want: "--results-dir: {dir}/f/sub is under {dir}/f, a file"},
		{args: []string{"stampede", "--dry-run", "--json", "{dir}/a.json", "-o", "json={dir}/a.json"},
			want: "{dir}/a.json is written twice, by json and by json (accepted: one output a file)"},
		{args: []string{"stampede", "--dry-run", "-o", "html={dir}"}, want: "html={dir}: {dir} is a directory (accepted: a file's path"},
	},
}

// resultsFile is a results file that reads, for report.
var resultsFile = func() string {
	b, err := os.ReadFile("../../reporters/testdata/results.json")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// targetFile is a target file's start, on loopback, keys 1 to 100.
const targetFile = "name: t\nendpoints: [http://127.0.0.1:1]\nrequest:\n  path: /items/{key}\nkeys:\n  range: {from: 1, to: 100}\n  hot: 10\n"

// TestDryRunRefusesWhatTheRunRefuses runs the inputs of every kind that
// take --dry-run both with it and without: the same exit code and the same
// message. Without, PATH is empty, so that a run that got past its checks
// could start nothing (no provider can run: exit 1, and the test fails).
func TestDryRunRefusesWhatTheRunRefuses(t *testing.T) {
	for _, kind := range slices.Sorted(maps.Keys(badInputs)) {
		for _, in := range badInputs[kind] {
			i := slices.Index(in.args, "--dry-run")
			if i < 0 {
				continue
			}
			dir, state := t.TempDir(), t.TempDir()
			writeFiles(t, dir, in.files)
			dry := append(withDir(in.args, dir), "--state-dir", state)
			real := slices.Delete(slices.Clone(dry), i, i+1)
			env := []string{"PATH=" + t.TempDir(), "HOME=" + dir}
			dryCode, _, dryErr := herdbenchEnv(t, env, dry...)
			code, _, stderr := herdbenchEnv(t, env, real...)
			// a check of what the testbed to start has needs a provider
			// that can start it, which PATH hides: both fail alike then
			noProvider := code == exitError && strings.Contains(stderr, "no provider can run the testbed")
			if (code != exitUsage && !noProvider) || code != dryCode || stderr != dryErr {
				t.Errorf("%s:\nherdbench %s = exit %d, %q\nwithout --dry-run = exit %d, %q; want both exit 2 (or 1, no provider) alike",
					kind, strings.Join(dry, " "), dryCode, dryErr, code, stderr)
			}
		}
	}
}

// TestBadInputIsRefused runs every input of every kind: exit 2, the
// message, no stack trace, and nothing started (no testbed recorded in
// the state directory).
func TestBadInputIsRefused(t *testing.T) {
	for _, kind := range slices.Sorted(maps.Keys(badInputs)) {
		t.Run(kind, func(t *testing.T) {
			for _, in := range badInputs[kind] {
				dir, state := t.TempDir(), t.TempDir()
				args := withDir(in.args, dir)
				if slices.Contains(args, "stampede") || slices.Contains(args, "run") || slices.Contains(args, "testbed") {
					args = append(args, "--state-dir", state)
				}
				writeFiles(t, dir, in.files)
				code, _, stderr := herdbench(t, args...)
				want := strings.NewReplacer("{dir}", dir, "{state}", state).Replace(in.want)
				if code != exitUsage || !strings.Contains(stderr, want) || strings.Contains(stderr, "goroutine ") ||
					(in.not != "" && strings.Contains(stderr, in.not)) {
					t.Errorf("herdbench %s = exit %d, stderr %q; want exit 2, stderr containing %q (and not %q)", strings.Join(args, " "), code, stderr, want, in.not)
				}
				if entries, _ := os.ReadDir(state); len(entries) > 0 {
					t.Errorf("herdbench %s left %d entries in its state directory; want nothing started", strings.Join(args, " "), len(entries))
				}
			}
		})
	}
}

// TestBadInputKindsAreDocumented: docs/bad-input.md's table names every
// kind the test runs, and no other.
func TestBadInputKindsAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/bad-input.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^\| ([^|]+?) \|`).FindAllStringSubmatch(string(b), -1) {
		if m[1] != "kind" && !strings.HasPrefix(m[1], "---") {
			documented = append(documented, m[1])
		}
	}
	tested := slices.Sorted(maps.Keys(badInputs))
	slices.Sort(documented)
	if !slices.Equal(documented, tested) {
		t.Errorf("docs/bad-input.md's kinds = %q; want the kinds TestBadInputIsRefused runs, %q", documented, tested)
	}
}

func withDir(args []string, dir string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "{dir}", dir)
	}
	return out
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
