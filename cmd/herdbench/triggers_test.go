package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/scenario"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// drizzle is the throwaway trigger of docs/architecture.md's first recipe:
// one type, its options its tagged fields, nothing else anywhere.
type drizzle struct {
	Drops int `json:"drizzle_drops" help:"hot keys dropped at T"`
}

func (*drizzle) Name() string               { return "drizzle" }
func (*drizzle) Describe() string           { return "a few hot keys dropped at T: a herd too small to matter" }
func (d *drizzle) Plan(triggers.Env) string { return fmt.Sprintf("UNLINK %d hot keys", d.Drops) }
func (*drizzle) Detail() any                { return &drizzleDetail{} }

// drizzleDetail is what drizzle did: the results' trigger.detail.
type drizzleDetail struct {
	Dropped int `json:"dropped"`
}

func (*drizzle) Fire(context.Context, triggers.Env) (triggers.Fired, error) {
	return triggers.Fired{}, nil
}

// withDrizzle is the registry with the throwaway trigger: what the one
// line in triggers.Default makes it.
func withDrizzle() *triggers.Registry {
	return triggers.NewRegistry(append(triggers.Default().Triggers(), &drizzle{Drops: 3})...)
}

// inProcess runs a command line of the root command built with newTriggers.
func inProcess(t *testing.T, newTriggers func() *triggers.Registry, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmdWith(&out, &errOut, newTriggers)
	root.SetArgs(args)
	code = exitCode(root.ExecuteContext(context.Background()), &errOut)
	return code, out.String(), errOut.String()
}

// A trigger added to the registry is in the stampede's flags and help, the
// scenario file's keys and JSON Schema, herdbench triggers and a dry run,
// with nothing else changed.
func TestAddingATriggerIsOneTypeAndOneRegistryLine(t *testing.T) {
	_, help, _ := inProcess(t, withDrizzle, "stampede", "--help")
	for _, want := range []string{"--drizzle-drops", "drizzle: hot keys dropped at T", "drizzle  a few hot keys dropped at T"} {
		if !strings.Contains(help, want) {
			t.Errorf("stampede --help lacks %q", want)
		}
	}
	if code, out, _ := inProcess(t, withDrizzle, "triggers"); code != exitOK || !strings.Contains(out, "--drizzle-drops 3") {
		t.Errorf("herdbench triggers = exit %d:\n%s\nwant drizzle with its option", code, out)
	}
	schema, err := scenario.Schema(scenario.Vocabulary{Triggers: withDrizzle(), Knobs: subject.Knobs(nil)})
	if err != nil || !bytes.Contains(schema, []byte(`"drizzle_drops"`)) || !bytes.Contains(schema, []byte(`"drizzle"`)) {
		t.Errorf("scenario schema (%v) lacks the trigger's name or its option", err)
	}
	// a scenario file sets its option by key, and a dry run shows its plan
	path := filepath.Join(t.TempDir(), "drizzle.yaml")
	if err := os.WriteFile(path, []byte("trigger: {name: drizzle, drizzle_drops: 5}\narms: [none]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := inProcess(t, withDrizzle, "run", path, "--dry-run", "--state-dir", t.TempDir())
	if code != exitOK || !strings.Contains(out, "drizzle at T: UNLINK 5 hot keys") {
		t.Errorf("run drizzle.yaml --dry-run = exit %d:\n%s%s\nwant the trigger's plan with the file's option", code, out, errOut)
	}
	// and without it in the registry, the same file is refused where it says so
	code, _, errOut = inProcess(t, triggers.Default, "run", path, "--dry-run", "--state-dir", t.TempDir())
	if code != exitUsage || !strings.Contains(errOut, path+`:1: trigger.drizzle_drops: unknown key "drizzle_drops"`) ||
		!strings.Contains(errOut, path+`:1: trigger.name: unknown "drizzle"`) {
		t.Errorf("run drizzle.yaml without drizzle = exit %d, stderr %q; want 2, the key and the name refused", code, errOut)
	}
}

// The flags, the scenario schema's enum and herdbench triggers list exactly
// the registry's triggers and options.
func TestTriggerSurfacesFollowTheRegistry(t *testing.T) {
	reg := triggers.Default()
	_, help, _ := inProcess(t, triggers.Default, "stampede", "--help")
	_, list, _ := inProcess(t, triggers.Default, "triggers")
	schema, err := scenario.Schema(scenario.Vocabulary{Knobs: subject.Knobs(nil)})
	if err != nil {
		t.Fatal(err)
	}
	wantTrigger := "what provokes the herd at T: " + strings.Join(reg.Names(), ", ")
	if !strings.Contains(strings.Join(strings.Fields(help), " "), wantTrigger) { // help wraps its lines
		t.Errorf("--trigger help lacks %q", wantTrigger)
	}
	if lines := strings.Count(strings.TrimSpace(list), "\n") + 1; lines != len(reg.Names()) {
		t.Errorf("herdbench triggers printed %d lines; want %d, one per trigger:\n%s", lines, len(reg.Names()), list)
	}
	for _, n := range reg.Names() {
		if !strings.Contains(list, n+" ") || !bytes.Contains(schema, []byte(fmt.Sprintf("%q", n))) {
			t.Errorf("trigger %s missing from herdbench triggers or the schema's enum", n)
		}
	}
	for _, o := range reg.Options() {
		if !strings.Contains(help, "--"+o.Flag()) || !bytes.Contains(schema, []byte(fmt.Sprintf("%q", o.Key))) {
			t.Errorf("option %s of %s missing from the flags or the schema", o.Key, o.Trigger)
		}
	}
}
