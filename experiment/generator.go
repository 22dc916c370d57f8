package experiment

import (
	"context"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
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
	Live     bool // the plan has stop conditions: the recorder keeps the live window
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
	Run(ctx context.Context, start, t time.Time, rec *Recorder, each func(load.Record)) (*result.Workers, error)
}

// StepLeader is a Prepared load whose escape steps (Job.Steps) must be
// set further ahead of their instants than one interval of the rate, the
// pacer's own lead: the workers get each step in a message, and each
// paces its stripe, every Nth request of the schedule.
type StepLeader interface {
	// StepLead is how long before its instant a step down from rps
	// requests a second must be set.
	StepLead(rps float64) time.Duration
}

// inProcess sends the load from this process.
type inProcess struct{}

func (inProcess) Prepare(_ context.Context, job Job) (Prepared, error) {
	c := job.Load
	c.Source = job.Space.Source(job.Seed)
	c.Classes = LoadClasses(job.Classes, job.Seed)
	c.Cut, c.Steps = job.Cut, job.Steps
	return localLoad{c}, nil
}

type localLoad struct{ c load.Config }

func (localLoad) Lead() time.Duration { return scheduleLead }

func (l localLoad) Run(ctx context.Context, start, _ time.Time, _ *Recorder, each func(load.Record)) (*result.Workers, error) {
	l.c.Start = start
	_, err := load.Attack(ctx, l.c, each)
	return nil, err
}
