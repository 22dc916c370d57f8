package main

import (
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
	o := api.Options{Name: "api-7", RedisAddr: "127.0.0.1:1", PostgresDSN: "postgres://x@127.0.0.1:2/db",
		DBPoolSize: 3, RedisPoolSize: 4, DBTimeout: 3 * time.Second, RedisTimeout: 2 * time.Second, Seed: 42,
		Config: api.Config{Strategy: "lock+shed", TTL: herd.Duration(7 * time.Second), StaleTTL: herd.Duration(time.Hour),
			TTLJitter: 0.3, XFetchBeta: 2, LockTTL: herd.Duration(time.Second), LockWait: herd.Duration(2 * time.Second),
			LockPoll: herd.Duration(3 * time.Millisecond), QueryCost: herd.Duration(9 * time.Millisecond),
			DBRetry:          api.DBRetry{Policy: retry.Policy{Kind: retry.Exp, Base: 10 * time.Millisecond, Cap: time.Second, Retries: 3}},
			EarlyProbability: 0.5, LeaseInterval: herd.Duration(4 * time.Second), LeaseWait: herd.Duration(5 * time.Second),
			LocalTTL: herd.Duration(6 * time.Second), LocalJitter: 0.4, RateLimit: 12, RateBurst: 13,
			RampUp: herd.Duration(14 * time.Second), BreakerFailures: 15, BreakerOpen: herd.Duration(16 * time.Second),
			ShedMinLimit: 2, ShedMaxLimit: 17, ShedInitialLimit: 3, ShedWait: herd.Duration(18 * time.Millisecond),
			WriteStrategy: api.WriteQueue, ApplyRate: 19, WriteBatch: 20, CoalesceInterval: herd.Duration(21 * time.Millisecond),
			WriteInvalidate: api.InvalidateRefresh}}
	// every field set: a zero field would not show a missing flag
	for _, v := range []reflect.Value{reflect.ValueOf(o), reflect.ValueOf(o.Config)} {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("test options leave %s zero; set it", v.Type().Field(i).Name)
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
	addReplicaFlags(fs, &got.API)
	if err := fs.Parse(args[2:]); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	if !reflect.DeepEqual(got.API, o) {
		t.Errorf("ServeArgs then serve's flags = %+v; want %+v", got.API, o)
	}
}
