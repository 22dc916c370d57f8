package providers

import (
	"slices"
	"testing"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/compose"
	"github.com/herdbench/herdbench/testbed/local"
)

func TestDefaultRegistersLocalThenDocker(t *testing.T) {
	if got := Default().Names(); !slices.Equal(got, []string{testbed.Auto, local.Name, compose.Name}) {
		t.Errorf("Default().Names() = %v; want auto, local, docker: auto tries local first", got)
	}
}

// A docker compose testbed has no supervisor: its parts restart through
// docker compose (whose restart the compose package tests against a fake
// docker); a local one through its supervisor's control API.
func TestRestarterFollowsTheProvider(t *testing.T) {
	reg := Default()
	restarter := func(st testbed.Status) (testbed.Restarter, error) {
		p, err := reg.Get(st.Provider)
		if err != nil {
			return nil, err
		}
		return (&testbed.Running{Status: st, Provider: p}).Restarter(), nil
	}
	docker, err := restarter(testbed.Status{Provider: compose.Name, StateDir: "/s"})
	if r, ok := docker.(compose.Restarter); err != nil || !ok || r.StateDir != "/s" {
		t.Errorf("Restarter(docker) = %#v, %v; want compose.Restarter{StateDir: /s}", docker, err)
	}
	loc, err := restarter(testbed.Status{Provider: local.Name, Control: "http://127.0.0.1:1"})
	if r, ok := loc.(local.Control); err != nil || !ok || r.URL != "http://127.0.0.1:1" {
		t.Errorf("Restarter(local) = %#v, %v; want local.Control{URL: http://127.0.0.1:1}", loc, err)
	}
	if _, err := restarter(testbed.Status{Provider: "k8s"}); err == nil {
		t.Error("Restarter(k8s) = nil error; want the provider unknown")
	}
}
