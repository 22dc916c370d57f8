// Command vsvegeta measures herdbench's generator against vegeta's own CLI
// on this machine, in one run, against one trivial loopback server (a Go
// process answering 200 "ok"): for each rate, each tool's achieved rate,
// CPU seconds per 10,000 requests (the tool's process, from its rusage),
// latency p50 and p99, and how late requests left against their schedule.
// Then the burst: herdbench releasing N clients at once, against the floor
// this machine allows (N pre-opened sockets, pre-serialized requests
// written in one plain loop), on the same server.
//
//	go run ./bench/vsvegeta                 # rates 1000,5000,20000 for 10s
//	go run ./bench/vsvegeta -rates 1000 -duration 8s -burst 1000
//
// It builds herdbench from this tree and vegeta's CLI at the version
// go.mod pins (from the Go module proxy), and sends load to loopback only.
// docs/performance.md has its figures and how to read them.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func main() {
	serve := flag.Bool("serve", false, "run the trivial server and print its address (used by the benchmark itself)")
	rates := flag.String("rates", "1000,5000,20000", "rates to compare, requests/s")
	duration := flag.Duration("duration", 10*time.Second, "how long each tool attacks at each rate")
	burst := flag.Int("burst", 1000, "clients in the burst comparison, after the rates (0: skip it)")
	rounds := flag.Int("rounds", 3, "rounds of every rate, each tool in turn, and of each kind of burst: the table has their medians")
	flag.Parse()
	if *serve {
		trivial()
		return
	}
	o, err := parse(*rates, *duration, *burst, *rounds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vsvegeta:", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "vsvegeta:", err)
		os.Exit(1)
	}
}

// options are the benchmark's flags, checked.
type options struct {
	rates         []int
	duration      time.Duration
	burst, rounds int
}

// parse checks the flags, naming the flag and what it accepts.
func parse(rateList string, duration time.Duration, burst, rounds int) (options, error) {
	o := options{duration: duration, burst: burst, rounds: rounds}
	for _, s := range strings.Split(rateList, ",") {
		rate, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || rate < 1 {
			return o, fmt.Errorf("-rates: %q is not a rate (accepted: whole numbers above 0, such as 1000,5000)", s)
		}
		o.rates = append(o.rates, rate)
	}
	switch {
	case duration < 2*time.Second:
		return o, fmt.Errorf("-duration: %s (accepted: 2s or more: herdbench's run is 1s before T and the rest after)", duration)
	case burst < 0 || burst > 10_000:
		return o, fmt.Errorf("-burst: %d (accepted: 0, none, to 10000 clients)", burst)
	case rounds < 1:
		return o, fmt.Errorf("-rounds: %d (accepted: 1 or more)", rounds)
	}
	return o, nil
}

// trivial answers every request with 200 "ok", on a free loopback port.
func trivial() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
}

// result is one tool's run at one rate.
type result struct {
	tool               string
	rate               int
	sent               int
	achieved           float64 // requests/s
	cpu                time.Duration
	p50, p99           time.Duration // latency, as the tool reports it
	lagP50, lagP99     time.Duration // how late requests left against the schedule
	latencyFromPlanned bool          // herdbench counts latency from the intended send time
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "vsvegeta-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	herdbench, vegetaCLI, err := build(dir)
	if err != nil {
		return err
	}
	addr, stop, err := startServer()
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("server    %s (one Go process answering 200 \"ok\"), %d CPUs, %s per rate per tool, %d rounds, %s\n",
		addr, runtime.NumCPU(), o.duration, o.rounds, time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Printf("load average at the start: %s\n", loadAverage())
	runs := map[string][]result{}
	for round := range o.rounds {
		for _, rate := range o.rates {
			// the tools take turns going first, round by round
			tools := []func() (result, error){
				func() (result, error) { return runVegeta(vegetaCLI, dir, addr, rate, o.duration) },
				func() (result, error) { return runHerdbench(herdbench, dir, addr, rate, o.duration) },
			}
			if round%2 == 1 {
				tools[0], tools[1] = tools[1], tools[0]
			}
			for _, tool := range tools {
				r, err := tool()
				if err != nil {
					return err
				}
				k := r.tool + "@" + strconv.Itoa(rate)
				runs[k] = append(runs[k], r)
			}
		}
	}
	printResults(o, runs)
	fmt.Printf("load average at the end: %s\n", loadAverage())
	if o.burst > 0 {
		return compareBurst(herdbench, dir, addr, o.burst, o.rounds)
	}
	return nil
}

// startServer starts the trivial server in a process of its own.
func startServer() (addr string, stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	srv := exec.Command(self, "-serve")
	out, err := srv.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := srv.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { _ = srv.Process.Kill(); _ = srv.Wait() }
	addr, err = bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("trivial server: %w", err)
	}
	return strings.TrimSpace(addr), stop, nil
}

