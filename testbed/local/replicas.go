package local

import (
	"context"
	"strconv"
	"strings"
	"syscall"

	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
)

// startReplicas starts the replicas as `testbed serve` processes reaching
// the stores through the proxies, and waits for each /healthz.
func (tb *Testbed) startReplicas(ctx context.Context, ports []int) error {
	type started struct {
		p   *process
		url string
	}
	var all []started
	var specs []replica.Options
	for i, port := range ports {
		name := "api-" + strconv.Itoa(i+1)
		opts := tb.cfg.Replica
		opts.Name = name
		opts.Seed = tb.cfg.Replica.Seed + uint64(i)
		for _, k := range tb.stores.Running() { // Redis: the cache, or beside another the write queue's stream
			k.Replica(&opts, tb.status.Proxies[k.Name()])
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		specs = append(specs, opts)
		p, err := tb.spawn(ctx, name, syscall.SIGTERM, nil, append([]string{tb.cfg.Binary}, ServeArgs(addr, opts)...)...)
		if err != nil {
			return &PartError{Part: name, Err: err}
		}
		all = append(all, started{p, "http://" + addr})
	}
	for i, s := range all {
		s.p.ready = healthy(s.url)
		s.p.replica = &replicaSpec{url: s.url, addr: strings.TrimPrefix(s.url, "http://"), opts: specs[i]}
		err := tb.waitReady(ctx, s.p, s.p.ready)
		if err != nil {
			return &PartError{Part: s.p.name, Log: s.p.log, Err: err}
		}
		tb.status.API = append(tb.status.API, s.url)
	}
	return nil
}

// healthy checks a replica's /healthz.
func healthy(url string) func(context.Context) error { return httpOK(url+"/healthz", "/healthz") }

// ServeArgs are the arguments of `herdbench testbed serve` that run one
// replica with opts on addr.
func ServeArgs(addr string, o replica.Options) []string {
	c := o.Config
	args := []string{"testbed", "serve",
		"--listen", addr,
		"--name", o.Name,
		"--redis", o.RedisAddr,
		"--seed", strconv.FormatUint(o.Seed, 10),
		"--db-pool", strconv.Itoa(int(o.DBPoolSize)),
		"--redis-pool", strconv.Itoa(o.RedisPoolSize),
		"--db-timeout", o.DBTimeout.String(),
		"--redis-timeout", o.RedisTimeout.String(),
		"--strategy", c.Strategy,
	}
	if o.Cache != "" {
		args = append(args, "--cache", o.Cache)
	}
	if o.DB != "" {
		args = append(args, "--db", o.DB)
	}
	// each store's address: the one o names in each role, and any other
	// o has an address of, but not a default o does not use (serve
	// refuses Postgres's DSN beside MariaDB's)
	set := store.MustFor(o)
	for _, k := range store.Kinds() {
		if set.Runs(k.Name()) || !store.IsDefault(k) {
			args = append(args, k.Flags(o)...)
		}
	}
	for _, k := range c.Registry().Knobs() { // its mitigations' knobs too
		args = append(args, "--"+k.Flag(), k.Value(&c).String())
	}
	return args
}
