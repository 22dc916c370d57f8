package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docCommand is a herdbench command line of the README or docs/, in a
// fenced block, and where it is.
type docCommand struct {
	where string
	args  []string
	block string // its fenced block, whole
}

var docLine = regexp.MustCompile(`^\s*(?:\$ )?(?:\./)?herdbench (.*)$`)

// docCommands reads every herdbench command line of path's fenced blocks,
// continuation lines joined, a trailing # comment and a pipe's right side
// cut.
func docCommands(t *testing.T, path string) []docCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docCommand
	var block []string
	var open []int // indices of out in the open block
	in, buf, n := false, "", 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			if in {
				for _, i := range open {
					out[i].block = strings.Join(block, "\n")
				}
			}
			in, block, open = !in, nil, nil
			continue
		}
		if !in {
			continue
		}
		block = append(block, line)
		if buf != "" {
			buf += " " + strings.TrimSpace(line)
		} else if m := docLine.FindStringSubmatch(line); m != nil {
			buf = m[1]
		} else {
			continue
		}
		if strings.HasSuffix(buf, `\`) {
			buf = strings.TrimSuffix(buf, `\`)
			continue
		}
		cmd := regexp.MustCompile(`\s+#.*$`).ReplaceAllString(buf, "")
		cmd, _, _ = strings.Cut(cmd, " | ")
		buf = ""
		open = append(open, len(out))
		out = append(out, docCommand{where: fmt.Sprintf("%s:%d", path, n), args: shellWords(t, cmd)})
	}
	return out
}

// Every stampede, run and sweep command of the README and docs/ is a plan
// herdbench accepts: run here as a dry run (it sends nothing and starts
// nothing), from the repository's root with the variables the docs
// export, so the docs cannot drift from the CLI. Left out, each for its
// reason: a command on a file the docs make up (staging.yaml, a bad.yaml
// shown failing), and a command of a block that brings a testbed up first
// (it runs against that testbed, not offline).
func TestEveryDocCommandIsAcceptedByADryRun(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	env := append(os.Environ(), "STAGING_TOKEN=token", "STAGING_PG_DSN=postgres://catalog@pg.staging.internal/catalog",
		"SERVICE_PG_DSN=postgres://herdbench@127.0.0.1:5432/herdbench",
		"HERDBENCH_WORKER_TOKEN=0123456789abcdef0123456789abcdef") // docs/distributed.md exports it before its workers' commands
	ran := 0
	for _, doc := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		for _, c := range docCommands(t, doc) {
			if len(c.args) < 1 || (c.args[0] != "stampede" && c.args[0] != "run" && c.args[0] != "sweep") {
				continue
			}
			if strings.Contains(c.block, "testbed up") || madeUp(root, c.args) {
				continue
			}
			args := make([]string, len(c.args))
			for i, a := range c.args { // the docs' paths are from the repository's top
				args[i] = a
				if _, err := os.Stat(filepath.Join(root, a)); err == nil && strings.Contains(a, "/") {
					args[i] = filepath.Join(root, a)
				}
			}
			if !strings.Contains(strings.Join(args, " "), "--dry-run") {
				args = append(args, "--dry-run")
			}
			args = append(args, "--state-dir", t.TempDir())
			code, stdout, stderr := herdbenchEnv(t, env, args...)
			if code != exitOK || !strings.Contains(stdout, "dry run: nothing was sent") {
				t.Errorf("%s: herdbench %s = exit %d\n%s%s", c.where, strings.Join(c.args, " "), code, stdout, stderr)
			}
			ran++
		}
	}
	if ran < 30 {
		t.Errorf("ran %d commands of the docs; want the 30 or more they hold", ran)
	}
}

// madeUp says whether args name a YAML file the repository does not hold.
func madeUp(root string, args []string) bool {
	for _, a := range args {
		if strings.HasSuffix(a, ".yaml") && !strings.Contains(a, "=") {
			if _, err := os.Stat(filepath.Join(root, a)); err != nil {
				return true
			}
		}
	}
	return false
}
