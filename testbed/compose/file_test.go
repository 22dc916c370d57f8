package compose

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/scrape"
	"github.com/herdbench/herdbench/testbed/store"
)

func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }

// root is the repository's root, where docker-compose.yml lives.
const root = "../.."

// load reads docker-compose.yml with compose-go as docker compose does,
// with the given profiles.
func load(t *testing.T, profiles ...string) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, DefaultFile)},
		cli.WithWorkingDirectory(root), cli.WithProfiles(profiles), cli.WithOsEnv)
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("compose-go loads docker-compose.yml with profiles %v: %v", profiles, err)
	}
	return p
}

var observability = []string{"redis-exporter", "postgres-exporter", "prometheus", "grafana"}

var edges = []string{"edge-1", "edge-2", "edge-3"}

func TestComposeFileLoadsWithAndWithoutObservability(t *testing.T) {
	p := load(t)
	if got := p.ServiceNames(); !slices.Equal(got, slices.Sorted(slices.Values(core))) {
		t.Errorf("services without a profile = %v; want the core %v", got, core)
	}
	var disabled []string
	for name := range p.DisabledServices {
		disabled = append(disabled, name)
	}
	slices.Sort(disabled)
	if want := slices.Sorted(slices.Values(append(append(slices.Clone(observability), edges...), "memcached", "mariadb"))); !slices.Equal(disabled, want) {
		t.Errorf("services behind a profile = %v; want %v", disabled, want)
	}
	p = load(t, Profile)
	if got, want := p.ServiceNames(), slices.Sorted(slices.Values(append(slices.Clone(core), observability...))); !slices.Equal(got, want) {
		t.Errorf("services with profile %s = %v; want %v", Profile, got, want)
	}
	for _, name := range observability {
		if s := p.Services[name]; !slices.Equal(s.Profiles, []string{Profile}) {
			t.Errorf("%s: profiles %v; want [%s]", name, s.Profiles, Profile)
		}
	}
	p = load(t, TiersProfile)
	if got, want := p.ServiceNames(), slices.Sorted(slices.Values(append(slices.Clone(core), edges...))); !slices.Equal(got, want) {
		t.Errorf("services with profile %s = %v; want %v", TiersProfile, got, want)
	}
	for _, name := range edges {
		if s := p.Services[name]; !slices.Equal(s.Profiles, []string{TiersProfile}) {
			t.Errorf("%s: profiles %v; want [%s]", name, s.Profiles, TiersProfile)
		}
	}
	p = load(t, (store.Memcached{}).Compose().Profile)
	if got, want := p.ServiceNames(), slices.Sorted(slices.Values(append(slices.Clone(core), "memcached"))); !slices.Equal(got, want) {
		t.Errorf("services with profile %s = %v; want %v", (store.Memcached{}).Compose().Profile, got, want)
	}
}

func TestEveryServiceIsHealthcheckedAndWaitedFor(t *testing.T) {
	p := load(t, Profile, TiersProfile, (store.Memcached{}).Compose().Profile)
	for name, s := range p.Services {
		if s.HealthCheck == nil || s.HealthCheck.Disable || len(s.HealthCheck.Test) < 2 || s.HealthCheck.Test[0] == "NONE" {
			t.Errorf("%s: healthcheck %+v; want a test command", name, s.HealthCheck)
		}
		for dep, d := range s.DependsOn {
			if d.Condition != types.ServiceConditionHealthy {
				t.Errorf("%s depends on %s with condition %q; want %s", name, dep, d.Condition, types.ServiceConditionHealthy)
			}
		}
	}
	for _, r := range []string{"api-1", "api-2", "api-3"} {
		for _, dep := range []string{"redis", "postgres", "toxiproxy"} {
			if _, ok := p.Services[r].DependsOn[dep]; !ok {
				t.Errorf("%s does not wait for %s", r, dep)
			}
		}
	}
	for _, e := range edges {
		for _, dep := range []string{"api-1", "api-2", "api-3", "toxiproxy"} {
			if _, ok := p.Services[e].DependsOn[dep]; !ok {
				t.Errorf("%s does not wait for %s", e, dep)
			}
		}
	}
	if _, ok := p.Services["grafana"].DependsOn["prometheus"]; !ok {
		t.Errorf("grafana does not wait for prometheus")
	}
}

