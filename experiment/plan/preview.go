package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
)

// Preview is what a plan would do to a target, worked out without
// contacting it: what a dry run prints.
type Preview struct {
	Target  string
	Kind    string
	Hosts   []HostLoad    // where the load goes
	Request string        // how a key becomes a request: the herd's, with Classes
	Classes []string      // each request class: its share and rate, its request, its keys
	Keys    string        // the key space and the hot keys
	Arms    []ArmPreview  // how each arm is selected
	Trigger string        // the trigger and exactly what it touches
	PerArm  time.Duration // one arm's load; the most, with AfterAuto
	// AfterAuto: an arm's load after T ends once it has recovered and held
	AfterAuto bool
	Repeat    int           // runs of each arm, interleaved
	Load      time.Duration // the whole run's load: PerArm for every run of every arm
	Warm      string        // what each arm does before its load
	Timeline  string        // warmup, before, T, after
	Seed      string        // the seed, or that the run picks one
	Caps      string        // the caps the plan is held to: the target's and herdbench's
	Requests  int64         // requests the whole run sends, about
	Worst     int64         // the most it may send: every retry and hedge taken, the burst
	Abort     []string
	// AbortMerged are the stop conditions given by --abort-on and by the
	// target file both, kept once
	AbortMerged []string
	Gates       []string
	Touches     []string // every host and what herdbench does there
	// Needed are the ${VAR}s of the target file that are not set: the run
	// needs them, the dry run does not (targets.ReadFileForDryRun)
	Needed []string
}

// HostLoad is the share of the load one endpoint gets.
type HostLoad struct {
	Endpoint string
	Rate     float64 // requests/s
}

// ArmPreview is one arm and how it is selected.
type ArmPreview struct {
	Name      string
	Selection string
}

// Describe works out the preview of p on tg; nothing is contacted.
func Describe(p Plan, tg *targets.Target, sub Subject) Preview {
	hot := tg.Hot(p.HotKeys)
	runs := int64(p.Repeat.N()) * int64(len(p.Arms))
	pv := Preview{Target: tg.Name, Kind: tg.Kind, PerArm: p.Duration(), AfterAuto: p.AfterAuto, Repeat: p.Repeat.N(), Load: time.Duration(runs) * p.Duration()}
	for _, e := range tg.Endpoints {
		pv.Hosts = append(pv.Hosts, HostLoad{Endpoint: e, Rate: float64(p.Rate) / float64(len(tg.Endpoints))})
	}
	pv.Request = requestLine(tg.Request, tg.Header)
	pv.Classes = classLines(p, tg)
	pv.Keys = fmt.Sprintf("Zipf(%g) over item ids 1..%d", p.Zipf, p.Keys)
	if tg.Space != nil {
		pv.Keys = spaceLine(tg.Space)
	}
	pv.Keys += fmt.Sprintf("; %d hot keys: %s", len(hot), shortList(hot))
	for _, a := range p.Arms {
		pv.Arms = append(pv.Arms, ArmPreview{Name: a.Name, Selection: selection(a)})
	}
	pv.Trigger = TriggerLine(p, tg)
	pv.Warm = sub.FillPlan(p, hot)
	pv.Timeline = fmt.Sprintf("warmup %s, before %s, T, after %s", p.Warmup, p.Before, p.After)
	if p.AfterAuto {
		pv.Timeline += " at most (auto: until the arm has recovered and held)"
	}
	if e := p.Escape; e != nil {
		pv.Timeline += fmt.Sprintf("; once metastable, the rate steps down to %s of it, each step until back or %s (--escape), within the after window",
			strings.Join(verdict.EscapeShares(*e), ", "), e.Limit)
	}
	pv.Seed = strconv.FormatUint(p.Seed, 10)
	if p.Seed == 0 {
		pv.Seed = "picked when the run starts, and printed"
	}
	pv.Caps = capsLine(tg.Limits)
	perArm := int64(float64(p.Rate)*p.Duration().Seconds()) + sub.FillRequests(p, hot)
	pv.Requests = perArm * runs
	l := p.Load()
	pv.Worst = int64(float64(perArm)*l.Attempts+float64(l.Burst)) * runs
	for _, g := range p.Abort {
		pv.Abort = append(pv.Abort, g.Expr)
	}
	pv.AbortMerged = p.AbortMerged
	for _, g := range p.Gates {
		pv.Gates = append(pv.Gates, g.Expr)
	}
	if f := tg.File(); f != nil { // every use, one each: the endpoints and Redis on one host are two
		for _, u := range f.HostUses() {
			pv.Touches = append(pv.Touches, fmt.Sprintf("%s (%s)", u.Host, u.Where))
		}
	} else {
		for h, where := range tg.Hosts {
			pv.Touches = append(pv.Touches, fmt.Sprintf("%s (%s)", h, where))
		}
		slices.Sort(pv.Touches)
	}
	if f := tg.File(); f != nil {
		unknown := map[string]bool{} // a DSN whose host is one of its variables
		for _, n := range f.Needed {
			pv.Needed = append(pv.Needed, fmt.Sprintf("%s for %s (line %d)", n.Var, n.Field, n.Line))
			if strings.HasSuffix(n.Field, ".dsn") && !slices.Contains(slices.Collect(maps.Values(tg.Hosts)), n.Field) && !unknown[n.Field] {
				unknown[n.Field] = true
				pv.Touches = append(pv.Touches, fmt.Sprintf("the host in %s, once its variables are set", n.Field))
			}
		}
	}
	return pv
}

