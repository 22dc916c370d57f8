package targets

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
)

// A load balancer in front of the service is part of the herd: it
// retries, redispatches, marks servers down and brings them back. A
// target file's haproxy: names HAProxy's stats page, read every sample
// (observe.HAProxy): what reached each server, retries and redispatches
// included, by HAProxy's own counters. An arm whose endpoints reach
// another backend names it (arms[].backend), and its lb.* are that
// backend's.

// HAProxySpec is HAProxy in front of the service: its stats page (CSV)
// and the backend whose servers the load reaches.
type HAProxySpec struct {
	Stats   string `yaml:"stats"`   // the stats page, such as http://127.0.0.1:8404/stats; ;csv is added
	Backend string `yaml:"backend"` // the backend the load's frontend sends to
}

// backendName is the shape of a proxy's name HAProxy's configuration
// accepts: letters, digits, '-', '_', '.' and ':'.
var backendName = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

const backendShape = "a backend's name as HAProxy's config gives it: letters, digits, '-', '_', '.', ':'"

func (c *checker) haproxy() {
	h := c.f.HAProxy
	if h == nil {
		for i, a := range c.f.Arms {
			if path := fmt.Sprintf("arms[%d].backend", i); a.Backend != "" || c.f.doc.Line(path) > 0 {
				c.bad(path, "%q, and the file has no haproxy: to read it from (accepted: a backend with haproxy: {stats, backend} in the file; or leave the key out)", a.Backend)
			}
		}
		return
	}
	if u, err := url.Parse(h.Stats); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.bad("haproxy.stats", "%q is not an http URL (accepted: HAProxy's stats page, such as http://127.0.0.1:8404/stats)", h.Stats)
	}
	if h.Backend == "" {
		c.bad("haproxy.backend", "none (accepted: the backend whose servers the load reaches, as its config names it)")
	} else if !backendName.MatchString(h.Backend) {
		c.bad("haproxy.backend", "%q (accepted: %s)", h.Backend, backendShape)
	}
	for i, a := range c.f.Arms {
		path := fmt.Sprintf("arms[%d].backend", i)
		switch {
		case a.Backend == "" && c.f.doc.Line(path) > 0:
			c.bad(path, "empty (accepted: %s; or leave the key out, for haproxy.backend's %s)", backendShape, h.Backend)
		case a.Backend != "" && !backendName.MatchString(a.Backend):
			c.bad(path, "%q (accepted: %s)", a.Backend, backendShape)
		}
	}
}

// backendUses are the backends the file names, each with its path:
// haproxy.backend's, then each arm's own.
func (f *File) backendUses() []struct{ name, path string } {
	uses := []struct{ name, path string }{{f.HAProxy.Backend, "haproxy.backend"}}
	for i, a := range f.Arms {
		if a.Backend != "" {
			uses = append(uses, struct{ name, path string }{a.Backend, fmt.Sprintf("arms[%d].backend", i)})
		}
	}
	return uses
}

// checkBackends refuses a backend the file names that HAProxy's stats
// page does not list, each at its line with the ones it lists. A page
// that cannot be read now is no refusal: the names' shape was checked,
// and an arm whose page stays unread says so in its warnings.
func (t *Target) checkBackends(ctx context.Context) error {
	f := t.file
	if f.HAProxy == nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	listed, err := t.LB("").Backends(rctx)
	if err != nil {
		return nil
	}
	var errs herd.FieldErrors
	for _, u := range f.backendUses() {
		if !slices.Contains(listed, u.name) {
			errs = append(errs, &herd.FieldError{File: f.doc.Name, Line: f.doc.Line(u.path), Field: u.path,
				Msg: fmt.Sprintf("%q is not a backend of HAProxy's stats page %s (accepted: %s)", u.name, f.HAProxy.Stats, strings.Join(listed, ", "))})
		}
	}
	return errs.Err()
}

// LB is the load balancer's stats page as a source the sampler reads,
// for backend ("": the file's haproxy.backend); nil without haproxy:.
func (t *Target) LB(backend string) *observe.HAProxy {
	if t.HAProxy == nil {
		return nil
	}
	return &observe.HAProxy{Stats: t.HAProxy.Stats, Backend: cmp.Or(backend, t.HAProxy.Backend)}
}
