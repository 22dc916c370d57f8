package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/testbedcmd"
	"github.com/herdbench/herdbench/scenario"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
)

// tally is the throwaway mitigation of docs/architecture.md's recipe: one
// type, its knob a tagged field, its counter declared beside it, nothing
// else anywhere. It loads on a miss, as none does, and answers with the
// outcome its knob names.
type tally struct {
	Outcome string `json:"tally_outcome" help:"tally: the X-Cache outcome of a miss it loads"`
}

const metricTallied = "herdbench_api_tallied_total"

func (tally) Name() string { return "tally" }
func (tally) Describe() string {
	return "every miss loads, counted and answered under a name of its own"
}
func (tally) Kind() string           { return replica.KindLoader }
func (tally) ExclusiveGroup() string { return replica.KindLoader }
func (tally) Counters() []api.Counter {
	return []api.Counter{{Name: metricTallied, Help: "Misses tally loaded."}}
}

func (t tally) LoadMiss(r *api.Request) (api.Item, string, error) {
	it, err := r.Load()
	if err == nil {
		r.Count(metricTallied)
	}
	return it, t.Outcome, err
}

// withTally is the registry with the throwaway mitigation: what the one
// line in replica.DefaultMitigations makes it.
func withTally() *replica.Mitigations {
	return replica.NewMitigations(append(replica.DefaultMitigations().Mitigations(), tally{Outcome: "tallied"})...)
}

// A mitigation added to the registry is in herdbench mitigations, the
// replicas' flags and arguments, the scenario schema, and a replica runs
// it on real Redis and Postgres, its knob set by flag and its counter
// counting.
func TestAddingAMitigationIsOneTypeAndOneRegistryLine(t *testing.T) {
	var list bytes.Buffer
	cmd := newMitigationsCmd(&list, withTally)
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil || !strings.Contains(list.String(), "tally          loader") ||
		!strings.Contains(list.String(), "--tally-outcome tallied") {
		t.Errorf("herdbench mitigations = %v:\n%s\nwant tally, its kind and its knob", err, list.String())
	}
	schema, err := scenario.Schema(scenario.Vocabulary{Knobs: subject.Knobs(withTally())})
	if err != nil || !bytes.Contains(schema, []byte(`"tally_outcome"`)) {
		t.Errorf("scenario schema (%v) lacks the mitigation's knob", err)
	}

	// testbed up's flags take it, and pass it to the replicas' serve
	tb := localtest.Start(t, local.Config{Replicas: 1, Items: 20})
	st := tb.Status()
	up := replica.DefaultOptions
	up.Config = withTally().DefaultConfig()
	upFlags := pflag.NewFlagSet("up", pflag.ContinueOnError)
	testbedcmd.AddReplicaFlags(upFlags, &up)
	if f := upFlags.Lookup("strategy"); f == nil || !strings.Contains(f.Usage, "tally") {
		t.Errorf("--strategy's help lacks tally")
	}
	if err := upFlags.Parse([]string{"--strategy", "tally", "--tally-outcome", "counted", "--query-cost", "1ms"}); err != nil {
		t.Fatal(err)
	}
	up.RedisAddr = strings.TrimPrefix(st.Redis, "redis://")
	up.PostgresDSN = st.Postgres
	args := local.ServeArgs("127.0.0.1:0", up)
	if !slices.Contains(args, "--tally-outcome") {
		t.Fatalf("ServeArgs = %v; want --tally-outcome", args)
	}
	srv, redisAddr := serveTally(t, args)
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	t.Cleanup(func() { _ = rdb.Close() })
	miss := func(wantOutcome string) {
		t.Helper()
		if err := rdb.Del(t.Context(), api.ItemKey(8)).Err(); err != nil {
			t.Fatal(err)
		}
		resp, body := get("/items/8")
		if got := resp.Header.Get("X-Cache"); resp.StatusCode != http.StatusOK || got != wantOutcome {
			t.Fatalf("GET /items/8 after its key was deleted = %d %s, X-Cache %q; want 200, %s", resp.StatusCode, body, got, wantOutcome)
		}
	}
	// a miss is tally's: its outcome from the flag, its counter counting;
	// a hit is not
	miss("counted")
	if resp, _ := get("/items/8"); resp.Header.Get("X-Cache") != admin.OutcomeHit {
		t.Errorf("GET /items/8 again: X-Cache %q; want hit", resp.Header.Get("X-Cache"))
	}
	if _, metrics := get("/metrics"); !strings.Contains(metrics, metricTallied+" 1\n") {
		t.Errorf("/metrics lacks %s 1:\n%s", metricTallied, grepMetric(metrics, metricTallied))
	}
	// PUT /admin/config sets its knob by its flat key
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/admin/config", strings.NewReader(`{"strategy":"tally","tally_outcome":"again"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /admin/config tally_outcome = %d; want 200", resp.StatusCode)
	}
	miss("again")
}

func grepMetric(metrics, name string) string {
	var out []string
	for _, l := range strings.Split(metrics, "\n") {
		if strings.Contains(l, name) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// serveTally runs in this process the replica `testbed serve` makes of
// args, its registry withTally, and returns it with its Redis address.
func serveTally(t *testing.T, args []string) (*httptest.Server, string) {
	t.Helper()
	o := replica.DefaultOptions
	o.Mitigations = withTally()
	o.Config = o.Mitigations.DefaultConfig()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	var listen string
	fs.StringVar(&listen, "listen", "", "")
	fs.StringVar(&o.Name, "name", "", "")
	fs.StringVar(&o.RedisAddr, "redis", "", "")
	fs.StringVar(&o.PostgresDSN, "postgres", "", "")
	testbedcmd.AddReplicaFlags(fs, &o)
	if err := fs.Parse(args[2:]); err != nil {
		t.Fatalf("serve %v: %v", args, err)
	}
	s, err := api.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv, o.RedisAddr
}
