package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/replica"
)

// shortStampede are flags for a stampede of a few seconds an arm.
var shortStampede = []string{"--rate", "100", "--keys", "200", "--hot-keys", "10", "--warmup", "200ms",
	"--before", "1s", "--after", "1s", "--query-cost", "50ms", "--seed", "42"}

func readResults(t *testing.T, path string) experiment.Report {
	t.Helper()
	return clitest.ReadResults(t, path)
}

func TestStampedeStartsAndStopsItsTestbed(t *testing.T) {
	t.Parallel()
	localtest.Measures(t)
	localtest.Require(t)
	dir, out := stateDir(t), t.TempDir()
	jsonFile := filepath.Join(out, "r.json")
	args := append([]string{"stampede", "--state-dir", dir, "--results-dir", out, "--json", jsonFile,
		"--arms", "none,lock", "--replicas", "2"}, shortStampede...)
	code, stdout, stderr := herdbench(t, args...)
	if code != exitOK {
		t.Fatalf("stampede = exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"seed 42", "100 req/s", "expire", "arm ", "none ", "lock ", "db queries", "p99", "drop rate", "recovery", "results "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stampede output lacks %q:\n%s", want, stdout)
		}
	}
	rep := readResults(t, jsonFile)
	if rep.Schema != result.Schema || rep.Seed != 42 || len(rep.Arms) != 2 || rep.Partial || rep.Environment.Replicas != 2 {
		t.Errorf("results: schema %q seed %d arms %d partial %v replicas %d; want %s, 42, 2, complete, 2",
			rep.Schema, rep.Seed, len(rep.Arms), rep.Partial, rep.Environment.Replicas, result.Schema)
	}
	// the same results are kept under the results directory
	kept, _ := filepath.Glob(filepath.Join(out, "*", "results.json"))
	if len(kept) != 1 {
		t.Errorf("results dir holds %v; want one run's results.json", kept)
	}
	if pids := local.Processes(dir); len(pids) > 0 {
		t.Errorf("processes left after the stampede: %v", pids)
	}
	if _, err := local.ReadStatus(dir); err == nil {
		t.Error("a testbed still runs after a stampede that started its own")
	}
}

