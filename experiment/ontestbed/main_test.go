package ontestbed_test

import (
	"context"
	"os"
	"testing"

	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }

// TriggerOptions is every trigger with its defaults but for the options
// given, key then value, as a flag would set them.
func TriggerOptions(kv ...string) *triggers.Registry {
	reg := triggers.Default()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := reg.Set(kv[i], kv[i+1]); err != nil {
			panic(err)
		}
	}
	return reg
}

// startTestbed starts a local testbed of replicas over 1,000 items and
// opens it as the engine's subject, both closed with t.
func startTestbed(t testing.TB, replicas int) *subject.Testbed {
	t.Helper()
	tb := localtest.Start(t, local.Config{Replicas: replicas, Items: 1000})
	tg, err := subject.Open(context.Background(), tb.Status(), tb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	return tg
}
