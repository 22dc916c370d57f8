// Package subjecttest opens a local testbed as the engine's subject for
// tests: a package of its own because testbed/subject imports load, whose
// tests use localtest.
package subjecttest

import (
	"context"
	"testing"

	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// Subject starts a local testbed of replicas over 1,000 items, as
// localtest.Start does, and opens it as the engine's subject; both are
// closed with t.
func Subject(t testing.TB, replicas int) *subject.Testbed {
	t.Helper()
	tb := localtest.Start(t, local.Config{Replicas: replicas, Items: 1000})
	tg, err := subject.Open(context.Background(), tb.Status(), tb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	return tg
}

// TriggerOptions is every trigger with its defaults but for the options
// given, key then value, as a flag would set them; it panics on an option
// a trigger refuses (a test's own mistake).
func TriggerOptions(kv ...string) *triggers.Registry {
	reg := triggers.Default()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := reg.Set(kv[i], kv[i+1]); err != nil {
			panic(err)
		}
	}
	return reg
}
