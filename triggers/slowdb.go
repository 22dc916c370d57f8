package triggers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/herdbench/herdbench/figure"
	"github.com/herdbench/herdbench/herd"
)

// SlowDB adds latency to every Postgres reply from T for a while: requests
// take longer, clients time out and retry, and the retries add load to a
// database that is already slow.
type SlowDB struct {
	Latency herd.Duration `json:"slowdb_latency" help:"latency added to every Postgres reply"`
	For     herd.Duration `json:"slowdb_for" help:"how long"`
}

// NewSlowDB is a slow database with its defaults: 300 ms more per reply,
// for 3 s.
func NewSlowDB() *SlowDB {
	return &SlowDB{Latency: herd.Duration(300 * time.Millisecond), For: herd.Duration(3 * time.Second)}
}

// Slowdown is a trigger that slows every database reply: by how much,
// and for how long (a model of the herd reads it, predict/).
type Slowdown interface {
	Slowdown() (slower, lasts time.Duration)
}

// Slowdown is slowdb's added latency and how long it lasts.
func (s *SlowDB) Slowdown() (slower, lasts time.Duration) {
	return time.Duration(s.Latency), time.Duration(s.For)
}

// SlowDBDetail is what slowdb did.
type SlowDBDetail struct {
	LatencyMS int64 `json:"latency_ms"`
	ForMS     int64 `json:"for_ms"`
	SlowMS    int64 `json:"slow_ms"` // shorter than for_ms when the arm was stopped early
}

// Figures walks the detail's figures (trigger.detail.*), declared here.
func (d *SlowDBDetail) Figures(path string, c *figure.Collector) any {
	return figure.Pointer(d, path, c, figure.Decl[SlowDBDetail]{
		figure.MillisOf("latency_ms", func(d *SlowDBDetail) *int64 { return &d.LatencyMS }),
		figure.MillisOf("for_ms", func(d *SlowDBDetail) *int64 { return &d.ForMS }),
		figure.MillisOf("slow_ms", func(d *SlowDBDetail) *int64 { return &d.SlowMS }),
	})
}

// SlowToxic names the latency toxic slowdb adds, so it can be found and
// removed after a killed run.
const SlowToxic = "herdbench-slowdb"

var (
	_ Trigger  = (*SlowDB)(nil)
	_ Requirer = (*SlowDB)(nil)
	_ Lasting  = (*SlowDB)(nil)
)

func (*SlowDB) Name() string { return "slowdb" }

// Detail is an empty SlowDBDetail, into which results are read.
func (*SlowDB) Detail() any { return &SlowDBDetail{} }
func (s *SlowDB) Describe() string {
	return fmt.Sprintf("Postgres replies %s slower from T for %s: timeouts, retries, more load", s.Latency, s.For)
}

// Validate checks the latency and how long it lasts.
func (s *SlowDB) Validate() herd.FieldErrors {
	var errs herd.FieldErrors
	switch {
	case s.Latency <= 0 || s.Latency > herd.Duration(30*time.Second):
		errs.Add("slowdb_latency", "%s out of range (accepted: more than 0, at most 30s)", s.Latency)
	case time.Duration(s.Latency)%time.Millisecond != 0: // toxiproxy's latency toxic takes whole milliseconds
		errs.Add("slowdb_latency", "%s is not whole milliseconds, and toxiproxy's latency toxic takes only those (accepted: such as 1ms or 300ms)", s.Latency)
	}
	if s.For <= 0 || s.For > herd.Duration(time.Minute) {
		errs.Add("slowdb_for", "%s out of range (accepted: more than 0, at most 1m)", s.For)
	}
	return errs
}

// Lasts is how long the database stays slow.
func (s *SlowDB) Lasts() (string, time.Duration) { return "slowdb_for", time.Duration(s.For) }

// Requires toxiproxy in front of Postgres.
func (*SlowDB) Requires(c Caps) error {
	if !slices.Contains(c.Proxies, herd.Postgres) {
		return errors.New("toxiproxy in front of postgres (toxiproxy.proxies.postgres in the target file)")
	}
	return nil
}

func (s *SlowDB) Plan(env Env) string {
	return fmt.Sprintf("add %s of latency to toxiproxy proxy %s for %s, then remove it", s.Latency, env.Proxies[herd.Postgres], s.For)
}

// Fire adds a latency toxic to the Postgres proxy for s.For, and removes it
// when the time is up or ctx ends.
func (s *SlowDB) Fire(ctx context.Context, env Env) (Fired, error) {
	p, err := proxy(env, herd.Postgres)
	if err != nil {
		return Fired{}, err
	}
	lat, d := time.Duration(s.Latency), time.Duration(s.For)
	if _, err := p.AddToxic(SlowToxic, "latency", "downstream", 1, toxiclient.Attributes{"latency": lat.Milliseconds()}); err != nil {
		return Fired{}, fmt.Errorf("slowdb: add latency: %w", err)
	}
	slow := time.Now()
	wait(ctx, d)
	if err := p.RemoveToxic(SlowToxic); err != nil {
		return Fired{}, fmt.Errorf("slowdb: remove latency: %w", err)
	}
	return Fired{Detail: &SlowDBDetail{LatencyMS: lat.Milliseconds(), ForMS: d.Milliseconds(), SlowMS: time.Since(slow).Milliseconds()}, Ended: time.Now()}, nil
}
