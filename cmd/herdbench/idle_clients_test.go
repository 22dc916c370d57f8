package main

import (
	"os"
	"strings"
	"testing"
)

// idleInputs are #41's options that cannot take effect, gates the run
// cannot decide and faults blamed on the value the user set, as the
// command line tells them: each exits 2 before anything starts.
var idleInputs = []badInput{
	{args: []string{"stampede", "--dry-run", "--hedge", "2s", "--timeout", "1s"},
		want: "--hedge: 2s is not below the timeout, 1s: each attempt ends at its timeout before the hedge would be sent, so it would never fire (accepted: a delay below 1s, or a timeout above 2s)"},
	{args: []string{"stampede", "--dry-run", "--arms", "none,hedge=2s", "--timeout", "500ms"}, want: "--arms: hedge=2s: hedge=2s is not below the timeout, 500ms"},
	{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "load:\n  rate: 500\n  hedge: 2s\n  timeout: 1s\n"},
		want: "s.yaml:3: load.hedge: 2s is not below the timeout, 1s"},
	{args: []string{"stampede", "--dry-run", "--trigger", "writes", "--write-restart", "api", "--write-restart-after", "9s", "--after", "2s"},
		want: "--write-restart-after: 9s is not shorter than after, 2s"},
	{args: []string{"stampede", "--dry-run", "--gate", "retries.hedges > 0"}, want: "retries.hedges counts the clients' hedged attempts, and no arm hedges"},
	{args: []string{"stampede", "--dry-run", "--gate", "http.errors.throttled > 0"}, want: "no arm throttles"},
	{args: []string{"stampede", "--dry-run", "--gate", "http.errors.client_breaker > 0"}, want: "the clients' own breaker refused, and no arm has one"},
	{args: []string{"stampede", "--dry-run", "--gate", "retries.amplification < 0.5"}, want: "retries.amplification < 0.5 fails whatever the run does"},
	{args: []string{"stampede", "--dry-run", "--abort-on", "retries.amplification > 0.5"}, want: "--abort-on: \"retries.amplification > 0.5\": retries.amplification > 0.5 holds whatever the run does"},
	{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": "name: svc\nendpoints: [http://127.0.0.1:18080]\nrequest: {path: \"/items/{key}\"}\n" +
		"keys: {range: {from: 1, to: 1000}, hot: 50}\ntrigger: {name: burst, burst: 100}\nabort: [\"retries.amplification > 0.5\"]\n"},
		want: "t.yaml:6: abort[0]: retries.amplification > 0.5 holds whatever the run does"},
	{args: []string{"stampede", "--dry-run", "--escape", "on", "--after", "1s"}, want: "--after: 1s is too short for --escape"},
	{args: []string{"stampede", "--dry-run", "--trigger", "outage", "--after", "1s"}, want: "--after: 1s is not longer than outage's default, 2s", not: "--outage:"},
	{args: []string{"stampede", "--dry-run", "--trigger", "slowdb", "--after", "2s"}, want: "--after: 2s is not longer than slowdb_for's default, 3s"},
	{args: []string{"stampede", "--dry-run", "--trigger", "command", "--run", "true", "--after", "3s"}, want: "--after: 3s is not longer than command_timeout's default, 5s"},
	{args: []string{"stampede", "--dry-run", "--trigger", "outage", "--outage", "2s", "--after", "1s"}, want: "--outage: 2s is not shorter than after, 1s"},
	{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml"}, files: map[string]string{"t.yaml": "name: svc\nendpoints: [http://127.0.0.1:18080]\nrequest: {path: \"/items/{key}\"}\n" +
		"keys: {range: {from: 1, to: 1000}, hot: 50}\ntrigger: {name: command, run: \"true\"}\nplan: {after: 3s}\n"},
		want: "t.yaml:6: plan.after: 3s is not longer than command_timeout's default, 5s"},
	{args: []string{"stampede", "--dry-run", "--arms", "retry=immediate:1,retry=fixed:1s:1", "--retry", "immediate:5"},
		want: "--retry: every arm sets its own retry (arms: retry=immediate:1, retry=fixed:1s:1), so it would do nothing"},
	{args: []string{"stampede", "--dry-run", "--arms", "throttle=2,throttle=3", "--throttle", "4"}, want: "--throttle: every arm sets its own throttle"},
	{args: []string{"stampede", "--dry-run", "--arms", "client-breaker=5:1s,client-breaker=3:1s", "--client-breaker", "4:1s"}, want: "--client-breaker: every arm sets its own client breaker"},
	{args: []string{"run", "--dry-run", "{dir}/s.yaml", "--retry", "immediate:5"},
		files: map[string]string{"s.yaml": "arms:\n  - name: a\n    strategy: none\n    retry: none\n  - name: b\n    strategy: lock\n    retry: none\n"},
		want:  "--retry: every arm sets its own retry (arms: a, b)"},
	{args: []string{"stampede", "--dry-run", "--arms", "none,retry=none"}, want: "--arms: retry=none: sets the clients' policies the plan gives every arm already (retry=none, throttle=0, hedge=none, client-breaker=none), so it changes nothing: it is the same as none"},
	{args: []string{"stampede", "--dry-run", "--arms", "none,throttle=0"}, want: "--arms: throttle=0: sets the clients' policies"},
	{args: []string{"stampede", "--dry-run", "--arms", "none,client-breaker=none"}, want: "it is the same as none"},
	{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "arms:\n  - name: a\n    strategy: none\n    retry: immediate:0\n  - none\n"},
		want: "s.yaml:4: arms[0].retry: retry policy \"immediate:0\": N 0 makes no retries: say none"},
	{args: []string{"stampede", "--dry-run", "--retry", "immediate:0"}, want: "N 0 makes no retries: say none"},
	{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--vary", "burst=10..100", "--repeat", "9223372036854775807"}, want: "--repeat: 9223372036854775807 out of range (accepted: 1 to 20"},
	{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--vary", "burst=10..100", "--max-runs", "99999999"}, want: "--max-runs: 99999999 out of range"},
}

func TestBadInputIdleClients(t *testing.T) {
	for _, in := range idleInputs {
		dir, state := t.TempDir(), t.TempDir()
		args := append(withDir(in.args, dir), "--state-dir", state)
		writeFiles(t, dir, in.files)
		code, _, stderr := herdbench(t, args...)
		want := strings.ReplaceAll(in.want, "{dir}", dir)
		if code != exitUsage || !strings.Contains(stderr, want) || (in.not != "" && strings.Contains(stderr, in.not)) {
			t.Errorf("herdbench %s = exit %d, stderr %q; want exit 2, stderr containing %q (and not %q)", strings.Join(args, " "), code, stderr, want, in.not)
		}
		if entries, _ := os.ReadDir(state); len(entries) > 0 {
			t.Errorf("herdbench %s left %d entries in its state directory; want nothing started", strings.Join(args, " "), len(entries))
		}
	}
}

// TestDryRunKeepsWhatTakesEffect: a named no-retry baseline, a hedge below
// the timeout and --escape in the default after still pass.
func TestDryRunKeepsWhatTakesEffect(t *testing.T) {
	for _, args := range [][]string{
		{"stampede", "--dry-run", "--arms", "retry=none,retry=fixed:200ms:4"},
		{"stampede", "--dry-run", "--hedge", "50ms"},
		{"stampede", "--dry-run", "--escape", "on"},
		{"stampede", "--dry-run", "--retry", "immediate:2", "--arms", "none,retry=none"},
	} {
		args = append(args, "--state-dir", t.TempDir())
		if code, _, stderr := herdbench(t, args...); code != 0 {
			t.Errorf("herdbench %s = exit %d, stderr %q; want 0", strings.Join(args, " "), code, stderr)
		}
	}
}
