package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/local"
)

// The local provider starts replicas with local.ServeArgs; a knob it leaves
// out would silently run with its default. Every field must round-trip.
func TestServeArgsCarryEveryOption(t *testing.T) {
	o := api.Options{Name: "api-7", Cache: api.CacheMemcached, RedisAddr: "127.0.0.1:1", MemcachedAddr: "127.0.0.1:3", PostgresDSN: "postgres://x@127.0.0.1:2/db",
		DBPoolSize: 3, RedisPoolSize: 4, DBTimeout: 3 * time.Second, RedisTimeout: 2 * time.Second, Seed: 42,
		Config: api.Config{Strategy: "lock+shed", TTL: herd.Duration(7 * time.Second), StaleTTL: herd.Duration(time.Hour),
			QueryCost:     herd.Duration(9 * time.Millisecond),
			DBRetry:       api.DBRetry{Policy: retry.Policy{Kind: retry.Exp, Base: 10 * time.Millisecond, Cap: time.Second, Retries: 3}},
			WriteStrategy: api.WriteQueue, ApplyRate: 19, WriteBatch: 20, CoalesceInterval: herd.Duration(21 * time.Millisecond),
			WriteInvalidate: api.InvalidateRefresh, AbandonedLoad: api.AbandonCanceled}}
	// every mitigation's knob set, each to a value of its own, none its
	// default: a knob the arguments leave out would show as the default
	for i, k := range api.Knobs() {
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
		if def := k.Value(&api.DefaultConfig).String(); v.String() == def {
			t.Fatalf("test options leave knob %s at its default %s; set it", k.Name, def)
		}
	}
	// every field set: a zero field would not show a missing flag
	for _, v := range []reflect.Value{reflect.ValueOf(o), reflect.ValueOf(o.Config)} {
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && f.Name != "Mitigations" && v.Field(i).IsZero() {
				t.Fatalf("test options leave %s zero; set it", f.Name)
			}
		}
	}
	args := local.ServeArgs("127.0.0.1:9", o)
	got := serveOptions{API: api.DefaultOptions}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.StringVar(&got.Listen, "listen", "", "")
	fs.StringVar(&got.API.Name, "name", "", "")
	fs.StringVar(&got.API.RedisAddr, "redis", "", "")
	fs.StringVar(&got.API.PostgresDSN, "postgres", "", "")
	fs.StringVar(&got.API.MemcachedAddr, "memcached", "", "")
	addReplicaFlags(fs, &got.API)
	if err := fs.Parse(args[2:]); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	gotJSON, _ := json.Marshal(got.API.Config)
	wantJSON, _ := json.Marshal(o.Config)
	gc, oc := got.API, o
	gc.Config, oc.Config = api.Config{}, api.Config{}
	if !reflect.DeepEqual(gc, oc) || string(gotJSON) != string(wantJSON) {
		t.Errorf("ServeArgs then serve's flags = %+v\n%s\nwant %+v\n%s", gc, gotJSON, oc, wantJSON)
	}
}
