package load

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// trivialServer starts bench/vsvegeta's trivial server (200 "ok") in a
// process of its own, so the benchmark's CPU figures are the generator's
// alone, and returns its base URL.
func trivialServer(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "vsvegeta")
	if out, err := exec.Command("go", "build", "-o", bin, "../bench/vsvegeta").CombinedOutput(); err != nil {
		b.Fatalf("build the trivial server: %v\n%s", err, out)
	}
	srv := exec.Command(bin, "-serve")
	out, err := srv.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("trivial server: %v", err)
	}
	return "http://" + strings.TrimSpace(addr)
}

// cpuTime is the user and system time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAttack is the generator's cost per request at a rate it easily
// keeps, against a trivial server in another process: cpu-ns/op is this
// process's CPU time per request (pacer, targeter, transport, records),
// allocs/op its allocations; ns/op is only the schedule's interval. Run
// with a fixed count, for example -benchtime 20000x.
func BenchmarkAttack(b *testing.B) {
	for _, rate := range []int{1000, 5000} {
		b.Run(strconv.Itoa(rate), func(b *testing.B) {
			url := trivialServer(b)
			c := Config{Targets: []string{url}, Rate: rate, Keys: 1000, Zipf: 1.1, Seed: 1, Timeout: 5 * time.Second,
				Duration: time.Duration(b.N) * time.Second / time.Duration(rate)}
			var n, unsent int
			lags := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime(b)
			_, err := Attack(context.Background(), c, func(r Record) {
				n++
				if r.Outcome == Unsent { // the generator fell behind: a busy machine
					unsent++
					return
				}
				if r.Outcome != OK {
					b.Errorf("request %d: %s", r.Seq, r.Outcome)
				}
				lags = append(lags, r.Left.Sub(r.Intended))
			})
			cpu = cpuTime(b) - cpu
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(unsent), "unsent")
			if n -= unsent; n > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
				slices.Sort(lags)
				b.ReportMetric(float64(lags[len(lags)/2].Microseconds()), "lag-p50-us")
				b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds()), "lag-p99-us")
			}
		})
	}
}

// BenchmarkVegetaAttack is BenchmarkAttack's reference: vegeta's library
// as its CLI drives it (its attacker, its constant pacer, its default
// transport), on the same server, its results read and dropped. Its
// cpu-ns/op beside BenchmarkAttack's is the generators' cost per request
// in one process each, without the CLI's encoding of its results.
func BenchmarkVegetaAttack(b *testing.B) {
	for _, rate := range []int{1000, 5000} {
		b.Run(strconv.Itoa(rate), func(b *testing.B) {
			url := trivialServer(b)
			atk := vegeta.NewAttacker()
			tr := vegeta.NewStaticTargeter(vegeta.Target{Method: "GET", URL: url + "/"})
			du := time.Duration(b.N) * time.Second / time.Duration(rate)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime(b)
			var n int
			for res := range atk.Attack(tr, vegeta.ConstantPacer{Freq: rate, Per: time.Second}, du, "") {
				if res.Code != 200 {
					b.Errorf("request %d: %d %s", res.Seq, res.Code, res.Error)
				}
				n++
			}
			cpu = cpuTime(b) - cpu
			b.StopTimer()
			if n > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
			}
		})
	}
}
