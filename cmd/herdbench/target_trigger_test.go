package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A target file's trigger is the run's unless the command line or a
// scenario file says otherwise; its options apply only to it, and a
// mistake in it is named at its line.
func TestTargetFileTrigger(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const service = `endpoints: ["http://127.0.0.1:9"]
request: {path: "/items/{key}"}
keys: {list: ["1", "2"]}
`
	target := write("target.yaml", service+`trigger:
  name: command
  run: "curl -fsS -X PURGE http://127.0.0.1:9/items/1"
  undo: "echo undone"
`)
	dry := func(args ...string) (int, string, string) {
		return herdbench(t, append([]string{"stampede", "--target", target, "--dry-run", "--state-dir", t.TempDir()}, args...)...)
	}
	code, out, errOut := dry()
	if code != exitOK || !strings.Contains(out, "trigger   command at T") || !strings.Contains(out, "curl -fsS -X PURGE http://127.0.0.1:9/items/1") || !strings.Contains(out, "echo undone") {
		t.Errorf("dry run with the file's trigger = exit %d; want its command and undo\n%s%s", code, out, errOut)
	}
	// a flag replaces the file's option; the file's others stay
	code, out, errOut = dry("--run", "echo from-the-flag")
	if code != exitOK || !strings.Contains(out, "echo from-the-flag") || strings.Contains(out, "curl") || !strings.Contains(out, "echo undone") {
		t.Errorf("dry run with --run = exit %d; want the flag's command and the file's undo\n%s%s", code, out, errOut)
	}
	// another trigger chosen: the file's options are not applied
	code, out, errOut = dry("--trigger", "burst")
	if code != exitOK || !strings.Contains(out, "trigger   burst at T") || strings.Contains(out, "curl") {
		t.Errorf("dry run with --trigger burst = exit %d; want burst and nothing of the file's command\n%s%s", code, out, errOut)
	}
	// a scenario file's trigger wins over the target file's
	scen := write("scenario.yaml", "target: "+target+"\ntrigger: {name: burst}\n")
	code, out, errOut = herdbench(t, "run", scen, "--dry-run", "--state-dir", t.TempDir())
	if code != exitOK || !strings.Contains(out, "trigger   burst at T") {
		t.Errorf("run of a scenario choosing burst = exit %d; want burst\n%s%s", code, out, errOut)
	}

	bad := write("bad.yaml", service+"trigger:\n  name: command\n  run: \"true\"\n  slowdb_latency: 1s\n")
	code, _, errOut = herdbench(t, "stampede", "--target", bad, "--dry-run", "--state-dir", t.TempDir())
	if code != exitUsage || !strings.Contains(errOut, "bad.yaml:7: trigger.slowdb_latency: not an option of command (accepted: name, run, undo,") {
		t.Errorf("a target file's trigger with another's option = exit %d, %s; want exit 2 at its line, naming command's options", code, errOut)
	}
	unknown := write("unknown.yaml", service+"trigger: {name: comand}\n")
	code, _, errOut = herdbench(t, "stampede", "--target", unknown, "--dry-run", "--state-dir", t.TempDir())
	if code != exitUsage || !strings.Contains(errOut, `unknown.yaml:4: trigger.name: "comand" is not a trigger (accepted: expire, ttl, flush,`) {
		t.Errorf("a target file's unknown trigger = exit %d, %s; want exit 2 at its line, naming the triggers", code, errOut)
	}
}