func TestPortsBindLoopbackOnly(t *testing.T) {
	p := load(t, Profile, TiersProfile, (store.Memcached{}).Compose().Profile, (store.MariaDB{}).Compose().Profile)
	published := map[string]string{} // service -> host:port
	for name, s := range p.Services {
		for _, port := range s.Ports {
			if port.HostIP != "127.0.0.1" {
				t.Errorf("%s publishes %s:%s->%d; want host_ip 127.0.0.1", name, port.HostIP, port.Published, port.Target)
			}
			published[name] = net.JoinHostPort(port.HostIP, port.Published)
		}
		if s.NetworkMode == "host" && len(s.Ports) > 0 {
			t.Errorf("%s uses the host's network and publishes ports", name)
		}
	}
	// the services on the host's network listen on loopback themselves
	prom := p.Services["prometheus"]
	if prom.NetworkMode != "host" || !slices.Contains(prom.Command, "--web.listen-address=127.0.0.1:19090") {
		t.Errorf("prometheus: network_mode %q, command %q; want host, listening on 127.0.0.1:19090", prom.NetworkMode, prom.Command)
	}
	g := p.Services["grafana"]
	if g.NetworkMode != "host" || env(g, "GF_SERVER_HTTP_ADDR") != "127.0.0.1" || "127.0.0.1:"+env(g, "GF_SERVER_HTTP_PORT") != GrafanaAddr {
		t.Errorf("grafana: network_mode %q, listening on %s:%s; want host and %s", g.NetworkMode,
			env(g, "GF_SERVER_HTTP_ADDR"), env(g, "GF_SERVER_HTTP_PORT"), GrafanaAddr)
	}
	// the scrape config scrapes what compose publishes
	targets, err := scrape.Committed()
	if err != nil {
		t.Fatal(err)
	}
	for i, addr := range targets.API {
		if got := published[fmt.Sprintf("api-%d", i+1)]; got != addr {
			t.Errorf("api-%d published on %s; the scrape config scrapes %s", i+1, got, addr)
		}
	}
	if published["redis-exporter"] != targets.Redis || published["postgres-exporter"] != targets.Postgres || targets.Prometheus != "127.0.0.1:19090" {
		t.Errorf("exporters published on %s and %s, prometheus on 127.0.0.1:19090; the scrape config scrapes %s, %s, %s",
			published["redis-exporter"], published["postgres-exporter"], targets.Redis, targets.Postgres, targets.Prometheus)
	}
	// the provider's test fixtures publish what the file does
	for name, pp := range ports {
		if got := published[name]; got != fmt.Sprintf("127.0.0.1:%d", pp[1]) {
			t.Errorf("%s published on %s; the provider's tests assume 127.0.0.1:%d", name, got, pp[1])
		}
	}
}

func env(s types.ServiceConfig, key string) string {
	if v := s.Environment[key]; v != nil {
		return *v
	}
	return ""
}

