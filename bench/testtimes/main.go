// Command testtimes says where a test suite's time goes, from the output of
// `go test -json`: each package's wall time, and its slowest top-level
// tests with how long each waited for the machine lock and a seat (the
// lines internal/machinelock logs) and how long it ran once it held them.
//
//	go test -json ./... > tests.json
//	go run ./bench/testtimes -top 30 tests.json
//
// A test's elapsed time in go test's output includes its waits for the
// locks and for a seat; "ran" is the elapsed time less those waits, and a
// sharer's "held" is the time it held its seat (machinelock.Seats: 3 by
// default), the part that counts against the machine. The time tests held
// the machine alone is serial: no -p makes the suite shorter than it; the
// time they held it shared runs beside other packages' tests.
// docs/performance.md has the suite's figures.
//
// With budgets it is the check that keeps them: it names each package
// over -package and the suite over -suite, and exits 1.
//
//	go run ./bench/testtimes -suite 10m -package 4m tests.json
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// test is one top-level test's figures.
type test struct {
	pkg, name string
	elapsed   float64 // seconds, as go test reports it
	waited    float64 // seconds waiting for the machine and engine locks
	held      float64 // seconds holding the machine, alone or shared
	shareHeld float64 // seconds holding the shared lock, its seat's wait included
	seated    bool    // it logged a seat's hold (older logs have none)
	locked    bool    // it held the machine
	alone     bool    // alone (machinelock.Take), not shared
	result    string  // pass, fail, skip
}

// pkg is one package's figures.
type pkg struct {
	name        string
	first, last time.Time
	result      string
}

var lockLine = regexp.MustCompile(`(machinelock|sharelock|enginelock|seat): (waited|held) ([0-9.]+)s`)

func main() {
	top := flag.Int("top", 25, "how many of the slowest tests to list")
	suite := flag.Duration("suite", 0, "the suite's budget, from its first package event to its last (0: none)")
	perPkg := flag.Duration("package", 0, "each package's budget, its wall time (0: none)")
	flag.Parse()
	var in io.Reader = os.Stdin
	if flag.NArg() == 1 {
		f, err := os.Open(flag.Arg(0))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		in = f
	}
	pkgs, tests, err := read(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	write(os.Stdout, pkgs, tests, *top)
	if over := overBudget(pkgs, *suite, *perPkg); len(over) > 0 {
		fmt.Fprintln(os.Stderr, "\nover budget:\n"+strings.Join(over, "\n"))
		os.Exit(1)
	}
}

// span is the suite's wall time: its first package event to its last.
func span(pkgs map[string]*pkg) time.Duration {
	var first, last time.Time
	for _, p := range pkgs {
		if first.IsZero() || p.first.Before(first) {
			first = p.first
		}
		if p.last.After(last) {
			last = p.last
		}
	}
	return last.Sub(first)
}

// overBudget names the suite when it took longer than suite, and each
// package that took longer than perPkg; a zero budget is not checked.
func overBudget(pkgs map[string]*pkg, suite, perPkg time.Duration) []string {
	var over []string
	if d := span(pkgs); suite > 0 && d > suite {
		over = append(over, fmt.Sprintf("the suite: %.0f s, its budget %.0f s", d.Seconds(), suite.Seconds()))
	}
	for _, p := range pkgs {
		if d := p.last.Sub(p.first); perPkg > 0 && d > perPkg {
			over = append(over, fmt.Sprintf("%s: %.0f s, a package's budget %.0f s", short(p.name), d.Seconds(), perPkg.Seconds()))
		}
	}
	slices.Sort(over[min(1, len(over)):])
	return over
}

// read folds the events into packages and top-level tests.
func read(in io.Reader) (map[string]*pkg, map[string]*test, error) {
	pkgs, tests := map[string]*pkg{}, map[string]*test{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Package == "" {
			continue // go build's own lines
		}
		p := pkgs[e.Package]
		if p == nil {
			p = &pkg{name: e.Package, first: e.Time}
			pkgs[e.Package] = p
		}
		p.last = e.Time
		top, _, _ := strings.Cut(e.Test, "/")
		if top == "" {
			if e.Action == "pass" || e.Action == "fail" || e.Action == "skip" {
				p.result = e.Action
			}
			continue
		}
		key := e.Package + " " + top
		t := tests[key]
		if t == nil {
			t = &test{pkg: e.Package, name: top}
			tests[key] = t
		}
		if m := lockLine.FindStringSubmatch(e.Output); m != nil {
			d, _ := strconv.ParseFloat(m[3], 64)
			switch {
			case m[2] == "waited":
				t.waited += d
			case m[1] == "machinelock":
				t.held += d
				t.locked, t.alone = true, true
			case m[1] == "sharelock":
				t.shareHeld += d
				t.locked = true
			case m[1] == "seat":
				t.held += d
				t.seated = true
			}
		}
		if e.Test == top && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
			t.elapsed, t.result = e.Elapsed, e.Action
		}
	}
	for _, t := range tests {
		if !t.alone && !t.seated {
			t.held = t.shareHeld // a log from before the seats
		}
	}
	return pkgs, tests, sc.Err()
}

func write(w io.Writer, pkgs map[string]*pkg, tests map[string]*test, top int) {
	ps := slices.Collect(maps.Values(pkgs))
	var sum float64
	for _, p := range ps {
		sum += p.last.Sub(p.first).Seconds()
	}
	slices.SortFunc(ps, func(a, b *pkg) int { return cmp.Compare(b.last.Sub(b.first), a.last.Sub(a.first)) })
	ran := map[string]float64{}
	var alone, shared float64
	for _, t := range tests {
		ran[t.pkg] += t.elapsed - t.waited
		if t.alone {
			alone += t.held
		} else {
			shared += t.held
		}
	}
	fmt.Fprintf(w, "suite: %.0f s from the first package event to the last; tests held the machine alone %.0f s, a seat beside others %.0f s\n\n",
		span(pkgs).Seconds(), alone, shared)
	fmt.Fprintln(w, "| package | wall | share of all packages' wall | its tests ran | result |\n|---|---|---|---|---|")
	for _, p := range ps {
		if d := p.last.Sub(p.first).Seconds(); d >= 1 {
			fmt.Fprintf(w, "| `%s` | %.0f s | %.0f%% | %.0f s | %s |\n", short(p.name), d, 100*d/sum, ran[p.name], p.result)
		}
	}
	ts := slices.Collect(maps.Values(tests))
	slices.SortFunc(ts, func(a, b *test) int {
		return cmp.Compare(b.elapsed-b.waited, a.elapsed-a.waited)
	})
	fmt.Fprintln(w, "\n| test | ran | of which it held the machine | waited for a lock or a seat | result |\n|---|---|---|---|---|")
	for _, t := range ts[:min(top, len(ts))] {
		held, wait := "-", "-"
		if t.locked {
			held, wait = fmt.Sprintf("%.1f s shared", t.held), fmt.Sprintf("%.1f s", t.waited)
			if t.alone {
				held = fmt.Sprintf("%.1f s alone", t.held)
			}
		}
		fmt.Fprintf(w, "| `%s` %s | %.1f s | %s | %s | %s |\n", short(t.pkg), t.name, t.elapsed-t.waited, held, wait, t.result)
	}
}

func short(p string) string { return strings.TrimPrefix(p, "github.com/herdbench/herdbench/") }
