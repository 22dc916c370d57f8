package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/cmd/herdbench/testbedcmd"
	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/predict"
	"github.com/herdbench/herdbench/reporters"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/scenario"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

type stampedeOptions struct {
	Arms        []string
	Plan        plan.Plan
	Gates       []string     // --gate, parsed into Plan.Gates
	Abort       []string     // --abort-on, parsed into Plan.Abort
	Outputs     []string     // -o, parsed by parseOutputs
	Bed         testbedFlags // the testbed's flags and the replicas' knobs
	StateDir    string
	TestbedSet  []string // the flags of startFlags that were given, on the command line or in a scenario file
	JSONFile    string
	ResultsDir  string
	Progress    bool // a live line on stderr
	MetricsAddr string
	Target      string   // --target: testbed, a target file or a base URL
	AllowHosts  []string // --allow-host
	Workers     string   // --workers: URLs or dns:NAME:PORT
	WorkerCount int      // --worker-count
	WorkerToken string   // --worker-token-file: the file the workers' token is read from ("": $HERDBENCH_WORKER_TOKEN)
	DryRun      bool
	Yes         bool
	ArmsSet     bool            // --arms was given
	TriggerSet  map[string]bool // the flags of the trigger and its options given, on the command line or in a scenario file
	PlanSet     map[string]bool // the flags of the plan a target file may set (planFlags) given, on the command line or in a scenario file
	In          io.Reader       // where a confirmation is read, when InTTY
	InTTY       bool

	kinds  []kindOf  // the kinds of subject --target may name
	chosen plan.Kind // what --target names, once resolved (resolveTarget); nil when it could not be
	bedErr error     // why the testbed it names cannot be had as asked, told with the plan's problems
	// the workers' token is a Kubernetes Secret's, in the controller pod's
	// environment: kube checks a controller's command line, not this machine's
	podToken bool

	// A scenario file's arms, when it has some and --arms was not given;
	// its settings' places for errors.
	Scenario     *scenario.File
	ScenarioPath string
}

// Defaults of the stampede: a clear difference between arms, and the four
// default arms done in about 75 s on 2 cores.
var stampedeDefaults = plan.Plan{
	Trigger: "expire",
	Clients: 100,
	Retry:   retry.Policy{Kind: retry.None},
	HotKeys: 100,
	Rate:    1000,
	Keys:    10_000,
	Zipf:    1.1,
	Timeout: herd.Duration(time.Second),
	Warmup:  herd.Duration(2 * time.Second),
	Before:  herd.Duration(3 * time.Second),
	After:   herd.Duration(8 * time.Second),
	Repeat:  1,
}

// newStampedeOptions are the stampede's defaults, with the triggers of
// newTriggers (triggers.Default, or a test's).
func newStampedeOptions(stderr io.Writer, newTriggers func() *triggers.Registry) stampedeOptions {
	plan := stampedeDefaults
	plan.Triggers = newTriggers()
	return stampedeOptions{
		Arms: []string{replica.None, replica.Singleflight, replica.Lock, replica.XFetch},
		Plan: plan,
		Bed: testbedFlags{Knobs: replica.DefaultConfig, KnobsSet: map[string]bool{}, Replicas: local.DefaultReplicas,
			Startup: replica.DefaultOptions},
		StateDir:   testbedcmd.DefaultStateDir(),
		Target:     "testbed",
		kinds:      kinds,
		In:         os.Stdin,
		InTTY:      isTerminal(os.Stdin),
		ResultsDir: "herdbench-results",
		Progress:   isTerminal(stderr) && os.Getenv("CI") == "",
	}
}