// TriggerLine says what the plan's trigger does at T to tg, as the store
// or cache tg has it (flush: FLUSHDB on a Redis, flush_all on a
// Memcached): the dry run's line, and the run's header. It contacts
// nothing.
func TriggerLine(p Plan, tg *targets.Target) string {
	line := p.Trigger + " at T"
	if trig := p.ChosenTrigger(); trig != nil {
		env := TriggerEnv(tg, arm.Arm{}, tg.Hot(p.HotKeys), 0, "")
		env.Request = nil // nothing is built, let alone sent
		line += ": " + trig.Plan(env)
	}
	return line
}

// selection says how an arm is chosen.
func selection(a arm.Arm) string {
	var parts []string
	if s := a.Select; s != nil {
		if len(s.Headers) > 0 {
			var h []string
			for k, v := range s.Headers {
				if slices.Contains(s.Secret, k) {
					v = "(from the environment, not shown)"
				}
				h = append(h, k+": "+v)
			}
			sort.Strings(h)
			parts = append(parts, "headers "+strings.Join(h, ", "))
		}
		if len(s.Query) > 0 {
			var q []string
			for k, v := range s.Query {
				q = append(q, k+"="+v)
			}
			sort.Strings(q)
			parts = append(parts, "query "+strings.Join(q, "&"))
		}
		if len(s.Endpoints) > 0 {
			parts = append(parts, "its own endpoints "+strings.Join(s.Endpoints, ", "))
		}
		if s.Backend != "" {
			parts = append(parts, "lb.* from HAProxy's backend "+s.Backend)
		}
		for _, c := range s.Before {
			parts = append(parts, "before: "+c)
		}
		for _, c := range s.After {
			parts = append(parts, "after: "+c)
		}
	} else if st := a.Knobs.Text("strategy"); st != "" {
		parts = append(parts, "the replicas' strategy "+st)
		if others := slices.DeleteFunc(a.Knobs.Names(), func(n string) bool { return n == "strategy" }); len(others) > 0 {
			parts = append(parts, "its knobs "+strings.Join(others, ", "))
		}
	}
	if a.Retry != nil || a.Budget != nil || a.Throttle != nil || a.Hedge != nil || a.Breaker != nil {
		parts = append(parts, "its clients' own policy")
	}
	if len(a.Edge) > 0 {
		b, _ := json.Marshal(a.Edge)
		parts = append(parts, "the edges' policy with "+string(b))
	}
	if len(parts) == 0 {
		return "as the service is"
	}
	return strings.Join(parts, "; ")
}

// queryLine is a request's query values as a URL writes them, each
// NAME=VALUE, sorted by name.
func queryLine(q map[string]string) string {
	parts := make([]string, 0, len(q))
	for k, v := range q {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, "&")
}

