package triggers

import (
	"fmt"
	"strings"
)

// Planner is implemented by triggers that can say, before anything runs,
// exactly what they would touch: what a dry run prints. env holds what the
// target declares; nothing in it is contacted.
type Planner interface {
	Plan(env Env) string
}

// list names up to ten items, then how many more.
func list(items []string) string {
	if len(items) <= 10 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:10], ", ") + fmt.Sprintf(", ... and %d more", len(items)-10)
}

func (Expire) Plan(env Env) string {
	keys := HotRedisKeys(env)
	return fmt.Sprintf("UNLINK %d Redis keys (the hot keys matching %s): %s", len(keys), env.Pattern, list(keys))
}

func (TTL) Plan(env Env) string {
	keys := HotRedisKeys(env)
	return fmt.Sprintf("PEXPIREAT T on %d Redis keys (the hot keys matching %s) before the load: %s", len(keys), env.Pattern, list(keys))
}

func (Flush) Plan(env Env) string {
	if env.Owned {
		return "FLUSHDB on the testbed's Redis"
	}
	return fmt.Sprintf("SCAN MATCH %s and UNLINK every key it finds (only keys matching the pattern)", env.Pattern)
}

func (Conndrop) Plan(env Env) string {
	if len(env.Proxies) > 0 {
		return fmt.Sprintf("close and reopen the toxiproxy proxies %s", proxyNames(env))
	}
	return fmt.Sprintf("pg_terminate_backend every connection of role %s", env.Role)
}

func (o Outage) Plan(env Env) string {
	if name, ok := env.Proxies[o.Dependency]; ok {
		return fmt.Sprintf("disable toxiproxy proxy %s (%s) for %s, then enable it", name, o.Dependency, o.For)
	}
	return fmt.Sprintf("CLIENT PAUSE %d ALL on the Redis (every client of it waits) for %s, then CLIENT UNPAUSE", o.For.Milliseconds(), o.For)
}

func (s SlowDB) Plan(env Env) string {
	return fmt.Sprintf("add %s of latency to toxiproxy proxy %s for %s, then remove it", s.Latency, env.Proxies["postgres"], s.For)
}

func (r Restart) Plan(env Env) string {
	return fmt.Sprintf("restart the testbed's %s (rolling: %v)", r.Part, r.Rolling)
}

func (b *Burst) Plan(env Env) string {
	keys := env.HotKeys
	if len(keys) == 0 {
		keys = []string{"1"}
	}
	return fmt.Sprintf("open %d TCP connections to the endpoints before T (no request), then send %d requests at T for the hot keys %s",
		b.Clients, b.Clients, list(keys))
}

func (Notify) Plan(env Env) string {
	return fmt.Sprintf("PUBLISH the %d hot keys on channel %s: %s", len(env.HotKeys), env.Channel, list(env.HotKeys))
}

func proxyNames(env Env) string {
	var names []string
	for _, dep := range Dependencies {
		if n, ok := env.Proxies[dep]; ok {
			names = append(names, n+" ("+dep+")")
		}
	}
	return strings.Join(names, ", ")
}

var (
	_ Planner = Expire{}
	_ Planner = TTL{}
	_ Planner = Flush{}
	_ Planner = Conndrop{}
	_ Planner = Outage{}
	_ Planner = SlowDB{}
	_ Planner = Restart{}
	_ Planner = (*Burst)(nil)
	_ Planner = Notify{}
)
