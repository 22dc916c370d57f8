package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's staging commands work as written: its `./herdbench init`
// line writes a file (in a temporary directory: --file added), and every
// `./herdbench stampede --target herdbench-target.yaml ...` line after it
// passes a dry run on that file; so does every `./herdbench stampede
// --target examples/staging.yaml ...` line. Each gets its own --dry-run,
// or one added (the run itself would touch the service), with the
// variables the README exports set. The target file's plan gives the rate
// its caps allow; without it, the default rate was over the cap and every
// line exited 2.
func TestREADMEStagingCommandsDryRun(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"STAGING_TOKEN=token", "STAGING_PG_DSN=postgres://catalog@pg.staging.internal/catalog",
		"SERVICE_PG_DSN=postgres://app@127.0.0.1:5432/app"}
	written := filepath.Join(t.TempDir(), "herdbench-target.yaml")
	inits, n := 0, 0
	for _, line := range strings.Split(string(b), "\n") {
		cmd, _, _ := strings.Cut(line, "#") // a comment after the command
		cmd = strings.TrimSpace(cmd)
		if strings.HasPrefix(cmd, "./herdbench init ") {
			inits++
			args := append(shellWords(t, strings.TrimPrefix(cmd, "./herdbench ")), "--file", written)
			if code, stdout, stderr := herdbenchEnv(t, env, args...); code != exitOK {
				t.Fatalf("%s: exit %d; want the file written\n%s%s", cmd, code, stdout, stderr)
			}
			continue
		}
		if !strings.HasPrefix(cmd, "./herdbench stampede --target examples/staging.yaml") &&
			!strings.HasPrefix(cmd, "./herdbench stampede --target herdbench-target.yaml") {
			continue
		}
		n++
		args := shellWords(t, strings.TrimPrefix(cmd, "./herdbench "))
		for i, a := range args {
			switch a {
			case "examples/staging.yaml":
				args[i] = "../../" + a // the README's paths are from the repository's top
			case "herdbench-target.yaml":
				if inits == 0 {
					t.Fatalf("%s: before the README's init line, which writes the file", cmd)
				}
				args[i] = written
			}
		}
		if !strings.Contains(cmd, "--dry-run") {
			args = append(args, "--dry-run")
		}
		args = append(args, "--state-dir", t.TempDir())
		code, stdout, stderr := herdbenchEnv(t, env, args...)
		if code != 0 || !strings.Contains(stdout+stderr, "dry run: nothing was sent") {
			t.Errorf("%s: exit %d; want a dry run that passes\n%s%s", cmd, code, stdout, stderr)
		}
	}
	if inits != 1 || n < 4 {
		t.Errorf("%d init lines and %d staging commands in the README; want init's one, and its two and the staging file's two at least", inits, n)
	}
}

// shellWords splits a README command line as sh would for these: words
// separated by spaces, single quotes keeping theirs.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// planTarget is a target file on loopback that declares its keys and
// proposes its plan and a burst of one: nothing it names is ever reached
// by a dry run.
const planTarget = "endpoints: [http://127.0.0.1:1]\nrequest: {path: \"/items/{key}\"}\nkeys: {range: {from: 1, to: 100}, hot: 10}\n" +
	"plan: {rate: 200, before: 1s, after: 2s}\ntrigger: {name: burst, burst: \"1\"}\n"

// A target file's plan sets what neither the command line nor a scenario
// file sets: defaults < target file < scenario file < flags, shown in the
// dry run's per-endpoint rate; a value its flag refuses is refused at the
// file's line.
func TestTargetFilePlanPrecedence(t *testing.T) {
	dir := t.TempDir()
	target := dir + "/svc.yaml"
	writeFiles(t, dir, map[string]string{
		"svc.yaml":      planTarget,
		"scenario.yaml": "target: " + target + "\nload: {rate: 150}\n",
		"bad.yaml":      "endpoints: [http://127.0.0.1:1]\nrequest: {path: \"/items/{key}\"}\nkeys: {list: [a]}\nplan:\n  rate: 200\n  after: soon\n  warmup: 2\n",
	})
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"the file's", []string{"stampede", "--target", target}, "load      200 req/s to http://127.0.0.1:1"},
		{"a flag over the file's", []string{"stampede", "--target", target, "--rate", "250"}, "load      250 req/s"},
		{"a scenario over the file's", []string{"run", dir + "/scenario.yaml"}, "load      150 req/s"},
		{"a flag over the scenario's", []string{"run", dir + "/scenario.yaml", "--rate", "120"}, "load      120 req/s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := herdbench(t, append(tt.args, "--dry-run", "--state-dir", t.TempDir())...)
			if code != 0 || !strings.Contains(stdout, tt.want) {
				t.Errorf("%v: exit %d; want a dry run with %q\n%s%s", tt.args, code, tt.want, stdout, stderr)
			}
		})
	}
	code, _, stderr := herdbench(t, "stampede", "--target", dir+"/bad.yaml", "--dry-run", "--state-dir", t.TempDir())
	if want := "bad.yaml:6: plan.after: \"soon\""; code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("a plan whose after is soon: exit %d; want %d and %q\n%s", code, exitUsage, want, stderr)
	}
	if want := `bad.yaml:7: plan.warmup: "2" is not a duration such as 500ms, 2s or 1m30s (accepted:`; !strings.Contains(stderr, want) {
		t.Errorf("a plan whose warmup is 2: %q; want %q, the accepted form named once", stderr, want)
	}
}