func shortList(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:5], ", ") + fmt.Sprintf(", ... (%d)", len(items))
}

// requestLine is how a key becomes r: its method, path and query, and the
// names of its headers (common's too), never their values.
func requestLine(r load.Request, common http.Header) string {
	method := r.Method
	if method == "" {
		method = "GET"
	}
	req := method + " " + r.Path
	if len(r.Query) > 0 { // as written, {key} in them: a query value is never a secret (only headers read the environment)
		req += "?" + queryLine(r.Query)
	}
	names := make([]string, 0, len(common)+len(r.Headers))
	for k := range common {
		names = append(names, k)
	}
	for k := range r.Headers {
		names = append(names, k)
	}
	if len(names) > 0 {
		sort.Strings(names)
		req += ", headers " + strings.Join(names, ", ") + " (values not shown)"
	}
	if r.Body != "" {
		req += fmt.Sprintf(", a body of %d bytes", len(r.Body))
	}
	return req
}

// classLines describe each request class of tg: its share of the rate,
// its request, and where its keys come from.
func classLines(p Plan, tg *targets.Target) []string {
	var out []string
	for i, c := range result.ClassesOf(tg.Classes) {
		cl := tg.Classes[i]
		keys := "no key: the same request each time"
		switch {
		case c.Herd:
			keys = "the herd's: the keys below, whose hot keys the trigger hits"
		case cl.Space != nil:
			keys = "keys of its own: " + spaceLine(cl.Space)
		}
		req := requestLine(cl.Request, nil)
		if len(cl.Vegeta) > 0 {
			req, keys = vegetaLine(cl), "no key: each target as its file writes it"
		}
		out = append(out, fmt.Sprintf("%s: %.4g%% of the rate, %s req/s; %s; %s", c.Name, c.Share*100,
			strconv.FormatFloat(c.Share*float64(p.Rate), 'f', -1, 64), req, keys))
	}
	return out
}

// vegetaLine says what a class of vegeta targets sends: how many, taken
// in turn, and the first few as vegeta reads them (method and URL; its
// headers and body are the file's).
func vegetaLine(cl targets.Class) string {
	const shown = 3
	tgts := cl.Vegeta
	var first []string
	for _, t := range tgts[:min(len(tgts), shown)] {
		first = append(first, t.Method+" "+t.URL)
	}
	more := ""
	if len(tgts) > shown {
		more = fmt.Sprintf(", and %d more", len(tgts)-shown)
	}
	noun := "targets"
	if len(tgts) == 1 {
		noun = "target"
	}
	return fmt.Sprintf("%d vegeta %s, taken in turn: %s%s", len(tgts), noun, strings.Join(first, ", "), more)
}

// spaceLine says where a key space's keys come from.
func spaceLine(s *targets.KeySpace) string {
	switch {
	case len(s.List) > 0:
		return fmt.Sprintf("uniform over a list of %d keys", len(s.List))
	case s.Range != nil:
		return fmt.Sprintf("uniform over %d..%d", s.Range.From, s.Range.To)
	case s.Zipf != nil:
		return fmt.Sprintf("Zipf(%g) over %d..%d", s.Zipf.S, s.Zipf.From, s.Zipf.To)
	}
	return "none"
}

// capsLine says the caps a plan on a target is held to: the target's own
// limits, then herdbench's.
func capsLine(l targets.Limits) string {
	own := "herdbench's: " + strconv.Itoa(MaxRate) + " req/s, " + MaxArmDuration.String() + " an arm"
	var t []string
	if l.MaxRate > 0 {
		t = append(t, strconv.Itoa(l.MaxRate)+" req/s with every retry, hedge and burst")
	}
	if d := l.Duration(); d > 0 {
		t = append(t, d.String()+" an arm")
	}
	if d := l.Drain(); d > 0 {
		t = append(t, d.String()+" a drain")
	}
	if len(t) == 0 {
		return own + "; the target sets none of its own"
	}
	return "the target's: " + strings.Join(t, ", ") + "; " + own
}