// loadAverage is /proc/loadavg's first three figures.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// build compiles herdbench from this tree and installs vegeta's CLI at the
// version go.mod requires.
func build(dir string) (herdbench, vegetaCLI string, err error) {
	herdbench = filepath.Join(dir, "herdbench")
	if out, err := exec.Command("go", "build", "-o", herdbench, "./cmd/herdbench").CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("build herdbench (run from the repository's root): %v\n%s", err, out)
	}
	version, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/tsenart/vegeta/v12").Output()
	if err != nil {
		return "", "", fmt.Errorf("vegeta's version in go.mod: %w", err)
	}
	install := exec.Command("go", "install", "github.com/tsenart/vegeta/v12@"+strings.TrimSpace(string(version)))
	install.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	if out, err := install.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("install vegeta's CLI: %v\n%s", err, out)
	}
	return herdbench, filepath.Join(dir, "vegeta"), nil
}

// cpuOf is the user and system time a finished command used.
func cpuOf(c *exec.Cmd) time.Duration {
	return c.ProcessState.UserTime() + c.ProcessState.SystemTime()
}

// runVegeta attacks with vegeta's CLI and reads its results: latency as it
// counts it (from each hit's start), and lateness against its schedule
// (began + (seq+1) intervals, began estimated as the earliest start a hit
// allows).
func runVegeta(cli, dir, addr string, rate int, duration time.Duration) (result, error) {
	path := filepath.Join(dir, fmt.Sprintf("vegeta-%d.bin", rate))
	f, err := os.Create(path)
	if err != nil {
		return result{}, err
	}
	cmd := exec.Command(cli, "attack", "-rate="+strconv.Itoa(rate), "-duration="+duration.String())
	cmd.Stdin = strings.NewReader("GET http://" + addr + "/\n")
	cmd.Stdout = f
	cmd.Stderr = os.Stderr
	err = cmd.Run()
	f.Close()
	if err != nil {
		return result{}, fmt.Errorf("vegeta attack: %w", err)
	}
	f, err = os.Open(path)
	if err != nil {
		return result{}, err
	}
	defer f.Close()
	dec := vegeta.NewDecoder(bufio.NewReader(f))
	interval := time.Second / time.Duration(rate)
	var lats []time.Duration
	type hit struct {
		seq uint64
		at  time.Time
	}
	var hits []hit
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); err != nil {
			break
		}
		lats = append(lats, r.Latency)
		hits = append(hits, hit{r.Seq, r.Timestamp})
	}
	if len(hits) == 0 {
		return result{}, fmt.Errorf("vegeta sent nothing")
	}
	began := hits[0].at
	for _, h := range hits {
		if b := h.at.Add(-time.Duration(h.seq+1) * interval); b.Before(began) {
			began = b
		}
	}
	lags := make([]time.Duration, len(hits))
	for i, h := range hits {
		lags[i] = h.at.Sub(began.Add(time.Duration(h.seq+1) * interval))
	}
	r := result{tool: "vegeta CLI", rate: rate, sent: len(hits), achieved: float64(len(hits)) / duration.Seconds(), cpu: cpuOf(cmd)}
	r.p50, r.p99 = quantiles(lats)
	r.lagP50, r.lagP99 = quantiles(lags)
	return r, nil
}