func newStampedeCmd(stdout, stderr io.Writer, newTriggers func() *triggers.Registry) *cobra.Command {
	opts := newStampedeOptions(stderr, newTriggers)
	c := &cobra.Command{
		Use:   "stampede",
		Short: "Provoke a cache stampede once per arm and compare DB queries, p99 and drop rate",
		Long: `Provoke a herd once per arm (mitigation) and report side by side what the
database, the cache and the clients saw.

Each arm starts from the same state (cache flushed, hot keys warmed, replicas
reset), then runs steady open-model load (vegeta's constant schedule, Zipf keys,
round-robin over the replicas): warmup, before, the trigger at T, after.
Postgres (pg_stat_statements, pg_stat_activity), Redis (INFO) and the clients
(latency from each request's intended send time) are observed every 100 ms.

If a testbed is running (herdbench testbed up) the stampede uses it and
leaves it running; otherwise it starts one as testbed up would, with
testbed up's flags (--provider, --tiers, --items, --replicas, --db-pool,
...), and stops it at the end, on Ctrl-C and on failure too. A --keys
beyond the testbed's items is refused before anything runs. Results are always written under
--results-dir, also when interrupted (the arms that finished).

An arm is a patch: it sends the replicas its strategy and the knob flags
given (--ttl, --query-cost, ...), nothing else; a knob not given stays as
the testbed runs it (its default is what a testbed the stampede starts
gets). The results say what each arm ran (arms[].config).

Gates (--gate) are checked on every arm once it has run; stop conditions
(--abort-on) while it runs. A failed gate, or an arm stopped early, exits 99.

Triggers: ` + triggerHelp(opts.Plan.Triggers),
		Example: `  herdbench stampede
  herdbench stampede --arms none,lock,lock+ttl_jitter --rate 500
  herdbench stampede --trigger ttl --ttl 4s --hot-keys 100 --arms none,xfetch,ttl_jitter,lock
  herdbench stampede --gate 'lock:db.queries <= 120' -o markdown=summary.md -o junit=gates.xml`,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.TestbedSet = changed(c.Flags(), startFlags)
			opts.ArmsSet = c.Flags().Changed("arms")
			opts.TriggerSet = triggerFlagsSet(c.Flags(), opts.Plan)
			opts.PlanSet = planFlagsSet(c.Flags())
			return stampedeRun(c.Context(), stdout, stderr, opts)
		},
	}
	bindStampedeFlags(c.Flags(), &opts)
	groupHelp(c)
	return c
}

