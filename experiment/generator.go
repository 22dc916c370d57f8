package experiment

import (
	"context"
	"time"

	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// Generator sends an arm's load: on this machine when Env.Generator is nil,
// or from several workers (package workers, --workers), each sending its
// stripe of the one schedule.
type Generator interface {
	// Prepare readies job's load, so that it can start any time from
	// Lead after Prepare returns.
	Prepare(ctx context.Context, job Job) (Prepared, error)
}

// Job is one arm's load: what to send, and the window its requests are
// filed in.
type Job struct {
	Arm      string
	Load     load.Config       // Start and Source unset
	Space    *targets.KeySpace // where keys come from; nil: Zipf over Load.Keys
	Classes  []targets.Class   // the target's classes of requests; none: Load.Request alone
	Seed     uint64            // seeds the key draws of Space
	Before   time.Duration
	After    time.Duration
	Critical bool // critical requests are counted apart
	// Burst is the burst trigger's clients when the generator releases
	// them itself (BurstSender), at T; HotKeys are the keys they ask for
	Burst   int
	HotKeys []string
	// Cut may end the load before its After (an arm that ends on its
	// verdict); a Generator that cannot cut refuses a Job that has one
	Cut *load.Cut
	// Steps may lower the load's rate while it runs (--escape); it comes
	// with a Cut, so a Generator that cannot cut refuses it too
	Steps *load.Steps
}

// BurstSender is a Generator that releases the burst trigger's clients
// itself: each worker opens its share of the connections and releases them
// at T on its own clock, and the arm's burst is the merged one.
type BurstSender interface {
	SendsBursts() bool
}

// sendsBursts says whether g releases the burst trigger's clients itself.
func sendsBursts(g Generator) bool {
	b, ok := g.(BurstSender)
	return ok && b.SendsBursts()
}

// Prepared is a load ready to start.
type Prepared interface {
	// Lead is how long before its schedule starts the load must be told.
	Lead() time.Duration
	// Run sends the load on its schedule from start, with T at t, until
	// it ends or ctx does, and files every request through each, one by
	// one, as it ends (the workers' as they stream in: see Hearer); rec is
	// the arm's recorder each files into. It returns how the workers kept
	// the herd together; nil on this machine.
	Run(ctx context.Context, start, t time.Time, rec *Recorder, each func(load.Record)) (*Workers, error)
}

// Workers is how the workers of a distributed arm kept one herd.
type Workers struct {
	Count int `json:"count"`
	// StartSkewMaxMS is the spread of the workers' first requests against
	// the schedule (their departure, less the instant due, on worker 0's
	// clock: max - min); StartSkewP99MS its 99th percentile over workers.
	StartSkewMaxMS float64  `json:"start_skew_max_ms"`
	StartSkewP99MS float64  `json:"start_skew_p99_ms"`
	Each           []Worker `json:"each"`
	// Burst is the burst the workers released, merged: the arm's burst
	Burst *triggers.BurstResult `json:"-"`
}

// Worker is one worker's part of an arm.
type Worker struct {
	Index int    `json:"index"`
	URL   string `json:"url"`
	// ClockOffsetMS is the worker's clock less worker 0's, measured as NTP
	// does before the arm; ClockErrorMS bounds it (half the round trip).
	ClockOffsetMS float64 `json:"clock_offset_ms"`
	ClockErrorMS  float64 `json:"clock_error_ms"`
	// FirstLagMS is how late its first request left against the instant
	// it was due, on its own clock.
	FirstLagMS float64     `json:"first_lag_ms"`
	Load       LoadFigures `json:"load"`            // its generator's own figures
	Burst      int         `json:"burst,omitempty"` // the burst trigger's clients it released
	// PastCut is how many requests it sent past the arm's cut, which
	// reached it after its instant: not in the arm's figures
	PastCut int64 `json:"past_cut,omitempty"`
}

// inProcess sends the load from this process.
type inProcess struct{}

func (inProcess) Prepare(_ context.Context, job Job) (Prepared, error) {
	c := job.Load
	c.Source = job.Space.Source(job.Seed)
	c.Classes = loadClasses(job.Classes, job.Seed)
	c.Cut, c.Steps = job.Cut, job.Steps
	return localLoad{c}, nil
}

type localLoad struct{ c load.Config }

func (localLoad) Lead() time.Duration { return scheduleLead }

func (l localLoad) Run(ctx context.Context, start, _ time.Time, _ *Recorder, each func(load.Record)) (*Workers, error) {
	l.c.Start = start
	_, err := load.Attack(ctx, l.c, each)
	return nil, err
}