// A flag that would be dropped without a word on a target herdbench does
// not control is refused, naming it and why: the testbed's start-up
// options and knobs on any target, the key space's flags where the target
// file declares its keys; on a bare URL the key space's flags apply.
func TestTestbedFlagsOnATargetAreRefused(t *testing.T) {
	dir := t.TempDir()
	target := dir + "/svc.yaml"
	writeFiles(t, dir, map[string]string{
		"svc.yaml": planTarget,
	})
	url := "http://127.0.0.1:1/items/{key}"
	for _, tt := range []struct {
		args []string
		want string // "" passes
	}{
		{[]string{"--target", target, "--ttl", "4s"}, "--ttl: a knob of the bundled testbed's replicas"},
		{[]string{"--target", url, "--trigger", "burst", "--query-cost", "10ms"}, "--query-cost: a knob of the bundled testbed's replicas"},
		{[]string{"--target", target, "--replicas", "2"}, "--replicas: starts the bundled testbed"},
		{[]string{"--target", target, "--db", "mariadb"}, "--db: starts the bundled testbed"},
		{[]string{"--target", target, "--keys", "50"}, "--keys: " + target + " declares its keys (keys: at line 3)"},
		{[]string{"--target", target, "--hot-keys", "5"}, "--hot-keys: " + target + " declares its keys"},
		{[]string{"--target", url, "--trigger", "burst", "--keys", "50", "--hot-keys", "5", "--zipf", "1.3"}, ""},
	} {
		code, stdout, stderr := herdbench(t, append(append([]string{"stampede"}, tt.args...), "--dry-run", "--state-dir", t.TempDir())...)
		switch {
		case tt.want == "" && code != 0:
			t.Errorf("%v: exit %d; want a dry run that passes\n%s%s", tt.args, code, stdout, stderr)
		case tt.want != "" && (code != exitUsage || !strings.Contains(stderr, tt.want)):
			t.Errorf("%v: exit %d; want %d and %q\n%s", tt.args, code, exitUsage, tt.want, stderr)
		}
	}
}

// A staging dry run needs none of the target file's secrets: a ${VAR}
// that is not set is listed as needed at run time, with its field and
// line, and the host a DSN will name as unknown yet; the run itself
// refuses the same file until they are set, naming each.
func TestAStagingDryRunListsTheSecretsItNeeds(t *testing.T) {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()} // no STAGING_* at all
	args := []string{"stampede", "--target", "../../examples/staging.yaml", "--state-dir", t.TempDir()}
	code, stdout, stderr := herdbenchEnv(t, env, append(args, "--dry-run")...)
	for _, want := range []string{
		"needs     STAGING_TOKEN for headers.Authorization (line 39): not set now, needed at run time",
		"needs     STAGING_PG_DSN for postgres.dsn (line 55): not set now, needed at run time",
		"the host in postgres.dsn, once its variables are set",
	} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("dry run without the secrets: exit %d; want 0 and %q\n%s%s", code, want, stdout, stderr)
		}
	}
	if strings.Contains(stdout, "localhost") {
		t.Errorf("dry run without the DSN names localhost, the default of an empty DSN:\n%s", stdout)
	}
	code, stdout, stderr = herdbenchEnv(t, env, append(args, "--yes")...)
	if code != exitUsage || !strings.Contains(stderr, "staging.yaml:39: headers.Authorization: environment variable STAGING_TOKEN is not set") ||
		!strings.Contains(stderr, "staging.yaml:55: postgres.dsn: environment variable STAGING_PG_DSN is not set") {
		t.Errorf("the run without the secrets: exit %d; want %d naming both at their lines\n%s%s", code, exitUsage, stdout, stderr)
	}
}
