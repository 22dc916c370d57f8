package compose

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.yaml.in/yaml/v3"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/store"
)

// The init script seeds what the local provider seeds by default, Items
// items as the provider says, and runs on a real Postgres.
func TestInitScriptSeedsAsTheLocalProvider(t *testing.T) {
	sql := readFile(t, "initdb/10-herdbench.sql")
	at := 0
	for _, stmt := range append([]string{"CREATE EXTENSION IF NOT EXISTS pg_stat_statements", "CREATE ROLE " + testbed.AppRole + " LOGIN"},
		api.SeedStatements(Items, testbed.AppRole)...) {
		i := strings.Index(sql[at:], stmt+";")
		if i < 0 {
			t.Fatalf("initdb/10-herdbench.sql lacks, after offset %d, the statement %q", at, stmt)
		}
		at += i + len(stmt)
	}

	tb := localtest.Start(t, local.Config{Replicas: 1, Items: 10})
	ctx := context.Background()
	// the status' versions are read the same way from a compose testbed
	st := tb.Status()
	for _, k := range []store.Store{store.Redis{}, store.Postgres{}} {
		if got, err := k.Version(ctx, *k.Addr(&st.Addrs)); err != nil || got != st.Versions[k.Name()] {
			t.Errorf("%s.Version() = %q, %v; want %s as the local provider read it", k.Name(), got, err, st.Versions[k.Name()])
		}
	}
	admin, err := pgx.Connect(ctx, tb.Status().Postgres)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE compose_init"); err != nil {
		t.Fatal(err)
	}
	dsn := strings.Replace(tb.Status().Postgres, "/"+testbed.Database+"?", "/compose_init?", 1)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// as the postgres image runs it: the whole file, once
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("running initdb/10-herdbench.sql: %v", err)
	}
	app, err := pgx.Connect(ctx, strings.Replace(dsn, testbed.Superuser+"@", testbed.AppRole+"@", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close(ctx)
	var n int
	if err := app.QueryRow(ctx, "SELECT count(*) FROM items").Scan(&n); err != nil || n != Items || Items != local.DefaultItems {
		t.Errorf("items the app role reads after the init script = %d, %v; want Items, %d, as the local provider's default %d", n, err, Items, local.DefaultItems)
	}
	var ext int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'").Scan(&ext); err != nil || ext != 1 {
		t.Errorf("pg_stat_statements after the init script: %d, %v; want created", ext, err)
	}
}

// Every image comes from a HERDBENCH_*_IMAGE variable whose default is the
// official image (registry mirrors), the API's base images from build
// arguments; every service but Grafana has a stand-in that
// standin/images.sh commits, and it sets every variable but Grafana's.
func TestImagesComeFromVariablesWithStandIns(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Services map[string]struct {
			Image string `yaml:"image"`
			Build *struct {
				Args map[string]string `yaml:"args"`
			} `yaml:"build"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	variable := regexp.MustCompile(`^\$\{(HERDBENCH_[A-Z_]+_IMAGE):-([^}]+)\}$`)
	script, err := os.ReadFile("standin/images.sh")
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range file.Services {
		if s.Build != nil {
			for arg, def := range map[string]string{"GO_IMAGE": "golang:1.26", "RUN_IMAGE": "alpine:3.20"} {
				m := variable.FindStringSubmatch(s.Build.Args[arg])
				if m == nil || m[2] != def || !strings.Contains(string(script), "export "+m[1]+"=") {
					t.Errorf("%s: build arg %s = %q; want ${HERDBENCH_..._IMAGE:-%s}, set by standin/images.sh", name, arg, s.Build.Args[arg], def)
				}
			}
			continue
		}
		m := variable.FindStringSubmatch(s.Image)
		if m == nil || strings.HasPrefix(m[2], "herdbench-local/") {
			t.Errorf("%s: image %q; want ${HERDBENCH_..._IMAGE:-the official image}", name, s.Image)
			continue
		}
		if name == "grafana" {
			continue // Debian has no Grafana: it has no stand-in
		}
		if !regexp.MustCompile(`(?m)^image "herdbench-local/` + regexp.QuoteMeta(name) + `:`).Match(script) {
			t.Errorf("%s: no stand-in image (image \"herdbench-local/%s:...\") in standin/images.sh", name, name)
		}
		if !strings.Contains(string(script), "export "+m[1]+"=herdbench-local/") {
			t.Errorf("%s: standin/images.sh sets no %s to a herdbench-local image", name, m[1])
		}
	}
}