func TestReplicasAreBuiltFromTheDockerfile(t *testing.T) {
	p := load(t)
	abs, _ := filepath.Abs(root)
	for _, r := range []string{"api-1", "api-2", "api-3"} {
		b := p.Services[r].Build
		if b == nil || b.Context != abs || b.Dockerfile != "Dockerfile" {
			t.Errorf("%s: build %+v; want context %s, Dockerfile", r, b, abs)
			continue
		}
		if _, err := os.Stat(filepath.Join(b.Context, b.Dockerfile)); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	d := string(df)
	froms := regexp.MustCompile(`(?m)^FROM `).FindAllStringIndex(d, -1)
	user := regexp.MustCompile(`(?m)^USER (\S+)`).FindAllStringSubmatch(d, -1)
	for _, want := range []string{"CGO_ENABLED=0 go build", "./cmd/herdbench", "COPY --from=build"} {
		if !strings.Contains(d, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if len(froms) < 2 {
		t.Errorf("Dockerfile has %d stages; want a build stage and a run stage", len(froms))
	}
	if len(user) == 0 || user[len(user)-1][1] == "root" || user[len(user)-1][1] == "0" {
		t.Errorf("Dockerfile USER = %v; want the last stage to run as a non-root user", user)
	}
	if strings.Contains(readFile(t, filepath.Join(root, ".dockerignore")), "go.sum") {
		t.Errorf(".dockerignore leaves out go.sum, which the build needs")
	}
}

// The replicas run `testbed serve` with flags the local provider also
// passes, through toxiproxy's proxies.
func TestReplicasServeThroughToxiproxy(t *testing.T) {
	p := load(t)
	var proxies []struct{ Name, Listen, Upstream string }
	if err := json.Unmarshal([]byte(readFile(t, "toxiproxy.json")), &proxies); err != nil {
		t.Fatal(err)
	}
	listen := map[string]string{}
	for _, px := range proxies {
		_, port, _ := net.SplitHostPort(px.Listen)
		listen[px.Name] = "toxiproxy:" + port
		want := map[string]string{"redis": "redis:6379", "postgres": "postgres:5432", "memcached": "memcached:11211",
			"mariadb": "mariadb:3306", "api-1": "api-1:8080", "api-2": "api-2:8080", "api-3": "api-3:8080"}
		if px.Upstream != want[px.Name] {
			t.Errorf("toxiproxy proxy %s upstream %s; want %s", px.Name, px.Upstream, want[px.Name])
		}
	}
	if len(proxies) != 7 || listen["redis"] != Proxies["redis"] || listen["postgres"] != Proxies["postgres"] ||
		listen["memcached"] != (store.Memcached{}).Compose().Proxy() || listen["mariadb"] != (store.MariaDB{}).Compose().Proxy() {
		t.Errorf("toxiproxy.json proxies %+v; want redis and postgres at %v (the status' proxies), memcached at %s, mariadb at %s, and api-1..3",
			proxies, Proxies, (store.Memcached{}).Compose().Proxy(), (store.MariaDB{}).Compose().Proxy())
	}
	// the edges call the replicas through the api-N proxies, as status says
	tiers := load(t, TiersProfile)
	edgeFlags := map[string]bool{}
	for _, a := range local.EdgeArgs("x", edge.Options{}) {
		if strings.HasPrefix(a, "--") {
			edgeFlags[a] = true
		}
	}
	for i, e := range edges {
		cmd := tiers.Services[e].Command
		if len(cmd) < 2 || cmd[0] != "testbed" || cmd[1] != "edge" {
			t.Errorf("%s: command %q; want testbed edge", e, cmd)
			continue
		}
		flags := map[string]string{}
		for j := 2; j+1 < len(cmd); j += 2 {
			if !edgeFlags[cmd[j]] {
				t.Errorf("%s: %q is not a flag of testbed edge", e, cmd[j])
			}
			flags[cmd[j]] = cmd[j+1]
		}
		var up []string
		for r := 1; r <= 3; r++ {
			up = append(up, "http://"+listen[fmt.Sprintf("api-%d", r)])
		}
		if flags["--name"] != e || flags["--seed"] != fmt.Sprint(i+1) || flags["--upstream"] != strings.Join(up, ",") || flags["--timeout"] != "1s" {
			t.Errorf("%s: flags %v; want its name, seed %d, the upstreams %v and the default timeout 1s", e, flags, i+1, up)
		}
	}
	for i, r := range []string{"api-1", "api-2", "api-3"} {
		flags := serveFlags(t, p, r)
		want := map[string]string{"--name": r, "--seed": fmt.Sprint(replica.DefaultOptions.Seed + uint64(i)), "--redis": Proxies["redis"],
			"--postgres": fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", testbed.AppRole, Proxies["postgres"], testbed.Database)}
		want["--cache"], want["--memcached"] = replica.CacheRedis, "" // Redis, unless up gives the memcached profile
		want["--db"] = replica.DBPostgres                             // and Postgres, unless up gives the mariadb one
		for f, v := range want {
			if got, ok := flags[f]; !ok || got != v {
				t.Errorf("%s: %s %q; want %q", r, f, got, v)
			}
		}
	}
}

// serveFlags are the flags of replica r's command in p, each checked to be
// a flag of testbed serve that takes a value.
func serveFlags(t *testing.T, p *types.Project, r string) map[string]string {
	t.Helper()
	known := map[string]bool{"--listen": true}
	o := replica.DefaultOptions
	o.Cache, o.MemcachedAddr = replica.CacheMemcached, "x:1"
	o.DB, o.MySQLDSN = replica.DBMariaDB, "x"
	for _, a := range append(local.ServeArgs("x", o), local.ServeArgs("x", replica.DefaultOptions)...) {
		if strings.HasPrefix(a, "--") {
			known[a] = true
		}
	}
	cmd := p.Services[r].Command
	if len(cmd) < 2 || cmd[0] != "testbed" || cmd[1] != "serve" {
		t.Fatalf("%s: command %q; want testbed serve", r, cmd)
	}
	flags := map[string]string{}
	for j := 2; j < len(cmd); j += 2 {
		if !known[cmd[j]] || j+1 >= len(cmd) {
			t.Errorf("%s: %q is not a flag of testbed serve with a value", r, cmd[j])
			continue
		}
		flags[cmd[j]] = cmd[j+1]
	}
	return flags
}

// Every file the compose file mounts is in the repository, and Grafana
// finds its dashboards where the provider looks.
func TestMountsExist(t *testing.T) {
	p := load(t, Profile)
	targets := map[string]string{}
	for name, s := range p.Services {
		for _, v := range s.Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			targets[filepath.Base(v.Source)] = v.Target
			if _, err := os.Stat(v.Source); err != nil {
				t.Errorf("%s mounts %s: %v", name, v.Source, err)
			}
		}
	}
	var prov struct {
		Providers []struct {
			Options struct{ Path string } `yaml:"options"`
		} `yaml:"providers"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(root, "grafana/provisioning/dashboards/herdbench.yml"))), &prov); err != nil {
		t.Fatal(err)
	}
	if len(prov.Providers) != 1 || targets["dashboards"] != prov.Providers[0].Options.Path {
		t.Errorf("grafana/dashboards is mounted at %q; the dashboard provider reads %+v", targets["dashboards"], prov.Providers)
	}
	g := p.Services["grafana"]
	if home := env(g, "GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"); !strings.HasPrefix(home, targets["dashboards"]+"/") ||
		!fileExists(filepath.Join(root, "grafana/dashboards", filepath.Base(home))) {
		t.Errorf("grafana's home dashboard %q is not one of grafana/dashboards", home)
	}
	if env(g, "GF_AUTH_ANONYMOUS_ENABLED") != "true" || env(g, "GF_AUTH_ANONYMOUS_ORG_ROLE") != "Viewer" || env(g, "GF_AUTH_DISABLE_LOGIN_FORM") != "true" {
		t.Errorf("grafana: want anonymous read-only access (anonymous Viewer, no login form)")
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
