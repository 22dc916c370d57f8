// Package cachetest starts real HTTP caches and a load balancer for tests,
// from Debian's packages, in front of the testbed's replicas: nginx with
// the cache purge module (nginx.conf.tmpl), Varnish (varnish.vcl.tmpl) and
// HAProxy (haproxy.cfg.tmpl). Each runs as a
// process of the test's own, on a free loopback port, in a directory of
// its own; it is killed, with its workers, when the test ends. A machine
// without them skips the test, unless CI is set: then it fails.
package cachetest

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/herdbench/herdbench/testbed/proctest"
)

var (
	//go:embed nginx.conf.tmpl
	nginxConf string
	//go:embed varnish.vcl.tmpl
	varnishVCL string
	//go:embed haproxy.cfg.tmpl
	haproxyCfg string
)

// PurgeModule is where Debian's libnginx-mod-http-cache-purge puts the
// module.
const PurgeModule = "/usr/lib/nginx/modules/ngx_http_cache_purge_module.so"

// require skips t, or fails it with CI set, when a binary or file is
// missing; pkgs names the Debian packages that bring them.
func require(t testing.TB, pkgs string, paths ...string) []string {
	t.Helper()
	var found []string
	for _, p := range paths {
		full := p
		if !strings.HasPrefix(p, "/") {
			var err error
			if full, err = exec.LookPath(p); err != nil {
				full = firstOf("/usr/sbin/"+p, "/usr/local/sbin/"+p)
			}
		} else if _, err := os.Stat(p); err != nil {
			full = ""
		}
		if full == "" {
			msg := fmt.Sprintf("%s missing (apt-get install %s)", p, pkgs)
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set and %s", msg)
			}
			t.Skip(msg)
		}
		found = append(found, full)
	}
	return found
}

