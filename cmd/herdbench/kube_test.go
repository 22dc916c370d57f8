package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input to kube and to --workers is refused before anything runs, exit
// 2, naming the flag and what is accepted.
func TestKubeAndWorkersRefuseBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"kube", "--configmap", "c"}, "--image: required (accepted: the herdbench image"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--workers", "0"}, "--workers: 0 (accepted: 1 to 1000)"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--name", "Herd_1"}, `--name: "Herd_1"`},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "testbed", "up"}, `command "testbed" (accepted: stampede or run`},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--workers", "x"}, "the manifests set it"},
		{[]string{"worker", "--idle-timeout", "-1s"}, "--idle-timeout -1s is negative"},
		// the controller's command line, as its own command would refuse
		// it in the cluster; and what goes into the manifests
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--rate", "-1"}, "--rate: -1 out of range (accepted: 1 to"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--zipf", "NaN"}, "--zipf: NaN out of range (accepted: greater than 1)"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--trigger", "bogus"}, `--trigger: unknown "bogus" (accepted: expire,`},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--gate", "db.queries => 10"}, `did you mean >=?`},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--outage", "5s"}, "--outage: an option of trigger outage, and the plan's trigger is expire"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "--bogus", "x"}, "after --: run: unknown flag: --bogus"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "http://x"}, `--allow-host: "http://x" is not a host name`},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--worker-cpu", "-1"}, `--worker-cpu: "-1" is not above 0`},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--name", strings.Repeat("a", 62)}, "would not be a DNS label: must be no more than 63 characters (accepted: a name of at most 51 characters"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--name", "1herd"}, "(accepted: a name of at most 51 characters that starts with a letter"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--worker-cpu", "1e9"}, `--worker-cpu: "1e9" is not above 0 and at most 64 (accepted: a CPU quantity such as 1 or 500m, up to 64 cores)`},
		// a target the controller's pod cannot reach
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede"}, "after --: stampede without --target would start the local testbed in the controller's pod"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "http://127.0.0.1:8080/items/{key}", "--trigger", "burst"}, "loopback, which in a pod is the pod itself"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "http://svc:8080/items/{key}", "--trigger", "burst"}, "--allow-host: svc, the host of --target after --, is not listed: the workers would refuse it (accepted: --allow-host svc)"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "target.yaml"}, "--target target.yaml is not in the ConfigMap"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "stampede", "--target", "http://svc:8080/items/{key}"}, "--target: http://svc:8080/items/{key}: no --trigger given, and the default, expire, needs"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "stampede", "--target", "http://svc:8080/items/{key}", "--trigger", "outage"}, "--trigger: http://svc:8080/items/{key}: trigger outage needs toxiproxy"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "scenario.yaml"}, "run's scenario file scenario.yaml is not in the ConfigMap"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--secret", "Bad_Name"}, `--secret: "Bad_Name"`},
		// run's flags, as run checks them without its scenario (the ConfigMap's)
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/s.yaml", "--rate", "0"}, "--rate: 0 out of range (accepted: 1 to 20000 requests/s)"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/s.yaml", "--zipf", "NaN"}, "--zipf: NaN out of range (accepted: greater than 1)"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/s.yaml", "--trigger", "bogus"}, `--trigger: unknown "bogus" (accepted: expire,`},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/s.yaml", "--gate", "db.querys < 1"}, `--gate: "db.querys < 1": unknown path "db.querys" (nearest: db.queries,`},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/s.yaml", "--target", "http://127.0.0.1:8080/items/{key}"}, "--target http://127.0.0.1:8080/items/{key}: loopback, which in a pod is the pod itself"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/s.yaml", "--repeat", "0"}, "--repeat: 0 out of range (accepted: 1 to 20 runs of each arm)"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/t.yaml", "--repeat", "0"}, "--repeat: 0 out of range (accepted: 1 to 20 runs of each arm)"},
		// a file in the ConfigMap, once its path is cleaned
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/../etc/t.yaml"}, "--target /config/../etc/t.yaml (/etc/t.yaml) is not in the ConfigMap"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/"}, "--target /config/ (/config) is not in the ConfigMap, the only files the controller's pod has (accepted: /config/FILE, FILE one of the keys of --configmap, which is mounted there)"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/sub/s.yaml"}, "run's scenario file /config/sub/s.yaml is not in the ConfigMap"},
		// the testbed's options beside a service, as the stampede refuses them
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/t.yaml", "--replicas", "2"}, "--replicas: starts the bundled testbed, and --target /config/t.yaml is a service herdbench did not start (accepted: leave it out)"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/s.yaml", "--target", "/config/t.yaml", "--ttl", "5s"}, "--ttl: a knob of the bundled testbed's replicas, which --target /config/t.yaml does not run"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "stampede", "--target", "http://svc:8080/items/{key}", "--trigger", "burst", "--cache", "memcached"}, "--cache: starts the bundled testbed, and --target http://svc:8080/items/{key} is a service"},
		// an output in the ConfigMap's mount, which is read-only
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/t.yaml", "--json", "/config/out.json"}, "--json: /config/out.json is in the ConfigMap's mount, /config, which is read-only (accepted: a path under /work, the controller's working directory, an emptyDir, such as /work/out.json or out.json)"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/t.yaml", "--results-dir", "/config/r"}, "--results-dir: /config/r is in the ConfigMap's mount"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/s.yaml", "-o", "html=../config/x.html"}, "--output: html=../config/x.html: ../config/x.html is in the ConfigMap's mount"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/t.yaml", "-o", "bogus"}, `--output: bogus: unknown format "bogus" (accepted: html,`},
		// names the cluster would refuse
		{[]string{"kube", "--image", "i", "--configmap", "Bad_Name"}, `--configmap: "Bad_Name": a lowercase RFC 1123 subdomain`},
		{[]string{"kube", "--image", "bad image", "--configmap", "c"}, `--image: "bad image": invalid reference format (accepted: the herdbench image the cluster pulls, [REGISTRY/]REPOSITORY[:TAG][@DIGEST] with a lower-case repository`},
		{[]string{"kube", "--image", "UPPER/Img:1", "--configmap", "c"}, `--image: "UPPER/Img:1": invalid reference format: repository name (Img) must be lowercase`},
		// the stampede's own checks (prepare), as the pod's would refuse them
		{[]string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "stampede", "--target", "http://svc:8080/items/{key}", "--trigger", "burst", "--arms", "lock", "--yes"}, "--arms: lock: not an arm of http://svc:8080/items/{key}"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/s.yaml", "--target", "http://svc:8080/items/{key}", "--yes"}, "--allow-host: svc, the host of --target after --, is not listed"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/t.yaml", "--metrics-addr", "0.0.0.0:9090", "--yes"}, `--metrics-addr: "0.0.0.0:9090" is not a loopback address`},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/t.yaml", "-o", "html=a.html", "-o", "markdown=a.html", "--yes"}, "a.html is written twice, by html and by markdown"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/t.yaml", "--ttl", "-1s", "--yes"}, "--ttl: a knob of the bundled testbed's replicas"},
		// a pod has no terminal to confirm the hosts on
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/t.yaml"}, "--yes: not given after --, and the controller's pod has no terminal to ask on: stampede would refuse to send to the target's hosts, which in a pod are never loopback (accepted: --yes after --, once you have read the hosts the plan touches, as stampede --dry-run with the same flags prints them)"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--allow-host", "svc", "--", "stampede", "--target", "http://svc:8080/items/{key}", "--trigger", "burst"}, "--yes: not given after --"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/s.yaml"}, "--yes: not given after --, and the controller's pod has no terminal to ask on: run would refuse"},
		// a flag given twice, as the root command refuses it
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--target", "/config/t.yaml", "--rate", "1000", "--rate", "2000"}, `after --: stampede: --rate: given twice, "1000" and "2000" (accepted: one value; the second would replace the first)`},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "run", "/config/s.yaml", "--trigger", "burst", "--trigger", "expire"}, `after --: run: --trigger: given twice, "burst" and "expire"`},
		// every problem at once, not the first alone
		{[]string{"kube", "--workers", "0", "--", "stampede", "--target", "/config/t.yaml", "--rate", "0"}, "--image: required (accepted: the herdbench image the cluster pulls, such as registry.example/herdbench:v1)\n--configmap: required (accepted: the name of a ConfigMap holding the target file)\n--workers: 0 (accepted: 1 to 1000)\n--rate: 0 out of range"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--token-secret", "Bad_Name"}, `--token-secret: "Bad_Name"`},
		{[]string{"worker", "--listen", ":7070"}, "--listen :7070: beyond loopback without a token"},
		{[]string{"worker", "--listen", "0.0.0.0:7070"}, "--listen 0.0.0.0:7070: beyond loopback without a token"},
		{[]string{"worker", "--token-file", "/nonexistent/token"}, "--token-file: /nonexistent/token: no such file or directory (accepted: a file holding the token"},
		{[]string{"stampede", "--worker-token-file", "/nonexistent/token"}, "--worker-token-file: without --workers it would do nothing"},
		{[]string{"stampede", "--workers", "http://127.0.0.1:1", "--worker-token-file", "/nonexistent/token"}, "--worker-token-file: /nonexistent/token: no such file or directory (accepted: a file holding the token"},
		{[]string{"stampede", "--workers", "http://127.0.0.1:1", "--abort-on", "verdict == recovering"}, `--abort-on: "verdict == recovering": unknown verdict`},
		{[]string{"stampede", "--worker-count", "3"}, "--worker-count: 3 without --workers dns:NAME:PORT (accepted: with dns:NAME:PORT only, how many addresses to wait for"},
		{[]string{"stampede", "--workers", "http://127.0.0.1:1", "--worker-count", "1"}, "--worker-count: 1 without --workers dns:NAME:PORT"},
		{[]string{"stampede", "--workers", "dns:herdbench-workers"}, "--workers: dns:herdbench-workers: want a name and a port (accepted: dns:NAME:PORT such as dns:herdbench-workers:7070)"},
		{[]string{"stampede", "--workers", "dns:herdbench-workers:70000"}, `--workers: dns:herdbench-workers:70000: port "70000" is not 1 to 65535 (accepted: dns:NAME:PORT, PORT 1 to 65535)`},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("herdbench %s: exit %d, %q; want exit %d naming %q", strings.Join(tc.args, " "), code, errb.String(), exitUsage, tc.want)
		}
	}
	// a token shorter than 16 characters, in a file or the environment
	short := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(short, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var sout, serr bytes.Buffer
	if code := run(context.Background(), []string{"worker", "--token-file", short}, &sout, &serr); code != exitUsage ||
		!strings.Contains(serr.String(), "a token of 6 characters (accepted: 16 or more") {
		t.Errorf("worker --token-file of 6 characters: exit %d, %q; want 2 naming the length and the accepted", code, serr.String())
	}
	t.Setenv("HERDBENCH_WORKER_TOKEN", "short")
	serr.Reset()
	if code := run(context.Background(), []string{"stampede", "--workers", "http://127.0.0.1:1", "--dry-run"}, &sout, &serr); code != exitUsage ||
		!strings.Contains(serr.String(), "$HERDBENCH_WORKER_TOKEN: a token of 5 characters") {
		t.Errorf("stampede --workers with a short $HERDBENCH_WORKER_TOKEN: exit %d, %q; want 2 naming it", code, serr.String())
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"kube", "--image", "reg/herdbench:v1", "--configmap", "c", "--workers", "2"}, &out, &errb)
	if code != exitOK || !strings.Contains(out.String(), "completionMode: Indexed") || !strings.Contains(out.String(), "--target\n        - /config/target.yaml\n        - --yes") {
		t.Errorf("herdbench kube: exit %d\n%s%s; want the manifests, the controller reading /config/target.yaml with --yes", code, out.String(), errb.String())
	}
}

