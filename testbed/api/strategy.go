package api

import (
	"fmt"
	"slices"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// plan is a parsed strategy: its mitigations with the config's knobs, in
// registration order, sorted by the hooks the server calls.
type plan struct {
	names     []string
	loader    MissLoader // nil: the request loads (none)
	refresh   []HitRefresher
	ttl       []TTLAdjuster
	tiers     []Tier
	admitReq  []RequestAdmitter
	admitLoad []LoadAdmitter
	guards    []QueryGuard
}

// newPlan is the plan of strategy s under c's knobs.
func newPlan(c replica.Config, s string) (*plan, *herd.FieldError) {
	names, err := c.Registry().Parse(s)
	if err != nil {
		return nil, err
	}
	p := &plan{names: names}
	for _, n := range names {
		mit, _ := c.Mitigation(n)
		m := hooksOf(mit)
		if h, ok := m.(MissLoader); ok {
			p.loader = h
		}
		p.refresh = appendIf(p.refresh, m)
		p.ttl = appendIf(p.ttl, m)
		p.tiers = appendIf(p.tiers, m)
		p.admitReq = appendIf(p.admitReq, m)
		p.admitLoad = appendIf(p.admitLoad, m)
		p.guards = appendIf(p.guards, m)
	}
	return p, nil
}

// appendIf appends m to hooks when m has the hooks' kind.
func appendIf[H any](hooks []H, m any) []H {
	if h, ok := m.(H); ok {
		return append(hooks, h)
	}
	return hooks
}

// mustPlan is the plan of c's own strategy, which has been validated.
func mustPlan(c replica.Config) *plan {
	p, err := newPlan(c, c.Strategy)
	if err != nil {
		panic(fmt.Sprintf("api: a validated config's strategy: %v", err))
	}
	return p
}

// states makes the state of every Stateful mitigation of c's registry
// (Stateful), from prev's when given.
func (s *Server) states(c replica.Config, p *plan, prev map[string]any, count func(string)) map[string]any {
	out := map[string]any{}
	for _, n := range c.Registry().Names() {
		m, _ := c.Mitigation(n)
		if st, ok := hooksOf(m).(Stateful); ok {
			env := StateEnv{Replica: s.opts.Name, Config: c, Configured: slices.Contains(p.names, n), Count: count}
			out[n] = st.NewState(env, prev[n])
		}
	}
	return out
}

// view is what one request uses, taken at its start, so a config switch or
// reset never changes a request halfway.
type view struct {
	cfg   replica.Config
	plan  *plan
	m     *metrics
	state map[string]any // each Stateful mitigation's
}

// withStrategy is v under strategy h, a request's admin.StrategyHeader: the
// replica's knobs and state, another choice of mitigations. One whose
// state the replica does not keep (shed, unless configured) is refused.
func (v view) withStrategy(h string) (view, error) {
	p, err := newPlan(v.cfg, h)
	if err != nil {
		return v, err
	}
	for _, n := range p.names {
		if st, ok := v.state[n]; ok && st == nil {
			return v, fmt.Errorf("%s: %q needs the replica configured with %s (accepted: a strategy without %s, or PUT /admin/config)", admin.StrategyHeader, h, n, n)
		}
	}
	v.cfg.Strategy, v.plan = h, p
	return v, nil
}