// An arm sends only what it sets: a stampede on a testbed started with
// --query-cost 20ms runs every arm at 20ms, by the results and by
// Postgres' own mean time of the item query (the stampede's default, 200ms,
// would show as a mean of 200ms or more).
func TestStampedeUsesARunningTestbedAndLeavesIt(t *testing.T) {
	t.Parallel()
	localtest.Require(t)
	dir, out := stateDir(t), t.TempDir()
	if code, stdout, stderr := herdbench(t, "testbed", "up", "--state-dir", dir, "--replicas", "1", "--items", "500", "--query-cost", "20ms"); code != exitOK {
		t.Fatalf("testbed up = exit %d\n%s%s", code, stdout, stderr)
	}
	localtest.Measures(t)
	before, err := local.ReadStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	jsonFile := filepath.Join(out, "r.json")
	args := append([]string{"stampede", "--state-dir", dir, "--results-dir", out, "--json", jsonFile, "--arms", "none,singleflight"},
		slices.DeleteFunc(slices.Clone(shortStampede), func(s string) bool { return s == "--query-cost" || s == "50ms" })...)
	code, stdout, stderr := herdbench(t, args...)
	if code != exitOK || !strings.Contains(stderr, "using the testbed running in") {
		t.Fatalf("stampede on a running testbed = exit %d\n%s%s", code, stdout, stderr)
	}
	after, err := local.ReadStatus(dir)
	if err != nil || after.PIDs["supervisor"] != before.PIDs["supervisor"] || after.PIDs["api-1"] != before.PIDs["api-1"] {
		t.Errorf("after the stampede: status %v, %v; want the same testbed still running (%v)", after.PIDs, err, before.PIDs)
	}
	for _, arm := range readResults(t, jsonFile).Arms {
		a := struct {
			Name   string
			Config replica.Config
		}{arm.Name, ranOn(t, arm)}
		if a.Config.QueryCost != herd.Duration(20*time.Millisecond) || a.Config.Strategy != a.Name {
			t.Errorf("arm %s ran %s at query_cost %s; want its strategy at the testbed's 20ms", a.Name, a.Config.Strategy, a.Config.QueryCost)
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, after.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var calls int64
	var mean float64
	if err := conn.QueryRow(ctx, `SELECT coalesce(sum(calls), 0)::bigint, coalesce(sum(total_exec_time) / nullif(sum(calls), 0), 0)
		FROM pg_stat_statements WHERE query = $1`, api.ItemQuery).Scan(&calls, &mean); err != nil {
		t.Fatal(err)
	}
	// pg_sleep(0.02) never takes less than 20ms; 200ms would be ten times
	// it, which no busy machine explains
	if calls == 0 || mean < 20 || mean >= 200 {
		t.Errorf("pg_stat_statements: the item query ran %d times, %.1fms on average; want some, at 20ms or more and under 200ms", calls, mean)
	}
	// the replicas are left with the config they had
	resp, err := httpGetJSON(after.API[0] + "/admin/config")
	if err != nil || resp["strategy"] != "none" || resp["query_cost"] != "20ms" {
		t.Errorf("replica config after the stampede = %v, %v; want the testbed's own (none, 20ms)", resp, err)
	}
}

func TestStampedeCtrlCWritesPartialResultsAndStopsEverything(t *testing.T) {
	t.Parallel()
	localtest.Measures(t)
	localtest.Require(t)
	dir, out := stateDir(t), t.TempDir()
	args := append([]string{"stampede", "--state-dir", dir, "--results-dir", out, "--arms", "none,lock,xfetch"}, shortStampede...)
	cmd := exec.Command(localtest.Binary(), args...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// interrupt once the second arm has started
	var seen strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "arm 2/3") {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	go io.Copy(&seen, stderr)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitError {
			t.Errorf("stampede after Ctrl-C: %v; want exit %d\n%s%s", err, exitError, stdout.String(), seen.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("stampede still running 60s after Ctrl-C\n%s", seen.String())
	}
	kept, _ := filepath.Glob(filepath.Join(out, "*", "results.json"))
	if len(kept) != 1 {
		t.Fatalf("results after Ctrl-C: %v; want one results.json\n%s%s", kept, stdout.String(), seen.String())
	}
	rep := readResults(t, kept[0])
	if !rep.Partial || len(rep.Arms) != 1 || rep.Arms[0].Name != "none" {
		t.Errorf("results after Ctrl-C: partial %v, %d arms; want partial with the finished arm none", rep.Partial, len(rep.Arms))
	}
	if pids := local.Processes(dir); len(pids) > 0 {
		t.Errorf("processes left after Ctrl-C: %v", pids)
	}
}

func httpGetJSON(url string) (map[string]any, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	return m, json.NewDecoder(resp.Body).Decode(&m)
}

// --arms write=STRATEGY compares write strategies from the command line,
// joined to a read strategy with + if need be: each arm runs its own (the
// replicas' answer says so), and the queue applies the burst's likes in
// batches, in fewer statements than direct's one UPDATE per like
// (pg_stat_statements): a batch holds at least one like, and 300 likes
// arriving at once never leave in 300 batches.
func TestArmsCompareWriteStrategies(t *testing.T) {
	t.Parallel()
	localtest.Measures(t)
	localtest.Require(t)
	dir, out := stateDir(t), t.TempDir()
	jsonFile := filepath.Join(out, "r.json")
	args := append([]string{"stampede", "--state-dir", dir, "--results-dir", out, "--json", jsonFile, "--replicas", "2",
		// the settle ends as the last acknowledged like arrives; its bound
		// is for a busy machine, where the queue once applied 102 of 300
		// in 5 s (the replicas starved beside a compile and three packages)
		"--trigger", "writes", "--write-burst", "300", "--write-settle", "20s", "--arms", "write=direct,singleflight+write=queue"}, shortStampede...)
	code, stdout, stderr := herdbench(t, args...)
	if code != exitOK {
		t.Fatalf("stampede --arms write=direct,singleflight+write=queue = exit %d\n%s%s", code, stdout, stderr)
	}
	rep := readResults(t, jsonFile)
	if len(rep.Arms) != 2 {
		t.Fatalf("results: %d arms; want 2", len(rep.Arms))
	}
	direct, queue := rep.Arms[0], rep.Arms[1]
	if dc, qc := ranOn(t, direct), ranOn(t, queue); dc.WriteStrategy != "direct" || qc.WriteStrategy != "queue" || qc.Strategy != "singleflight" {
		t.Errorf("arms ran writes %s and %s (reads %s); want direct, then queue with singleflight",
			dc.WriteStrategy, qc.WriteStrategy, qc.Strategy)
	}
	if direct.Writes == nil || queue.Writes == nil || direct.Writes.Statements < 300 || queue.Writes.Statements >= direct.Writes.Statements {
		t.Errorf("write statements: direct %+v, queue %+v; want direct's 300 or more (one a like), the queue's fewer", direct.Writes, queue.Writes)
	}
	if !strings.Contains(stdout, "write=direct") || !strings.Contains(stdout, "singleflight+write=queue") {
		t.Errorf("the table lacks the arms' names:\n%s", stdout)
	}
}

// ranOn is the replicas' config arm a ran on, as its results carry it.
func ranOn(t *testing.T, a result.ArmResult) replica.Config {
	t.Helper()
	var c replica.Config
	if err := json.Unmarshal(a.Config, &c); err != nil {
		t.Fatalf("arm %s: config %s: %v", a.Name, a.Config, err)
	}
	return c
}
