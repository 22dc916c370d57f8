package targets

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// empties refuses a value the file gives empty where leaving its key out
// means something else: read as written, "" would silently be the
// default (GET, no password, no cap, no channel), or a query value, a
// proxy or a hook that does nothing while the file reads as if it did.
func (c *checker) empties() {
	f := c.f
	c.empty("name", f.Name, "a name for reports; or leave the key out: reports name the file")
	c.requestEmpties("request", f.Request)
	for i, rc := range f.Requests {
		c.requestEmpties(fmt.Sprintf("requests[%d]", i), rc.Request)
	}
	for i, a := range f.Arms {
		at := fmt.Sprintf("arms[%d]", i)
		c.queryEmpties(at+".query", a.Query)
		for _, h := range []struct {
			hook string
			cmds []string
		}{{"before", a.Before}, {"after", a.After}} {
			for j, cmd := range h.cmds {
				if strings.TrimSpace(cmd) == "" {
					c.bad(fmt.Sprintf("%s.%s[%d]", at, h.hook, j), "empty (accepted: a command, run with sh -c %s the arm; or leave it out, for none)", h.hook)
				}
			}
		}
	}
	if r := f.Redis; r != nil {
		c.empty("redis.password", r.Password, "${VAR}, read from the environment; or leave the key out, for a Redis without a password")
		c.empty("redis.invalidate_channel", r.Channel, "the channel the service listens on for invalidations; or leave the key out, for none: no notify trigger")
	}
	if m := f.Memcached; m != nil {
		c.empty("memcached.key", m.Key, "the Memcached key of a request's key, such as item:{key}; or leave the key out, for a Memcached whose items no trigger touches")
	}
	if t := f.Toxiproxy; t != nil {
		for _, dep := range slices.Sorted(maps.Keys(t.Proxies)) {
			c.empty("toxiproxy.proxies."+dep, t.Proxies[dep], "the name of the proxy in toxiproxy, such as "+dep+"; or leave the dependency out")
		}
	}
	c.empty("limits.max_duration", f.Limits.MaxDuration, "a duration such as 2m; or leave the key out, for no cap of the target's own")
	c.empty("limits.max_drain", f.Limits.MaxDrain, "a duration such as 30s; or leave the key out, for the longer of 15s and the clients' whole deadline")
}

// requestEmpties refuses a request's method or query value given empty.
func (c *checker) requestEmpties(at string, r Request) {
	c.empty(at+".method", r.Method, "GET, HEAD, POST, PUT, PATCH, DELETE; or leave the key out, for GET")
	c.queryEmpties(at+".query", r.Query)
}

// queryEmpties refuses a query's name or value given empty: ?=v, or
// ?name= while the file reads as if it sent a value.
func (c *checker) queryEmpties(at string, q map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if k == "" {
			c.bad(at, "a value named \"\" (accepted: name: value, each name not empty)")
			continue
		}
		c.empty(at+"."+k, q[k], "a value, {key} in it or not; or leave the key out, to send no "+k)
	}
}

// empty refuses v, the value at path, given empty: accepted says what is
// accepted and what leaving the key out means.
func (c *checker) empty(path, v, accepted string) {
	if v == "" && c.f.doc.Line(path) > 0 {
		c.bad(path, "empty (accepted: %s)", accepted)
	}
}
