package experiment

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
)

// Report is an experiment's results: the contract gates, reports and other
// tools read. Every figure traces to a source, named on its field.
type Report struct {
	Schema      string             `json:"schema"`
	Version     string             `json:"version"`
	Seed        uint64             `json:"seed"`
	StartedAt   time.Time          `json:"started_at"`
	Partial     bool               `json:"partial"`         // not every arm finished
	Saturated   bool               `json:"saturated"`       // in some arm the generator, not the service, was the bottleneck (arms[].load)
	Error       string             `json:"error,omitempty"` // why, when partial
	Plan        plan.Plan          `json:"plan"`
	Environment Environment        `json:"environment"`
	Arms        []result.ArmResult `json:"arms"`
	// Gates are the plan's gates checked on every finished arm, each with
	// the value it measured
	Gates []gates.Result `json:"gates"`
}

// Environment is where the experiment ran.
type Environment struct {
	Provider  string `json:"provider"` // local or docker (the testbed), file or url
	Target    string `json:"target"`   // testbed, the target file, or the URL
	Replicas  int    `json:"replicas"`
	Redis     string `json:"redis"`
	Postgres  string `json:"postgres"`
	Memcached string `json:"memcached,omitempty"` // the testbed's item cache, when it is Memcached
	MariaDB   string `json:"mariadb,omitempty"`   // the testbed's database, when it is MariaDB (postgres is then empty)
	CPUs      int    `json:"cpus"`
	Go        string `json:"go"`
	OS        string `json:"os"`
	Herdbench string `json:"herdbench"`
	// Replica is the testbed's replicas' config as the run found them:
	// what every arm's knobs are set over (arms[].config is the result)
	Replica json.RawMessage `json:"replica_config,omitempty"`
	// Requests are the classes of the target's traffic (its file's
	// requests:), in its order; absent for a target of one request
	Requests []result.ClassInfo `json:"requests,omitempty"`
}

// Passed says whether the run passes: every gate held and no arm aborted.
func (r *Report) Passed() bool { return len(r.Failures()) == 0 }

// Failures says why the run does not pass, one line per reason.
func (r *Report) Failures() []string {
	var out []string
	if failed := gates.Failed(r.Gates); failed > 0 {
		out = append(out, fmt.Sprintf("%d of %d gates failed", failed, len(r.Gates)))
	}
	for _, a := range r.Arms {
		if len(a.Runs) == 0 && a.Aborted != nil {
			out = append(out, fmt.Sprintf("arm %s was stopped at %+dms: %s", a.Name, a.Aborted.AtMS, a.Aborted.Gate))
		}
		for i, run := range a.Runs { // a repeated arm: every run stopped counts
			if run.Aborted != nil {
				out = append(out, fmt.Sprintf("arm %s, run %d of %d, was stopped at %+dms: %s", a.Name, i+1, len(a.Runs), run.Aborted.AtMS, run.Aborted.Gate))
			}
		}
	}
	return out
}