// runHerdbench runs the stampede against the server as a bare URL target,
// the trigger a burst of one, and reads its results: latency from each
// request's intended send time, the generator's lag, what it sent.
func runHerdbench(bin, dir, addr string, rate int, duration time.Duration) (result, error) {
	out := filepath.Join(dir, fmt.Sprintf("herdbench-%d.json", rate))
	cmd := exec.Command(bin, "stampede", "--target", "http://"+addr+"/", "--trigger", "burst", "--burst", "1",
		"--rate", strconv.Itoa(rate), "--warmup", "0s", "--before", "1s", "--after", (duration - time.Second).String(),
		"--results-dir", dir, "-o", "json="+out)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 99 {
			return result{}, fmt.Errorf("herdbench stampede: %w", err)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return result{}, err
	}
	var rep struct {
		Arms []struct {
			HTTP struct {
				P50MS float64 `json:"p50_ms"`
				P99MS float64 `json:"p99_ms"`
			} `json:"http"`
			Load struct {
				Sent         int     `json:"sent"`
				AchievedRate float64 `json:"achieved_rate"`
				LagP50MS     float64 `json:"lag_p50_ms"`
				LagP99MS     float64 `json:"lag_p99_ms"`
			} `json:"load"`
		} `json:"arms"`
	}
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Arms) != 1 {
		return result{}, fmt.Errorf("herdbench results %s: %v", out, err)
	}
	a := rep.Arms[0]
	return result{tool: "herdbench", rate: rate, sent: a.Load.Sent, achieved: a.Load.AchievedRate, cpu: cpuOf(cmd),
		p50: msDuration(a.HTTP.P50MS), p99: msDuration(a.HTTP.P99MS),
		lagP50: msDuration(a.Load.LagP50MS), lagP99: msDuration(a.Load.LagP99MS), latencyFromPlanned: true}, nil
}

// printResults prints, for each rate and tool, the median of its rounds
// (each column on its own), then herdbench's CPU per request over
// vegeta's, round by round.
func printResults(o options, runs map[string][]result) {
	fmt.Printf("\nmedians of %d rounds:\n", o.rounds)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tasked/s\tachieved/s\tCPU s per 10k\tp50\tp99\tlag p50\tlag p99\t")
	for _, rate := range o.rates {
		for _, tool := range []string{"vegeta CLI", "herdbench"} {
			rs := runs[tool+"@"+strconv.Itoa(rate)]
			from := " (from its send)"
			if rs[0].latencyFromPlanned {
				from = " (from intended)"
			}
			med := func(f func(result) float64) float64 {
				v := make([]float64, len(rs))
				for i, r := range rs {
					v[i] = f(r)
				}
				slices.Sort(v)
				return v[len(v)/2]
			}
			d := func(f func(result) time.Duration) time.Duration {
				return time.Duration(med(func(r result) float64 { return float64(f(r)) }))
			}
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%s\t%s%s\t%s\t%s\t\n", tool, rate,
				med(func(r result) float64 { return r.achieved }), med(perTenK),
				round(d(func(r result) time.Duration { return r.p50 })), round(d(func(r result) time.Duration { return r.p99 })), from,
				round(d(func(r result) time.Duration { return r.lagP50 })), round(d(func(r result) time.Duration { return r.lagP99 })))
		}
	}
	_ = tw.Flush()
	fmt.Println("\nherdbench's CPU per request over vegeta's, round by round:")
	for _, rate := range o.rates {
		v, h := runs["vegeta CLI@"+strconv.Itoa(rate)], runs["herdbench@"+strconv.Itoa(rate)]
		var ratios []string
		var vals []float64
		for i := range v {
			x := perTenK(h[i]) / perTenK(v[i])
			ratios, vals = append(ratios, fmt.Sprintf("%.2fx", x)), append(vals, x)
		}
		slices.Sort(vals)
		fmt.Printf("  %6d/s: %s (median %.2fx)\n", rate, strings.Join(ratios, ", "), vals[len(vals)/2])
	}
}

// perTenK is a run's CPU seconds per 10,000 requests sent.
func perTenK(r result) float64 {
	if r.sent == 0 {
		return 0
	}
	return r.cpu.Seconds() / float64(r.sent) * 10_000
}

func quantiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
