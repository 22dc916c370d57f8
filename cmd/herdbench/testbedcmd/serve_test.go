package testbedcmd

import (
	"encoding/json"
	"fmt"
	"reflect"
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
		AddReplicaFlags(fs, &got.API)
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
