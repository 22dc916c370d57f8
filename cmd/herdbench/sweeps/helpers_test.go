package sweeps

import (
	"os"
	"testing"

	"github.com/herdbench/herdbench/testbed/localtest"
)

// The tests drive the built binary (clitest), as cmd/herdbench's do.
func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }
