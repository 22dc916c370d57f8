// Package composetest helps tests run the docker compose testbed on a real
// Docker Engine, as localtest helps them run the local one: Require skips a
// test on a machine without a running engine but fails it when CI is set,
// makes sure `docker compose` is Compose v2 (install-compose.sh) and points
// docker-compose.yml at the stand-in images built from Debian's packages
// (standin/images.sh), for engines that cannot pull the official ones.
// It gives the test the engine to itself (machinelock.TakeEngine): every
// project of docker-compose.yml publishes the same host ports.
package composetest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdbench/herdbench/internal/machinelock"
	"github.com/herdbench/herdbench/testbed/compose"
)

// Dir is the testbed/compose directory, where the scripts live.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// Root is the repository's root, where docker-compose.yml lives.
func Root() string { return filepath.Dir(filepath.Dir(Dir())) }

// File is the repository's docker-compose.yml.
func File() string { return filepath.Join(Root(), compose.DefaultFile) }

var (
	once    sync.Once
	images  map[string]string // HERDBENCH_*_IMAGE -> the stand-in
	prepErr error
)

// Require skips t when no Docker Engine answers, and fails it when the
// environment variable CI is set; then it installs Compose v2 if the
// machine lacks it, builds the stand-in images (both cached: the first call
// on a machine takes minutes, the next ones seconds) and sets the
// HERDBENCH_*_IMAGE variables to them for the length of t, which holds the
// engine lock: no other test brings up a project meanwhile.
func Require(t testing.TB) {
	t.Helper()
	if err := engine(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and no Docker Engine answers: %v", err)
		}
		t.Skipf("no Docker Engine: %v", err)
	}
	once.Do(prepare)
	if prepErr != nil {
		t.Fatal(prepErr)
	}
	machinelock.TakeEngine(t)
	for k, v := range images {
		t.Setenv(k, v)
	}
}

// Env is this process' environment with the stand-in images' variables, for
// a command a test starts (Require must have run).
func Env() []string {
	env := os.Environ()
	for k, v := range images {
		env = append(env, k+"="+v)
	}
	return env
}

func engine() error {
	if _, err := exec.LookPath("docker"); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		return fmt.Errorf("docker info: %v: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

func prepare() {
	if out, err := script(filepath.Join(Dir(), "install-compose.sh")); err != nil {
		prepErr = fmt.Errorf("install-compose.sh: %v\n%s", err, out)
		return
	}
	out, err := script(filepath.Join(Dir(), "standin", "images.sh"))
	if err != nil {
		prepErr = fmt.Errorf("standin/images.sh: %v\n%s", err, out)
		return
	}
	images = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if ok && strings.HasPrefix(k, "HERDBENCH_") {
			images[k] = v
		}
	}
	if len(images) == 0 {
		prepErr = fmt.Errorf("standin/images.sh printed no HERDBENCH_*_IMAGE variable:\n%s", out)
	}
}

// script runs a setup script: its stdout is returned, its stderr (progress)
// goes to this process' stderr, which go test shows with -v or on failure.
func script(path string) ([]byte, error) {
	cmd := exec.Command("bash", path)
	cmd.Dir = Root()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	err := cmd.Run()
	return out.Bytes(), err
}
