// Package providers registers the testbed's providers: Default is the
// registry herdbench's commands pick a provider from, local first (the
// one --provider auto tries first), then docker.
package providers

import (
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/compose"
	"github.com/herdbench/herdbench/testbed/local"
)

// Default returns a new registry of the local and the docker provider.
func Default() *testbed.Registry {
	return testbed.NewRegistry(local.Provider{}, compose.Provider{})
}