func firstOf(paths ...string) string {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Nginx starts nginx as a caching reverse proxy in front of origins
// (host:port each), entries valid for valid (whole seconds, at least one),
// and returns its base URL.
func Nginx(t testing.TB, origins []string, valid time.Duration) string {
	t.Helper()
	if valid < time.Second {
		t.Fatalf("nginx validity %s: nginx reads whole seconds, at least 1s", valid)
	}
	bins := require(t, "nginx libnginx-mod-http-cache-purge", "nginx", PurgeModule)
	dir := proctest.WorkDir(t, "nginx")
	listen := proctest.FreeAddr(t)
	conf := render(t, nginxConf, map[string]any{"Dir": dir, "PurgeModule": PurgeModule, "Origins": origins,
		"Listen": listen, "Valid": fmt.Sprintf("%ds", int(valid.Seconds()))}) // nginx reads whole seconds
	path := filepath.Join(dir, "nginx.conf")
	write(t, path, conf)
	done := proctest.Start(t, dir, bins[0], "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", path)
	return ready(t, "http://"+listen, filepath.Join(dir, "error.log"), done)
}

// Varnish starts varnishd in front of origins (host:port each, round
// robin), objects fresh for ttl, and returns its base URL.
func Varnish(t testing.TB, origins []string, ttl time.Duration) string {
	t.Helper()
	bins := require(t, "varnish", "varnishd")
	dir := proctest.WorkDir(t, "varnish")
	listen := proctest.FreeAddr(t)
	type origin struct{ Host, Port string }
	var os_ []origin
	for _, o := range origins {
		h, p, err := net.SplitHostPort(o)
		if err != nil {
			t.Fatalf("origin %q: %v", o, err)
		}
		os_ = append(os_, origin{h, p})
	}
	vcl := render(t, varnishVCL, map[string]any{"Origins": os_, "TTL": fmt.Sprintf("%dms", ttl.Milliseconds())})
	path := filepath.Join(dir, "default.vcl")
	write(t, path, vcl)
	log := filepath.Join(dir, "varnishd.log")
	done := proctest.Start(t, dir, bins[0], "-F", "-n", filepath.Join(dir, "instance"), "-a", listen, "-f", path,
		"-s", "malloc,64m", "-j", "none", "-p", "default_grace=0", "-p", "thread_pool_min=50")
	return ready(t, "http://"+listen, log, done)
}

// HAProxy starts HAProxy balancing round robin over origins (host:port
// each), retrying a failed request (a 5xx, a failed connection) up to
// retries times with redispatch to another server, and returns its base
// URL and its stats page's. Its servers are api-0, api-1, ... in origins'
// order, with no health check.
func HAProxy(t testing.TB, origins []string, retries int) (base, stats string) {
	return startHAProxy(t, map[string]any{"Origins": origins, "Retries": retries})
}

// HAProxyChecked is HAProxy with a health check on every server, every
// 100 ms (down after two failures, up after two passes, a check
// waiting up to a second), each of weight 100, and slowstart
// ("": none): a server that comes back ramps its weight over it, which
// its stats page's weight shows (at weight 1 it would read 1 throughout).
func HAProxyChecked(t testing.TB, origins []string, retries int, slowstart string) (base, stats string) {
	return startHAProxy(t, map[string]any{"Origins": origins, "Retries": retries, "Check": true, "SlowStart": slowstart})
}

// HAProxyQueued is HAProxy with no retries whose servers each take at
// most maxconn requests at once: the rest wait in its queue, up to a
// second (timeout queue is timeout connect), then HAProxy answers 503.
func HAProxyQueued(t testing.TB, origins []string, maxconn int) (base, stats string) {
	return startHAProxy(t, map[string]any{"Origins": origins, "Retries": 0, "MaxConn": maxconn})
}

// HAProxyLogged is HAProxy that also logs a line a request on its
// standard output, the file log names: "herdbench-request rc=N
// status=S srv=V", N its retries (%rc, "+" first when one was
// redispatched), S the status it answered, V the server it ended on
// (<NOSRV> when it reached none). It is HAProxy's second account of its retries,
// beside its stats page's.
func HAProxyLogged(t testing.TB, origins []string, retries int) (base, stats, log string) {
	t.Helper()
	data := map[string]any{"Origins": origins, "Retries": retries, "Log": true}
	base, stats = startHAProxy(t, data)
	return base, stats, data["Output"].(string)
}

// HAProxyTwoBackends is HAProxy with a second frontend beside the
// first, each with a backend of its own: the first's, api, balances over
// origins (servers api-0, api-1, ...), the second's, other, over others
// (other-0, ...); no retries, no health check. It returns each
// frontend's base URL and the stats page's.
func HAProxyTwoBackends(t testing.TB, origins, others []string) (base, otherBase, stats string) {
	t.Helper()
	other := struct {
		Name, Listen string
		Origins      []string
	}{"other", proctest.FreeAddr(t), others}
	base, stats = startHAProxy(t, map[string]any{"Origins": origins, "Retries": 0, "Other": other})
	return base, "http://" + other.Listen, stats
}

func startHAProxy(t testing.TB, data map[string]any) (base, stats string) {
	t.Helper()
	bins := require(t, "haproxy", "haproxy")
	dir := proctest.WorkDir(t, "haproxy")
	listen, statsAddr := proctest.FreeAddr(t), proctest.FreeAddr(t)
	data["Listen"], data["Stats"] = listen, statsAddr
	path := filepath.Join(dir, "haproxy.cfg")
	write(t, path, render(t, haproxyCfg, data))
	done := proctest.Start(t, dir, bins[0], "-f", path, "-db")
	data["Output"] = filepath.Join(dir, "output.log")
	ready(t, "http://"+statsAddr, filepath.Join(dir, "output.log"), done)
	return "http://" + listen, "http://" + statsAddr + "/stats"
}

func render(t testing.TB, text string, data any) string {
	t.Helper()
	var b bytes.Buffer
	if err := template.Must(template.New("").Parse(text)).Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ready polls base until it answers, for at most 20 s, and returns it; a
// process that exited fails t at once.
func ready(t testing.TB, base, log string, done <-chan struct{}) string {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := client.Get(base + "/herdbench-ready")
		if err == nil {
			resp.Body.Close()
			return base
		}
		select {
		case <-done:
			err = fmt.Errorf("it exited: %w", err)
		default:
		}
		if time.Now().After(deadline) || strings.HasPrefix(err.Error(), "it exited") {
			b, _ := os.ReadFile(log)
			o, _ := os.ReadFile(filepath.Join(filepath.Dir(log), "output.log"))
			t.Fatalf("%s did not answer: %v\n%s\n%s", base, err, b, o)
		}
		time.Sleep(50 * time.Millisecond) // polling, with the deadline above
	}
}

// HAProxyPage is HAProxy's CSV stats page, read apart from
// herdbench's reader (targets): backend api's rows by server name (BACKEND for the
// backend's own), each column's whole number (empty: 0).
func HAProxyPage(t testing.TB, stats string) map[string]map[string]int64 {
	t.Helper()
	return HAProxyBackendPage(t, stats, "api")
}

// HAProxyBackendPage is HAProxyPage for backend.
func HAProxyBackendPage(t testing.TB, stats, backend string) map[string]map[string]int64 {
	t.Helper()
	page, err := haproxyText(stats, backend)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int64{}
	for server, row := range page {
		m := map[string]int64{}
		for col, v := range row {
			m[col], _ = strconv.ParseInt(v, 10, 64)
		}
		out[server] = m
	}
	return out
}

// HAProxyText is HAProxy's CSV stats page as HAProxyPage reads it, each
// column's text (status: UP, DOWN, ...): for a test that reads it while
// a run goes on, from a goroutine of its own.
func HAProxyText(stats string) (map[string]map[string]string, error) {
	return haproxyText(stats, "api")
}

func haproxyText(stats, backend string) (map[string]map[string]string, error) {
	resp, err := http.Get(stats + ";csv")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	rows, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil || len(rows) < 2 {
		return nil, fmt.Errorf("HAProxy's stats page: %d rows, %v", len(rows), err)
	}
	head := rows[0]
	head[0] = strings.TrimPrefix(head[0], "# ")
	out := map[string]map[string]string{}
	for _, r := range rows[1:] {
		if len(r) < 2 || r[0] != backend {
			continue
		}
		m := map[string]string{}
		for i, col := range head {
			if i < len(r) {
				m[col] = r[i]
			}
		}
		out[r[1]] = m
	}
	return out, nil
}
