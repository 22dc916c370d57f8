package targets

import (
	"net/url"

	"github.com/herdbench/herdbench/observe"
)

// A load balancer in front of the service is part of the herd: it
// retries, redispatches, marks servers down and brings them back. A
// target file's haproxy: names HAProxy's stats page, read every sample
// (observe.HAProxy): what reached each server, retries and redispatches
// included, by HAProxy's own counters.

// HAProxySpec is HAProxy in front of the service: its stats page (CSV)
// and the backend whose servers the load reaches.
type HAProxySpec struct {
	Stats   string `yaml:"stats"`   // the stats page, such as http://127.0.0.1:8404/stats; ;csv is added
	Backend string `yaml:"backend"` // the backend the load's frontend sends to
}

func (c *checker) haproxy() {
	h := c.f.HAProxy
	if h == nil {
		return
	}
	if u, err := url.Parse(h.Stats); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.bad("haproxy.stats", "%q is not an http URL (accepted: HAProxy's stats page, such as http://127.0.0.1:8404/stats)", h.Stats)
	}
	if h.Backend == "" {
		c.bad("haproxy.backend", "none (accepted: the backend whose servers the load reaches, as its config names it)")
	}
}

// LB is the load balancer's stats page as a source the sampler reads;
// nil without haproxy:.
func (t *Target) LB() *observe.HAProxy {
	if t.HAProxy == nil {
		return nil
	}
	return &observe.HAProxy{Stats: t.HAProxy.Stats, Backend: t.HAProxy.Backend}
}
