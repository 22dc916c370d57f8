package predict

import (
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/model"
	"github.com/herdbench/herdbench/reporters"
	"github.com/herdbench/herdbench/sweep"
)

// testdata/slowdb.json is a real stampede on the local testbed
// (2026-12-02, beside other engineers' tests): one replica of 4
// connections at 50 ms a query, its 5 s db-timeout, 40 req/s with a 1 s
// timeout and immediate:4, slowdb 500 ms for 3 s, arms none,
// retry-budget=10% and lock; none and the budget did not recover.
var slowdbPools = &Pools{Replicas: 1, Connections: 4, DBTimeout: 5 * time.Second}

func readResults(t *testing.T, path string) *experiment.Report {
	t.Helper()
	rep, err := reporters.ReadJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func inputsByName(in []sweep.Input) map[string]sweep.Input {
	m := map[string]sweep.Input{}
	for _, i := range in {
		m[i.Name] = i
	}
	return m
}

// Each arm of a real results file gets the model's prediction for the
// fault it ran, from inputs read where the docs say, or a refusal and no
// number.
func TestResultsPredictsEachArmOfARealRun(t *testing.T) {
	arms, err := Results(readResults(t, "testdata/slowdb.json"), slowdbPools)
	if err != nil {
		t.Fatal(err)
	}
	if len(arms) != 3 {
		t.Fatalf("got %d arms; want none, retry-budget=10%%, lock", len(arms))
	}
	none, budget, lock := arms[0], arms[1], arms[2]
	in := inputsByName(none.Inputs)
	for name, want := range map[string]struct {
		v      float64
		source string
	}{
		"workers": {4, "summed over 1"}, "work": {50, "config.query_cost"}, "capacity": {80, "workers / work"},
		"deadline": {5000, "db_timeout_ms"}, "rate": {40, "plan.rate"}, "timeout": {1000, "plan.timeout"},
		"retries": {4, "immediate:4"}, "slower": {500, "slowdb_latency"}, "fault": {3000, "slowdb_for"},
		"stuck": {74.1, "loop.db_qps.after"}, "db_per_attempt": {0.98, "db.baseline_qps"},
	} {
		if i, ok := in[name]; !ok || i.Value != want.v || !strings.Contains(i.Source, want.source) {
			t.Errorf("none's input %s = %+v (listed %v); want %v from %q", name, i, ok, want.v, want.source)
		}
	}
	s := model.Service{Workers: 4, Work: 50 * time.Millisecond, Deadline: 5 * time.Second, Stuck: 74.1}
	c := model.Clients{Rate: 40, Timeout: time.Second, Retries: 4}
	o := model.DefaultOptions
	o.Lead, o.Horizon, o.DBPerAttempt = time.Second, 6*time.Second, 0.98
	want, err := model.Predict(s, c, model.Fault{Slower: 500 * time.Millisecond, Duration: 3 * time.Second}, o)
	if err != nil {
		t.Fatal(err)
	}
	p := none.Prediction
	if p == nil || !p.Tips || p.ShortestTipMS == nil || *p.ShortestTipMS != *want.ShortestTipMS || p.RecoveryMS != nil {
		t.Errorf("none predicted %+v; want it tipped by its 3 s fault, at the model's %+v", p, want)
	}
	if none.Verdict != "recovering" || none.RecoveryMS != nil {
		t.Errorf("none measured %s, recovery %v; want the file's recovering, null", none.Verdict, none.RecoveryMS)
	}
	if b := budget.Prediction; b == nil || inputsByName(budget.Inputs)["budget"].Value != 0.1 ||
		b.ShortestTipMS == nil || *b.ShortestTipMS <= *p.ShortestTipMS {
		t.Errorf("budget predicted %+v; want a prediction from its 10%% budget that tips later than none's", b)
	}
	if lock.Prediction != nil || !strings.Contains(lock.Refused, "strategy lock") {
		t.Errorf("lock predicted %+v, refused %q; want no number and the refusal's note", lock.Prediction, lock.Refused)
	}
}

// A run of another trigger is refused arm by arm, and is not bad input:
// the model does not cover it.
func TestResultsRefusesAnotherTrigger(t *testing.T) {
	rep := readResults(t, "../reporters/testdata/results.json")
	rep.Plan.Trigger = "conndrop"
	arms, err := Results(rep, slowdbPools)
	if err != nil || len(arms) != 4 {
		t.Fatalf("Results(conndrop run) = %d arms, %v; want 4 refused, no error", len(arms), err)
	}
	for _, a := range arms {
		if a.Prediction != nil || a.LookAside != nil || !strings.Contains(a.Refused, "this trigger is conndrop") {
			t.Errorf("arm %s: predicted %+v, refused %q; want refused for its trigger", a.Name, a.Prediction, a.Refused)
		}
	}
}

// What the model needs and the file lacks is a field error naming it and
// the run that would measure it; the other arms are still predicted.
func TestResultsNamesWhatIsMissing(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*experiment.Report)
		want string
	}{
		{"no trigger", func(r *experiment.Report) { r.Plan.Trigger = "" }, "plan.trigger: none"},
		{"no stuck capacity", func(r *experiment.Report) { r.Arms[0].Loop = nil },
			"arms[0]: none: no run of the arm tipped, so none measured the stuck state's capacity (loop.db_qps.after): a run whose fault tips it"},
		{"no baseline", func(r *experiment.Report) { r.Arms[0].DB = nil }, "arms[0]: none: no run measured the database's queries"},
		{"no config", func(r *experiment.Report) { r.Arms[0].Config = nil }, "arms[0]: none: the arm's run has no replicas' config"},
		{"a capacity of 0", func(r *experiment.Report) {
			r.Arms[0].Config = []byte(strings.NewReplacer(`"query_cost":"50ms"`, `"query_cost":"0s"`,
				`"query_cost": "50ms"`, `"query_cost": "0s"`).Replace(string(r.Arms[0].Config)))
		}, "arms[0]: none: config.query_cost 0s: a capacity of 0 serves nothing"},
	} {
		rep := readResults(t, "testdata/slowdb.json")
		c.edit(rep)
		arms, err := Results(rep, slowdbPools)
		fe := herd.Fields(err)
		if len(fe) != 1 || !strings.Contains(fe[0].Error(), c.want) {
			t.Errorf("%s: Results = %v; want one field error containing %q", c.name, err, c.want)
			continue
		}
		if c.name != "no trigger" && (len(arms) != 2 || arms[0].Name != "retry-budget=10%" || arms[0].Prediction == nil) {
			t.Errorf("%s: arms %+v; want the budget's prediction and lock's refusal still", c.name, arms)
		}
	}
}