// Every feature takes --workers: --after auto, stop conditions on figures
// and on the verdict, and a sweep plan without a refusal (their runs on
// loopback workers are in workers/live_test.go).
func TestWorkersTakeEveryFeature(t *testing.T) {
	for _, args := range [][]string{
		{"stampede", "--after", "auto:20s"},
		{"stampede", "--abort-on", "http.drop_rate > 50%", "--abort-on", "verdict == metastable"},
		{"sweep", "--trigger", "expire", "--vary", "hot_keys=4..40", "--after", "auto:6s", "--abort-on", "verdict == metastable"},
		{"stampede", "--after", "auto:60s", "--escape", "on"},
		{"stampede", "-o", "vegeta=vegeta/results.bin"},
	} {
		args = append(args, "--workers", "http://127.0.0.1:1", "--dry-run", "--state-dir", t.TempDir())
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitOK {
			t.Errorf("herdbench %s: exit %d, %q; want 0", strings.Join(args, " "), code, errb.String())
		}
	}
}

// What only the ConfigMap's files decide is left to the pod: a run's
// value its scenario may complete (hot_keys beside --keys 50, a trigger
// beside --outage), a target file's trigger beside its option.
func TestKubeLeavesToThePodWhatItsFilesDecide(t *testing.T) {
	for _, after := range [][]string{
		{"run", "/config/s.yaml", "--keys", "50", "--yes"},
		{"run", "/config/s.yaml", "--outage", "5s", "--yes"},
		{"run", "/config/s.yaml", "--target", "http://svc:8080/items/{key}", "--yes"},
		{"stampede", "--target", "/config/t.yaml", "--outage", "5s", "--yes"},
		{"stampede", "--target", "/config/./t.yaml", "--yes"},
		{"stampede", "--target", "/config/t.yaml", "--after", "auto:60s", "--escape", "on", "--yes"},
		{"run", "/config/s.yaml", "-o", "html=x.html", "--json", "/work/r.json", "--results-dir", "r", "--yes"},
		// a gate on the workers' figures: the manifests give it its workers
		{"stampede", "--target", "/config/t.yaml", "--gate", "workers.start_skew_p99_ms < 5", "--yes"},
		// the pod's directories, not this machine's
		{"stampede", "--target", "/config/t.yaml", "--results-dir", "/proc/version", "--state-dir", "/proc/version", "--yes"},
	} {
		args := append([]string{"kube", "--image", "reg/herdbench:v1", "--configmap", "c", "--allow-host", "svc", "--"}, after...)
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitOK {
			t.Errorf("herdbench %s: exit %d, %q; want 0", strings.Join(args, " "), code, errb.String())
		}
	}
}
