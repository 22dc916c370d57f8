package sweeps

import (
	"os"
	"testing"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/sweep"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// The tests drive the built binary, as cmd/herdbench's do.
func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }

const (
	exitOK          = clitest.ExitOK
	exitGatesFailed = clitest.ExitGatesFailed
)

func herdbench(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return clitest.Run(t, nil, args...)
}

func herdbenchEnv(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return clitest.Run(t, env, args...)
}

func stateDir(t *testing.T) string {
	t.Helper()
	return clitest.StateDir(t)
}

func readResults(t *testing.T, path string) experiment.Report {
	t.Helper()
	return clitest.ReadResults(t, path)
}

func readSweep(t *testing.T, dir string) *sweep.Results {
	t.Helper()
	return clitest.ReadSweep(t, dir)
}
