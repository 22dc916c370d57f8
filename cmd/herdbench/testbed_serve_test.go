package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/replica"
)

// The local provider starts replicas with local.ServeArgs; a knob it leaves
// out would silently run with its default. Every field must round-trip.
func TestServeArgsCarryEveryOption(t *testing.T) {
	o := replica.Options{Name: "api-7", Cache: replica.CacheMemcached, RedisAddr: "127.0.0.1:1", MemcachedAddr: "127.0.0.1:3", DB: replica.DBPostgres, PostgresDSN: "postgres://x@127.0.0.1:2/db",
		DBPoolSize: 3, RedisPoolSize: 4, DBTimeout: 3 * time.Second, RedisTimeout: 2 * time.Second, Seed: 42,
		Config: replica.Config{Strategy: "lock+shed", TTL: herd.Duration(7 * time.Second), StaleTTL: herd.Duration(time.Hour),
			QueryCost:     herd.Duration(9 * time.Millisecond),
			DBRetry:       replica.DBRetry{Policy: retry.Policy{Kind: retry.Exp, Base: 10 * time.Millisecond, Cap: time.Second, Retries: 3}},
			WriteStrategy: replica.WriteQueue, ApplyRate: 19, WriteBatch: 20, CoalesceInterval: herd.Duration(21 * time.Millisecond),
			WriteInvalidate: replica.InvalidateRefresh, AbandonedLoad: replica.AbandonCanceled}}
	// every mitigation's knob set, each to a value of its own, none its
	// default: a knob the arguments leave out would show as the default
	for i, k := range replica.Knobs() {
		if k.Mitigation == "" {
			continue
		}
		v := k.Value(&o.Config)
		n := 2 + i
		switch k.Type() {
		case "duration":
			_ = v.Set(fmt.Sprintf("%dms", 1000+n))
		case "float64":
			_ = v.Set(fmt.Sprintf("0.%02d", n))
		default:
			_ = v.Set(fmt.Sprint(n))
		}
		if def := k.Value(&replica.DefaultConfig).String(); v.String() == def {
			t.Fatalf("test options leave knob %s at its default %s; set it", k.Name, def)
		}
	}
	// the same on MariaDB, whose DSN takes Postgres's place
	m := o
	m.DB, m.MySQLDSN, m.PostgresDSN = replica.DBMariaDB, "app:pw@tcp(127.0.0.1:4)/herdbench", ""
	// every field set in one of them: a zero field would not show a
	// missing flag
	for _, v := range []reflect.Value{reflect.ValueOf(o), reflect.ValueOf(o.Config)} {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() && f.Name != "Mitigations" && v.Field(i).IsZero() && reflect.ValueOf(m).FieldByName(f.Name).IsZero() {
				t.Fatalf("test options leave %s zero; set it", f.Name)
			}
		}
	}
	for _, o := range []replica.Options{o, m} {
		args := local.ServeArgs("127.0.0.1:9", o)
		got := serveOptions{API: replica.DefaultOptions}
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		fs.StringVar(&got.Listen, "listen", "", "")
		fs.StringVar(&got.API.Name, "name", "", "")
		fs.StringVar(&got.API.RedisAddr, "redis", "", "")
		fs.StringVar(&got.API.MemcachedAddr, "memcached", "", "")
		addServeAddrFlags(fs, &got.API)
		addReplicaFlags(fs, &got.API)
		if err := fs.Parse(args[2:]); err != nil {
			t.Fatalf("parse %v: %v", args, err)
		}
		gotJSON, _ := json.Marshal(got.API.Config)
		wantJSON, _ := json.Marshal(o.Config)
		gc, oc := got.API, o
		gc.Config, oc.Config = replica.Config{}, replica.Config{}
		if !reflect.DeepEqual(gc, oc) || string(gotJSON) != string(wantJSON) {
			t.Errorf("ServeArgs then serve's flags = %+v\n%s\nwant %+v\n%s", gc, gotJSON, oc, wantJSON)
		}
	}
}

// serve's database flags: a database that is not one, or a DSN the
// database does not take, or none, is a usage error (exit 2) naming the
// flag and what it accepts, before anything is dialed.
func TestServeDBFlags(t *testing.T) {
	base := []string{"testbed", "serve", "--listen", "127.0.0.1:0", "--redis", "127.0.0.1:1"}
	mysql := "app:pw@tcp(127.0.0.1:1)/herdbench"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown db", []string{"--db", "oracle", "--postgres", "postgres://x@127.0.0.1:1/db"}, `--db: "oracle" is not a database (accepted: postgres, mariadb)`},
		{"mariadb without its dsn", []string{"--db", "mariadb"}, "--mysql: empty, and db mariadb needs the app user's DSN (accepted: a go-sql-driver DSN"},
		{"mariadb beside postgres's dsn", []string{"--db", "mariadb", "--mysql", mysql, "--postgres", "postgres://x@127.0.0.1:1/db"}, "--postgres is for --db postgres"},
		{"a mysql dsn on postgres", []string{"--mysql", mysql, "--postgres", "postgres://x@127.0.0.1:1/db"}, "--mysql: a MySQL DSN is for db mariadb, and the db is postgres"},
		{"postgres without its dsn", nil, "--postgres is required"},
		{"a dsn the driver cannot read", []string{"--db", "mariadb", "--mysql", "app@127.0.0.1/x"}, "--mysql: default addr for network '127.0.0.1' unknown (accepted: a go-sql-driver DSN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			args := append(append([]string{}, base...), tc.args...)
			if code := run(context.Background(), args, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("herdbench %s = exit %d, %q; want exit 2 saying %q", strings.Join(args, " "), code, stderr.String(), tc.want)
			}
		})
	}
}
