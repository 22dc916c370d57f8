package workers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/load"
)

// The controller's cost, measured: BenchmarkControllerMergesBins runs the
// real controller's bin follower (followBins, merging into one recorder)
// against N worker endpoints, real HTTP servers on loopback in a process of
// their own (this test binary, started again with replayEnv set), each
// replaying bins a real Binner recorded from a share at RATE req/s, one
// answer every StreamEvery as a worker seals them. It reports the
// controller process's CPU (user + system, getrusage) and the bytes it
// read, per worker-second of replayed load. docs/distributed.md has the
// figures:
//
//	go test -run '^$' -bench ControllerMergesBins -benchtime 1x ./workers/

const replayEnv = "HERDBENCH_BIN_REPLAY" // N,RATE,TICKS,T(Unix ns)

func init() {
	if spec := os.Getenv(replayEnv); spec != "" {
		replayMain(spec)
		os.Exit(0)
	}
}

// recordBins is what a worker at rate req/s seals every StreamEvery over
// ticks of them, for an arm whose trigger fires at t, as the answers it
// gives: requests answered in 1 to 40 ms, one in twenty a 503.
func recordBins(rate, ticks int, t time.Time) []Bins {
	rng := rand.New(rand.NewPCG(1, 2))
	before, after := time.Duration(ticks)*StreamEvery/2, time.Duration(ticks)*StreamEvery/2
	start := t.Add(-before)
	b := experiment.NewBinner("bench", 0, 1, t, before, after, false, false)
	type pending struct {
		r   load.Record
		end time.Time
	}
	var flying []pending
	var out []Bins
	var k uint64
	for tick := range ticks {
		edge := start.Add(time.Duration(tick+1) * StreamEvery)
		for ; ; k++ {
			due := start.Add(time.Duration(k+1) * time.Second / time.Duration(rate))
			if !due.Before(edge) {
				break
			}
			d := time.Duration(1+rng.IntN(40)) * time.Millisecond
			o := load.OK
			if rng.IntN(20) == 0 {
				o = load.Error5xx
			}
			left := due.Add(time.Duration(rng.IntN(200)) * time.Microsecond)
			flying = append(flying, pending{load.Record{Seq: k, Intended: due, Left: left, Latency: d, Outcome: o, Attempts: 1, SentAt: []time.Time{left}}, due.Add(d)})
		}
		kept := flying[:0]
		for _, p := range flying {
			if p.end.Before(edge) || tick == ticks-1 {
				b.Add(p.r)
			} else {
				kept = append(kept, p)
			}
		}
		flying = kept
		out = append(out, Bins{Bins: b.Seal(), FiledUpTo: b.FiledUpTo(), Done: tick == ticks-1})
	}
	return out
}

// replayMain serves n endpoints replaying recorded bins, prints their
// addresses, and serves until its stdin closes.
func replayMain(spec string) {
	var n, rate, ticks int
	var tns int64
	if _, err := fmt.Sscanf(spec, "%d,%d,%d,%d", &n, &rate, &ticks, &tns); err != nil {
		fmt.Fprintln(os.Stderr, "replay:", err)
		os.Exit(2)
	}
	answers := recordBins(rate, ticks, time.Unix(0, tns))
	var seq int64
	encoded := make([][]byte, len(answers))
	for i, a := range answers {
		a.Since = seq
		for j := range a.Bins {
			a.Bins[j].Seq = seq
			seq++
		}
		encoded[i], _ = json.Marshal(a)
	}
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "replay:", err)
			os.Exit(1)
		}
		var calls atomic.Int64
		mine := []byte(`"worker":` + strconv.Itoa(i) + `,`)
		go func() {
			_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				c := min(int(calls.Add(1))-1, len(encoded)-1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(bytes.ReplaceAll(encoded[c], []byte(`"worker":0,`), mine))
			}))
		}()
		fmt.Println("http://" + ln.Addr().String())
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// countingBody counts what the controller reads.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countingBody) Read(p []byte) (int, error) {
	k, err := c.ReadCloser.Read(p)
	c.n.Add(int64(k))
	return k, err
}

type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil {
		resp.Body = countingBody{resp.Body, c.n}
	}
	return resp, err
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkControllerMergesBins(b *testing.B) {
	const ticks = 30 // 3 s of load a worker
	for _, rate := range []int{1_000, 10_000} {
		for _, n := range []int{1, 10, 100, 1000} {
			b.Run(fmt.Sprintf("rate=%d/workers=%d", rate, n), func(b *testing.B) {
				t := time.Now().Truncate(time.Second)
				cmd := exec.Command(os.Args[0])
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d,%d,%d,%d", replayEnv, n, rate, ticks, t.UnixNano()))
				in, _ := cmd.StdinPipe()
				out, _ := cmd.StdoutPipe()
				cmd.Stderr = os.Stderr
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				defer func() { in.Close(); _ = cmd.Wait() }()
				sc := bufio.NewScanner(out)
				var urls []string
				for len(urls) < n && sc.Scan() {
					urls = append(urls, strings.TrimSpace(sc.Text()))
				}
				if len(urls) != n {
					b.Fatalf("%d endpoints of %d answered", len(urls), n)
				}
				var read atomic.Int64
				tr := &http.Transport{MaxIdleConnsPerHost: 2}
				c := &Controller{URLs: urls, Client: &http.Client{Transport: countingTransport{tr, &read}}}
				var cpu, wall time.Duration
				var merged int64
				for range b.N {
					p := &prepared{c: c, run: "bench", workers: make([]worker, n), heard: make([]atomic.Int64, n)}
					for i := range p.workers {
						p.workers[i] = worker{index: i, url: urls[i]}
					}
					rec := experiment.NewRecorder(t, ticks*StreamEvery/2, ticks*StreamEvery/2, false)
					filed := make([]atomic.Int64, n)
					pastCut := make([]atomic.Int64, n)
					read.Store(0)
					c0, w0 := cpuTime(), time.Now()
					var wg sync.WaitGroup
					var failed atomic.Value
					for i := range n {
						wg.Go(func() {
							f := &binFollower{p: p, i: i, rec: rec, t: t, seen: map[[2]int64]bool{}, filed: filed, pastCut: &pastCut[i]}
							if _, err := p.followBins(context.Background(), f); err != nil {
								failed.Store(err)
							}
						})
					}
					wg.Wait()
					cpu, wall = cpuTime()-c0, time.Since(w0)
					if err, _ := failed.Load().(error); err != nil {
						b.Fatal(err)
					}
					merged = rec.State().Records
					tr.CloseIdleConnections()
				}
				workerSeconds := float64(n) * (ticks * StreamEvery).Seconds()
				b.ReportMetric(float64(cpu.Microseconds())/workerSeconds, "cpu-µs/worker-s")
				b.ReportMetric(float64(read.Load())/workerSeconds, "B/worker-s")
				b.ReportMetric(wall.Seconds(), "wall-s")
				b.ReportMetric(float64(merged)/float64(n), "req/worker")
			})
		}
	}
}
