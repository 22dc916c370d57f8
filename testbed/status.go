// Package testbed describes the service under test the same way whichever
// provider started it, and says how every command gets one. Status is the
// contract that `herdbench testbed status --json`, the stampede and CI
// scripts read. Provider is what runs it (testbed/local as processes,
// testbed/compose with docker compose); a Registry picks one by name, and
// Registry.Ensure, the one call `testbed up`, `stampede` and `run` share,
// uses the testbed running in a state directory or starts one.
//
// Guarantees: Ensure reports every problem of its options at once, each
// naming its option, before anything starts; what it starts for a caller
// that does not detach stops with Running.Stop. The service itself lives
// in testbed/api.
package testbed

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/herdbench/herdbench/testbed/store"
)

// Names every provider creates in the testbed's database.
const (
	Database  = store.Database  // the database holding the items table
	Superuser = store.Superuser // owner; reads pg_stat_statements
	AppRole   = store.AppRole   // the replicas' role; its connections are the app's
)

// Status is a running testbed's endpoints and processes.
type Status struct {
	Provider string   `json:"provider"`       // "local" or "docker"
	API      []string `json:"api"`            // base URL of each replica
	Edge     []string `json:"edge,omitempty"` // base URL of each edge replica, in front of the replicas (tiers 2)
	// the stores' addresses, direct (not proxied): redis, postgres, and
	// the others the testbed runs (store.Addrs; store.In says which)
	store.Addrs
	Toxiproxy  string            `json:"toxiproxy"`            // toxiproxy API URL
	Control    string            `json:"control,omitempty"`    // the supervisor's control API: POST /restart
	Proxies    map[string]string `json:"proxies"`              // dependency -> proxied host:port the replicas use
	StateDir   string            `json:"state_dir"`            // where data, state and logs live
	PIDs       map[string]int    `json:"pids"`                 // process name -> pid
	Versions   map[string]string `json:"versions"`             // component -> version
	Logs       map[string]string `json:"logs"`                 // process name -> log file
	Prometheus string            `json:"prometheus,omitempty"` // Prometheus' URL, when observability runs
	Harness    string            `json:"harness,omitempty"`    // host:port where that Prometheus scrapes a stampede's live metrics
	Grafana    string            `json:"grafana,omitempty"`    // Grafana's URL, when the provider runs one
	// Items is how many items Postgres was seeded with (ids 1..Items);
	// 0 in a state file written before it was recorded: unknown.
	Items int `json:"items,omitempty"`
}

// WriteStateFile writes a provider's state file as JSON, atomically (a
// temporary file, then a rename), so `status` and `down` in another shell
// never read half of it.
func WriteStateFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return os.Rename(tmp, path)
}

// ReadStateFile reads a provider's state file into v; a missing file
// reads as notRunning, with the directory it was looked for in.
func ReadStateFile(path string, v any, notRunning error) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w in %s", notRunning, filepath.Dir(path))
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("state file %s: %w", path, err)
	}
	return nil
}