// bindStampedeFlags binds every flag of the stampede to opts. The run
// command binds the same flags, and a scenario file sets them by name.
func bindStampedeFlags(fs *pflag.FlagSet, opts *stampedeOptions) {
	p := &opts.Plan
	reg := p.Triggers
	fs.StringSliceVar(&opts.Arms, "arms", opts.Arms, "arms to compare, each a strategy ("+strings.Join(replica.Strategies, ", ")+
		", or several joined with +) or a client policy ("+strings.Join(subject.ArmKinds.Examples(), ", ")+
		"); with a scenario or target file, also the names of its arms")
	fs.StringVar(&p.Trigger, "trigger", p.Trigger, "what provokes the herd at T: "+strings.Join(reg.Names(), ", "))
	addTriggerFlags(fs, reg)
	fs.IntVar(&p.Clients, "clients", p.Clients, fmt.Sprintf("virtual clients sharing the load, each with its own retry state (1 to %d)", plan.MaxClients))
	fs.TextVar(&p.Retry, "retry", p.Retry, "the clients' retry `POLICY`: "+strings.Join(retry.Forms, ", ")+"; arms can set their own: --arms retry=POLICY,...")
	fs.Float64Var(&p.Throttle, "throttle", p.Throttle, "adaptive throttling's K for every client (0: off; the SRE book uses 2); arms can set their own: --arms throttle=2,...")
	fs.TextVar(&p.Budget, "retry-budget", p.Budget, "bounds each client's retries, a `BUDGET`: "+strings.Join(retry.BudgetForms, ", "))
	fs.TextVar(&p.Hedge, "hedge", p.Hedge, "hedge an attempt to the next replica after a `DELAY`: "+strings.Join(retry.HedgeForms, ", ")+"; arms: --arms hedge=50ms,...")
	fs.TextVar(&p.Breaker, "client-breaker", p.Breaker, "each client's own circuit `BREAKER`: "+strings.Join(retry.BreakerForms, ", ")+"; arms: --arms client-breaker=5:2s,...")
	fs.Float64Var(&p.Critical, "critical", p.Critical, "share of requests sent with X-Priority: critical, 0 to 1 (shed_priority admits them first)")
	fs.StringArrayVar(&opts.Gates, "gate", opts.Gates, "a pass/fail rule on every arm's results, [ARM:]PATH OP VALUE such as 'lock:db.queries <= 120' or 'http.drop_rate < 1%', or on its seconds after the settle, such as 'http.p99_ms < 250 for 95% of seconds' (repeatable); a failed gate exits 99")
	fs.StringArrayVar(&opts.Abort, "abort-on", opts.Abort, "stop an arm while it runs when a live condition holds over the last second, PATH OP VALUE such as 'http.drop_rate > 50%' (repeatable; paths: "+strings.Join(plan.LivePaths, ", ")+"; or verdict == "+strings.Join(plan.LiveWords["verdict"], "|")+", judged on the rows answered so far)")
	fs.Var(rateValue{&p.Rate}, "rate", fmt.Sprintf("requests per second, open model: 500, 1k, 1.5k or 2k/s (at most %d)", plan.MaxRate))
	fs.IntVar(&p.Keys, "keys", p.Keys, "key space: item ids 1..keys")
	fs.IntVar(&p.HotKeys, "hot-keys", p.HotKeys, "the hottest ids, warmed before each arm and hit by the trigger")
	fs.Float64Var(&p.Zipf, "zipf", p.Zipf, "Zipf exponent of the key distribution (greater than 1)")
	fs.DurationVar((*time.Duration)(&p.Timeout), "timeout", time.Duration(p.Timeout), "client timeout per request")
	fs.DurationVar((*time.Duration)(&p.Warmup), "warmup", time.Duration(p.Warmup), "load before measuring")
	fs.DurationVar((*time.Duration)(&p.Before), "before", time.Duration(p.Before), "measured load before T: the baseline")
	fs.Var(plan.AfterValue{P: p}, "after", "measured load after T: a duration, or auto[:MAX] to go on until the arm has recovered and held, or MAX (default "+plan.DefaultAfterMax.String()+") has passed")
	fs.Var(plan.EscapeValue{P: p}, "escape", "once an arm is judged metastable, step its rate down until the service comes back: the escape load (escape.rps); "+verdict.EscapeForms)
	fs.IntVar((*int)(&p.Repeat), "repeat", int(p.Repeat), fmt.Sprintf("run each arm N times, interleaved, and report the median with its min-max (1 to %d)", plan.MaxRepeat))
	fs.Uint64Var(&p.Seed, "seed", p.Seed, "seed of the key draws and the replicas' random sources (0: pick one and print it)")
	b := &opts.Bed
	grouped(fs, groupTestbed, func() {
		fs.IntVar(&b.Replicas, "replicas", b.Replicas, "API replicas when the stampede starts the testbed")
		testbedcmd.AddStartFlags(fs, &b.StartOptions, "auto: local when redis-server and the database (PostgreSQL, or MariaDB with --db mariadb) are installed, else docker; when the stampede starts the testbed")
		testbedcmd.AddStartupFlags(fs, &b.Startup)
	})
	fs.StringArrayVarP(&opts.Outputs, "output", "o", opts.Outputs, "a report: FORMAT to stdout or FORMAT=FILE, FORMAT one of "+strings.Join(reporters.FormatNames(), ", ")+
		"; or vegeta=FILE, every request from T - before as vegeta's results, for vegeta report and plot (repeatable; default: table)")
	cli.NonEmptyVar(fs, &opts.JSONFile, "json", opts.JSONFile, "a file name, such as results.json; or leave --json out", "also write the results JSON to `FILE` (as -o json=FILE)")
	cli.NonEmptyVar(fs, &opts.ResultsDir, "results-dir", opts.ResultsDir, "a directory, such as herdbench-results, the default", "where every run's results.json is written, in a directory per run")
	cli.NonEmptyVar(fs, &opts.MetricsAddr, "metrics-addr", "", "HOST:PORT on loopback, such as 127.0.0.1:9464; or leave it out", "serve live Prometheus metrics at `HOST:PORT` on loopback while the stampede runs (default: where the testbed's Prometheus scrapes, with testbed up --observability)")
	grouped(fs, groupKnobs, func() { testbedcmd.AddKnobFlags(fs, &b.Knobs, b.KnobsSet) })
	fs.StringVar(&opts.StateDir, "state-dir", opts.StateDir, "directory of the testbed's data, state file and logs (env HERDBENCH_STATE_DIR)")
	cli.NonEmptyVar(fs, &opts.Target, "target", opts.Target, "testbed, the default, a target file, or a base URL such as http://127.0.0.1:8080/items/{key}", "what is attacked: testbed (default), a target file (docs/targets.md), or a base URL such as http://127.0.0.1:8080/items/{key}")
	fs.StringArrayVar(&opts.AllowHosts, "allow-host", opts.AllowHosts, "a host besides loopback the target may touch, as in the target's URLs (repeatable)")
	cli.NonEmptyVar(fs, &opts.Workers, "workers", opts.Workers, "URL,URL,... of workers, such as http://10.0.0.5:7070, or dns:NAME:PORT; or leave it out to send the load from here", "send the load from herdbench workers: `URL,URL,...` or dns:NAME:PORT, every address of a headless Service (docs/distributed.md)")
	fs.IntVar(&opts.WorkerCount, "worker-count", opts.WorkerCount, "with --workers dns:NAME:PORT only, wait until this many workers resolve (0: as many as resolve at first)")
	cli.NonEmptyVar(fs, &opts.WorkerToken, "worker-token-file", "", "a file holding the workers' token; or leave it out for $HERDBENCH_WORKER_TOKEN", "with --workers, the `FILE` holding the workers' token (default: $HERDBENCH_WORKER_TOKEN)")
	fs.BoolVar(&opts.DryRun, "dry-run", opts.DryRun, "print what the run would send and touch, and send nothing")
	fs.BoolVar(&opts.Yes, "yes", opts.Yes, "do not ask before touching hosts that are not loopback")
	groupStampedeFlags(fs, reg)
	refuseEmpty(fs) // a scenario file's "" too
}

