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
	burst := flag.Int("burst", 1000, "clients in the burst comparison (0: skip it)")
	rounds := flag.Int("rounds", 3, "bursts of each kind, for their spread's median")
	flag.Parse()
	if *serve {
		trivial()
		return
	}
	if err := run(*rates, *duration, *burst, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "vsvegeta:", err)
		os.Exit(1)
	}
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

func run(rateList string, duration time.Duration, burst, rounds int) error {
	dir, err := os.MkdirTemp("", "vsvegeta-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	herdbench, vegetaCLI, err := build(dir)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	srv := exec.Command(self, "-serve")
	out, err := srv.StdoutPipe()
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("trivial server: %w", err)
	}
	addr = strings.TrimSpace(addr)
	fmt.Printf("server    %s (one Go process answering 200 \"ok\"), %d CPUs, %s per rate per tool, %s\n",
		addr, runtime.NumCPU(), duration, time.Now().UTC().Format("2006-01-02"))

	var results []result
	for _, s := range strings.Split(rateList, ",") {
		rate, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || rate < 1 {
			return fmt.Errorf("-rates: %q is not a rate (accepted: whole numbers above 0, such as 1000,5000)", s)
		}
		v, err := runVegeta(vegetaCLI, dir, addr, rate, duration)
		if err != nil {
			return err
		}
		h, err := runHerdbench(herdbench, dir, addr, rate, duration)
		if err != nil {
			return err
		}
		results = append(results, v, h)
	}
	printResults(results)
	if burst > 0 {
		return compareBurst(herdbench, dir, addr, burst, rounds)
	}
	return nil
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

func printResults(rs []result) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tasked/s\tachieved/s\tCPU s per 10k\tp50\tp99\tlag p50\tlag p99\t")
	for _, r := range rs {
		from := " (from its send)"
		if r.latencyFromPlanned {
			from = " (from intended)"
		}
		perTenK := 0.0
		if r.sent > 0 {
			perTenK = r.cpu.Seconds() / float64(r.sent) * 10_000
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%s\t%s%s\t%s\t%s\t\n", r.tool, r.rate, r.achieved, perTenK,
			round(r.p50), round(r.p99), from, round(r.lagP50), round(r.lagP99))
	}
	_ = tw.Flush()
}

// compareBurst releases n clients at once, rounds times each: herdbench's
// burst trigger, then the floor, and prints the spreads' medians.
func compareBurst(bin, dir, addr string, n, rounds int) error {
	var hb50, hb99, fl50, fl99 []time.Duration
	for i := range rounds {
		out := filepath.Join(dir, fmt.Sprintf("burst-%d.json", i))
		cmd := exec.Command(bin, "stampede", "--target", "http://"+addr+"/", "--trigger", "burst", "--burst", strconv.Itoa(n),
			"--rate", "50", "--warmup", "0s", "--before", "1s", "--after", "1s", "--results-dir", dir, "-o", "json="+out)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("herdbench burst: %w", err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			return err
		}
		var rep struct {
			Arms []struct {
				Burst *struct {
					OK          int   `json:"ok"`
					SpreadP50US int64 `json:"spread_p50_us"`
					SpreadP99US int64 `json:"spread_p99_us"`
				} `json:"burst"`
			} `json:"arms"`
		}
		if err := json.Unmarshal(b, &rep); err != nil || len(rep.Arms) != 1 || rep.Arms[0].Burst == nil {
			return fmt.Errorf("herdbench burst results %s: %v", out, err)
		}
		bu := rep.Arms[0].Burst
		hb50, hb99 = append(hb50, time.Duration(bu.SpreadP50US)*time.Microsecond), append(hb99, time.Duration(bu.SpreadP99US)*time.Microsecond)
		p50, p99, err := floor(addr, n)
		if err != nil {
			return err
		}
		fl50, fl99 = append(fl50, p50), append(fl99, p99)
	}
	m := func(ds []time.Duration) time.Duration { slices.Sort(ds); return ds[len(ds)/2] }
	fmt.Printf("\nburst of %d clients, spread of the requests' departures after the release (median of %d rounds):\n", n, rounds)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tp50\tp99\t")
	fmt.Fprintf(tw, "herdbench burst\t%s\t%s\t\n", round(m(hb50)), round(m(hb99)))
	fmt.Fprintf(tw, "floor: one loop of writes\t%s\t%s\t\n", round(m(fl50)), round(m(fl99)))
	fmt.Fprintf(tw, "herdbench / floor\t%.1fx\t%.1fx\t\n", float64(m(hb50))/float64(max(m(fl50), 1)), float64(m(hb99))/float64(max(m(fl99), 1)))
	return tw.Flush()
}

// floor opens n connections, serializes n requests, and writes them in one
// plain loop at the release: how tight a burst from this machine can be.
// Each write's end, after the release, is its departure.
func floor(addr string, n int) (p50, p99 time.Duration, err error) {
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return 0, 0, fmt.Errorf("floor: open connection: %w", err)
		}
		conns = append(conns, c)
	}
	req := []byte("GET / HTTP/1.1\r\nHost: " + addr + "\r\nUser-Agent: vsvegeta\r\n\r\n")
	left := make([]time.Duration, n)
	released := time.Now()
	for i, c := range conns {
		if _, err := c.Write(req); err != nil {
			return 0, 0, fmt.Errorf("floor: write: %w", err)
		}
		left[i] = time.Since(released)
	}
	for _, c := range conns { // read the answers, so the server sees a client
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, 0, fmt.Errorf("floor: read: %w", err)
		}
		resp.Body.Close()
	}
	p50, p99 = quantiles(left)
	return p50, p99, nil
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
