package triggers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/figure"
	"github.com/herdbench/herdbench/herd"
)

// Restart restarts a part of the testbed at T: the API replicas (cold
// in-process state, reconnects), Redis (an empty cache without persistence:
// a warm-up stampede) or Postgres (every connection lost, errors until it is
// back: a failover). Fire returns once the part serves again.
type Restart struct {
	Part    Part `json:"restart" help:"the part restarted at T"`
	Rolling bool `json:"rolling" help:"restart the API replicas one after another"`
}

// NewRestart is a restart with its defaults: the API replicas, all at once.
func NewRestart() *Restart { return &Restart{Part: herd.API} }

// RestartDetail is what restart did.
type RestartDetail struct {
	Part      string   `json:"part"`
	Rolling   bool     `json:"rolling"`
	Restarted []string `json:"restarted"` // the processes, by name
	TookMS    int64    `json:"took_ms"`   // until they served again
}

// Figures walks the detail's figures (trigger.detail.*), declared here.
func (d *RestartDetail) Figures(path string, c *figure.Collector) any {
	return figure.Pointer(d, path, c, figure.Decl[RestartDetail]{
		figure.NullWhen("restarted", func(d *RestartDetail) bool { return d.Restarted == nil }),
		figure.MillisOf("took_ms", func(d *RestartDetail) *int64 { return &d.TookMS }),
	})
}

var (
	_ Trigger  = (*Restart)(nil)
	_ Requirer = (*Restart)(nil)
)

func (*Restart) Name() string { return "restart" }

// Detail is an empty RestartDetail, into which results are read.
func (*Restart) Detail() any { return &RestartDetail{} }
func (r *Restart) Describe() string {
	how := "all at once"
	if r.Rolling {
		how = "rolling"
	}
	return fmt.Sprintf("%s restarted at T (%s): cold state, reconnects, a warm-up stampede", r.Part, how)
}

// Validate refuses a list of replicas that names one twice (it would be
// restarted once), and rolling on one process.
func (r *Restart) Validate() herd.FieldErrors {
	var errs herd.FieldErrors
	if herd.SomeReplicas.MatchString(string(r.Part)) && !herd.IsPart(string(r.Part)) {
		errs.Add("restart", "%q names a replica twice (accepted: %s, %s, each replica once)", r.Part, strings.Join(herd.Parts, ", "), herd.ReplicaForm)
	}
	// one after another takes more than one: the replicas, or a list
	if r.Rolling && r.Part != herd.API && len(herd.PartNames(string(r.Part))) < 2 {
		errs.Add("rolling", "true beside restart %s, one process, so it would do nothing (accepted: with restart api or a list of replicas, such as api-1,api-2; or left out)", r.Part)
	}
	return errs
}

// Requires a target whose processes herdbench can restart, among them
// the part.
func (r *Restart) Requires(c Caps) error {
	if !c.Restart {
		return errors.New("processes herdbench can restart (the testbed)")
	}
	if err := requirePart(c, string(r.Part)); err != nil {
		return &OptionNeeds{Option: "restart", Err: err}
	}
	return nil
}

// requirePart refuses a part the testbed does not run: memcached beside
// Redis, mariadb beside Postgres, or the other way round.
func requirePart(c Caps, part string) error {
	if c.Parts == nil || !slices.ContainsFunc(herd.PartNames(part), func(p string) bool { return !slices.Contains(c.Parts, p) }) {
		return nil
	}
	var parts, replicas []string // its parts, and its replicas by name (api-1, ...)
	for _, p := range c.Parts {
		if herd.OneReplica.MatchString(p) {
			replicas = append(replicas, p)
		} else {
			parts = append(parts, p)
		}
	}
	if (herd.OneReplica.MatchString(part) || herd.SomeReplicas.MatchString(part)) && len(replicas) > 0 {
		names := replicas[0]
		if len(replicas) > 1 {
			names += " to " + replicas[len(replicas)-1]
		}
		return fmt.Errorf("a testbed that runs %s (this one runs %s)", part, names)
	}
	return fmt.Errorf("a testbed that runs %s (this one runs %s)", part, strings.Join(parts, ", "))
}

func (r *Restart) Plan(env Env) string {
	return fmt.Sprintf("restart the testbed's %s (rolling: %v)", r.Part, r.Rolling)
}

// Fire restarts the part through the target's Restarter.
func (r *Restart) Fire(ctx context.Context, env Env) (Fired, error) {
	if env.Restarter == nil {
		return Fired{}, errors.New("restart: the target cannot restart its processes")
	}
	start := time.Now()
	done, err := env.Restarter.Restart(ctx, string(r.Part), r.Rolling)
	if err != nil {
		return Fired{}, fmt.Errorf("restart %s: %w", r.Part, err)
	}
	return Fired{Detail: &RestartDetail{Part: string(r.Part), Rolling: r.Rolling, Restarted: done, TookMS: time.Since(start).Milliseconds()}, Ended: time.Now()}, nil
}