// groupStampedeFlags files each flag of the stampede under its purpose,
// for help (helpgroups.go).
func groupStampedeFlags(fs *pflag.FlagSet, reg *triggers.Registry) {
	regroup(fs, groupTarget, "target", "allow-host", "dry-run", "yes", "workers", "worker-count", "worker-token-file")
	regroup(fs, groupPlan, "arms", "rate", "keys", "hot-keys", "zipf", "warmup", "before", "after", "escape", "repeat", "seed")
	regroup(fs, groupClients, "clients", "timeout", "retry", "retry-budget", "throttle", "hedge", "client-breaker", "critical")
	regroup(fs, groupTrigger, "trigger")
	for _, o := range reg.Options() {
		regroup(fs, groupTrigger, o.Flag())
	}
	regroup(fs, groupGates, "gate", "abort-on")
	regroup(fs, groupOutput, "output", "json", "results-dir", "metrics-addr")
	regroup(fs, groupTestbed, "state-dir")
}

func triggerHelp(reg *triggers.Registry) string {
	var b strings.Builder
	for _, n := range reg.Names() {
		t, _ := reg.Get(n)
		b.WriteString(wrapItem(n, t.Describe()))
	}
	return b.String()
}

// addTriggerFlags binds a flag to every option of reg's triggers: the
// option's key with dashes, its help prefixed with its trigger.
func addTriggerFlags(fs *pflag.FlagSet, reg *triggers.Registry) {
	for _, o := range reg.Options() {
		help := o.Trigger + ": " + o.Help
		if o.Enum != nil {
			help += ": " + strings.Join(o.Enum, ", ")
		}
		var v pflag.Value = o
		if o.Type() == "string" {
			accepted := o.Help
			if o.Enum != nil {
				accepted = strings.Join(o.Enum, ", ")
			}
			if !strings.Contains(o.Help, "required") { // leaving it out is refused too
				accepted += "; or leave it out"
			}
			v = nonEmptyValue{o, accepted}
		}
		fs.Var(v, o.Flag(), help)
		if o.Type() == "bool" {
			fs.Lookup(o.Flag()).NoOptDefVal = "true"
		}
	}
}

