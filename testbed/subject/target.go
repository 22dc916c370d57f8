package subject

import (
	"context"
	"errors"
	"fmt"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/store"
	"github.com/herdbench/herdbench/triggers"
)

// TargetKind is the testbed's kind of target (targets.Target.Kind).
const TargetKind = "testbed"

// Open opens the running testbed st as a target and as the experiment's
// subject, its parts restarting through restart (the provider's: the local
// supervisor's control API, or docker compose); nil when they cannot.
func Open(ctx context.Context, st testbed.Status, restart triggers.Restarter) (*Testbed, error) {
	if len(st.API) == 0 {
		return nil, errors.New("testbed status lists no API replica")
	}
	s := Describe(st)
	t := s.Target
	t.Grants.Restarter = restart
	h := handles(t)
	for _, k := range store.In(st.Addrs).Running() { // Redis, its database, its cache
		err := k.Open(ctx, h, *k.Addr(&st.Addrs))
		t.Redis, t.DB, t.MySQL = h.Redis, h.DB, h.MySQL // what t.Close closes
		if err != nil {
			t.Close()
			return nil, err
		}
	}
	if st.Toxiproxy != "" {
		t.Toxiproxy = toxiclient.NewClient(st.Toxiproxy)
	}
	if db, ok := store.In(st.Addrs).DB.(store.Writable); ok {
		t.Grants.Likes = db.Likes(h) // the write herd's likes and feed
	}
	return s, nil
}

// Describe describes the testbed st as a target and as the experiment's
// subject, without connecting to it: what a dry run shows, and what Open
// then connects. Its cache and its database each say what they are to
// the target: their keys or statements, the caps they grant, the server
// a fault on their role breaks.
func Describe(st testbed.Status) *Testbed {
	t := &targets.Target{Kind: TargetKind, Name: "testbed", Versions: st.Versions, Endpoints: st.API,
		Request: load.Request{Path: "/items/{key}"}, Proxies: map[string]string{}, Hosts: map[string]string{}}
	s := &Testbed{Target: t, Status: st, Admin: admin.NewFleet(st.API)}
	// FlushDB: the Redis it always runs (the items, or the write queue
	// beside Memcached's items) may be emptied whole
	t.Grants = targets.Grants{Provider: st.Provider, ResetProxies: true,
		Caps:     triggers.Caps{Role: true, Writes: true, FlushDB: true, Parts: parts(st)},
		Observed: &targets.Observes{DB: true, Cache: true, API: true, Layers: len(st.Edge) > 0}}
	d := store.Description{Proxies: t.Proxies, Caps: &t.Grants.Caps}
	set := store.In(st.Addrs)
	set.Cache.Describe(&d, st.Proxies)
	set.DB.Describe(&d, st.Proxies)
	t.RedisKey, t.Pattern, t.Channel, t.Grants.OwnedItems = d.RedisKey, d.Pattern, d.Channel, d.OwnedItems
	t.Statements, t.Role = d.Statements, d.Role
	for _, u := range st.API {
		t.AddHost(u, "testbed api")
	}
	if len(st.Edge) > 0 { // two tiers: the clients attack the edges, which call the replicas
		t.Endpoints, s.Edges = st.Edge, edge.NewFleet(st.Edge)
		for _, u := range st.Edge {
			t.AddHost(u, "testbed edge")
		}
	}
	return s
}

// parts are the parts of herd.Parts st runs: the replicas, Redis, its
// database and its cache when it is not Redis.
func parts(st testbed.Status) []string {
	parts := []string{herd.API}
	for _, k := range store.In(st.Addrs).Running() {
		parts = append(parts, k.Name())
	}
	for i := range st.API { // one replica by its name: api-1, api-2, ...
		parts = append(parts, fmt.Sprintf("%s-%d", herd.API, i+1))
	}
	return parts
}

// handles are t's connections to the testbed's stores, as the stores
// open and use them.
func handles(t *targets.Target) *store.Handles {
	return &store.Handles{Redis: t.Redis, DB: t.DB, MySQL: t.MySQL, OpenMemcached: t.OpenMemcached, Program: targets.ProgramName}
}
