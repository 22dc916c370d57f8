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