// buildPlan turns opts into a plan and checks it: every problem at once,
// each naming its flag (or its place in the scenario file) and the
// accepted values.
func buildPlan(opts stampedeOptions) (plan.Plan, []output, error) {
	plan, bad := opts.Plan, herd.FieldErrors(nil)
	g := opts.given(nil) // its written arms are read once the knobs are (base)
	if c := opts.chosen; c != nil {
		plan, bad = c.Plan(g)
	}
	var problems herd.FieldErrors
	plan.Gates, problems = gates.ParseAll(opts.Gates, "gates")
	bad = append(bad, problems...)
	plan.Abort, problems = gates.ParseAll(opts.Abort, "abort_on")
	bad = append(bad, problems...)
	bad = append(bad, workerProblems(opts, plan)...)
	outs, err := parseOutputs(opts.Outputs, opts.JSONFile, runFormats())
	bad = append(bad, herd.Fields(err)...)
	bad = append(bad, checkVegeta(outs)...)
	bad = append(bad, pathProblems(opts, outs)...)
	bad = append(bad, zeroRepeat(plan)...)
	problems, base := opts.Bed.problems() // the knobs once, then each arm's
	bad = append(bad, problems...)
	g = opts.given(base)
	tg, sub := opts.target()
	if c := opts.chosen; c != nil {
		plan, problems = c.Arms(plan, g)
		bad = append(bad, problems...)
		bad = append(bad, herd.Fields(plan.ValidateFor(tg, sub))...)
	} else { // --target could not be read: the arms are checked as the testbed's all the same
		plan, problems = subject.Kind{}.Arms(plan, g)
		bad = append(bad, problems...)
		bad = append(bad, herd.Fields(plan.Validate())...)
		bad = append(bad, plan.CheckArms(subject.Checker{})...)
	}
	bad = append(bad, idleTriggerOptions(plan, opts.TriggerSet, bad)...)
	bad = append(bad, idleKnobs(plan, opts.Bed.Knobs.Registry(), opts.Bed.KnobsSet, bad)...)
	if base != nil { // the knobs' own problems said, an arm's are its own
		bad = append(bad, idleArmKnobs(plan, opts.Bed.Knobs.Registry(), base)...)
	}
	bad = append(bad, idleWriteKnobs(plan, opts.Bed.KnobsSet, bad)...)
	if c := opts.chosen; c != nil {
		bad = c.Problems(plan, g, bad)
	}
	if len(bad) == 0 { // where it would send: once the plan is sound
		bad = reachProblems(plan, opts)
	}
	// one problem per value, its follow-ons dropped; each --allow-host is
	// a value of its own, told apart by its message alone
	if bad = append(bad.Blame(opts.userSet).FirstPerField(), hostProblems(opts.AllowHosts)...); len(bad) > 0 {
		return plan, nil, cli.UsageError{Err: bad}
	}
	if plan.Seed == 0 {
		plan.Seed = rand.Uint64N(1_000_000) + 1 // short enough to retype
	}
	return plan, withTable(outs), nil
}

func stampedeRun(ctx context.Context, stdout, stderr io.Writer, opts stampedeOptions) error {
	p, outs, err := prepare(ctx, &opts, nil)
	if err != nil {
		return err
	}
	if opts.DryRun {
		tg, sub := opts.target()
		seePlan(ctx, p, tg, sub)
		return reporters.DryRun(stdout, plan.Describe(p, tg, sub))
	}
	return opts.open(ctx, stderr, p, func(o plan.Opened) error {
		return runAndReport(ctx, stdout, stderr, opts, o, p, outs)
	})
}

