package grafana

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// localWorkers starts n `herdbench worker` processes on loopback and
// returns their addresses as --workers takes them.
func localWorkers(t *testing.T, n int) string {
	t.Helper()
	var urls []string
	for i := range n {
		cmd := exec.Command(localtest.Binary(), "worker", "--listen", "127.0.0.1:0")
		pr, pw := io.Pipe()
		cmd.Stderr = pw
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); pw.Close() })
		listening := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				if _, addr, ok := strings.Cut(sc.Text(), " listening on "); ok {
					listening <- addr
					break
				}
			}
			_, _ = io.Copy(io.Discard, pr) // its log, unread
		}()
		select {
		case addr := <-listening:
			urls = append(urls, "http://"+addr)
		case <-time.After(20 * time.Second):
			t.Fatalf("worker %d did not say where it listens within 20 s", i)
		}
	}
	return strings.Join(urls, ",")
}

// workerSharesAreTheResults checks each worker's requests as Prometheus
// last scraped them against the results of the same run: from T - before
// on, its own load.intended less its requests past the cut; over every
// phase, the workers' add up to the merged herdbench_requests_total.
func workerSharesAreTheResults(t *testing.T, prom string, arms []result.ArmResult, start, end time.Time) {
	t.Helper()
	last := func(expr string, labels ...string) map[string]float64 {
		out := map[string]float64{}
		for k, v := range rangeValues(t, prom, expr, start, end, labels...) {
			out[k] = slices.Max(v)
		}
		return out
	}
	shares := last(`sum by (arm, worker) (herdbench_worker_requests_total{phase=~"before|after"})`, "arm", "worker")
	workers := last(`sum by (arm) (herdbench_worker_requests_total)`, "arm")
	merged := last(`sum by (arm) (herdbench_requests_total)`, "arm")
	for _, a := range arms {
		if a.Workers == nil || len(a.Workers.Each) == 0 {
			t.Errorf("arm %s: no workers in the results; want the run's", a.Name)
			continue
		}
		for _, w := range a.Workers.Each {
			k := a.Name + " " + strconv.Itoa(w.Index)
			if got, want := shares[k], float64(w.Load.Intended-w.PastCut); got != want {
				t.Errorf("arm %s, worker %d: %g requests scraped from T - before on; want its load.intended %d less past_cut %d", a.Name, w.Index, got, w.Load.Intended, w.PastCut)
			}
		}
		if got, want := workers[a.Name], merged[a.Name]; got != want || math.IsNaN(got) || got == 0 {
			t.Errorf("arm %s: the workers' requests add up to %g; want the merged herdbench_requests_total %g", a.Name, got, want)
		}
	}
	if t.Failed() {
		t.Logf("shares scraped: %v", fmt.Sprint(shares))
	}
}