// runAndReport runs the plan on an open target, writes the results and the
// reports, and maps what happened to an error: gates failed (99), the run
// failed or was interrupted (1, with partial results).
func runAndReport(ctx context.Context, stdout, stderr io.Writer, opts stampedeOptions, o plan.Opened, p plan.Plan, outs []output) error {
	target, sub := o.Target, o.Subject
	gen, err := workersFor(ctx, opts, target, vegetaFile(outs))
	if err != nil {
		return err
	}
	observer, stopMetrics, err := liveMetrics(stderr, opts.MetricsAddr, o)
	if err != nil {
		return err
	}
	defer stopMetrics()
	vr, vegetaDone, err := vegetaResults(outs, gen != nil)
	if err != nil {
		return err
	}
	if vr != nil {
		observer = withObserver(observer, vr)
	}

	if _, err := p.TriggerSet().Get(p.Trigger); err != nil {
		return err
	}
	header := &experiment.Report{Seed: p.Seed, Plan: p, Environment: experiment.EnvironmentOf(target)}
	if c, ok := sub.(plan.Configured); ok {
		header.Environment.Replica, _ = c.Config(ctx) // the header shows the first arm's knobs over it
	}
	// the header belongs with the table; other reports on stdout stay clean
	hw := stderr
	if tableOnStdout(outs) {
		hw = stdout
	}
	reporters.Header(hw, header, plan.TriggerLine(p, target))

	started := time.Now()
	dir := filepath.Join(opts.ResultsDir, started.Format("20060102-150405"))
	line := newProgressLine(stderr, opts.Progress)
	rep, runErr := experiment.Run(ctx, p, experiment.Env{
		Target: target, Subject: sub, Version: herdbenchVersion(), Progress: line.update, Observer: observer, Generator: gen,
		ResultsDir: absDir(dir),
	})
	line.close()
	runErr = errors.Join(runErr, vegetaDone())
	if rep == nil {
		return runErr
	}
	predict.Expect(rep, func() *predict.Pools { return poolsOf(ctx, sub) }) // the model beside each verdict
	saved := filepath.Join(dir, "results.json")
	if err := reporters.WriteJSONFile(saved, rep); err != nil {
		return errors.Join(runErr, err)
	}
	if err := writeOutputs(stdout, outs, []*experiment.Report{rep}); err != nil {
		return errors.Join(runErr, err)
	}
	fmt.Fprintf(hw, "results   %s\n", strings.Join(append([]string{saved}, outputFiles(outs, gen != nil)...), ", "))
	if runErr == nil && !rep.Passed() {
		return gatesFailed{rep.Failures()}
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: partial results (%d of %d arms) in %s", len(rep.Arms), len(p.Arms), saved)
		}
		err := fmt.Errorf("%w (partial results in %s)", runErr, saved)
		if fe := new(*herd.FieldError); errors.As(runErr, fe) && (*fe).File != "" {
			return cli.UsageError{Err: err} // the target file's: a field that read nothing (targets.Filled, Counted)
		}
		return err
	}
	return nil
}

// absDir is dir made absolute, for a command run in another directory;
// dir as it is when the working directory is unknown.
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// isTerminal reports whether w is a terminal (not /dev/null, which is a
// character device too).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// planSeen is the context key of a func a test that runs a dry run in its
// process (fuzz_test.go) sets, to be handed the plan the dry run prints
// with its target, and check it on its own.
type planSeen struct{}

// seePlan hands plan to the func ctx holds under planSeen, if any.
func seePlan(ctx context.Context, p plan.Plan, tg *targets.Target, sub plan.Subject) {
	if f, ok := ctx.Value(planSeen{}).(func(plan.Plan, *targets.Target, plan.Subject)); ok {
		f(p, tg, sub)
	}
}
