package local

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/store"
)

// Name is the local provider's name, in testbed.Status.Provider.
const Name = "local"

// Provider runs the testbed as processes on loopback: in the caller's
// process (Start), or detached under a supervisor process of its own
// (StartDetached) when the options say so.
type Provider struct{}

var _ testbed.Provider = Provider{}

func (Provider) Name() string { return Name }

// Available says whether the programs of the stores o asks for (Redis,
// its cache and database) are installed, and with observability
// Prometheus and its exporters.
func (Provider) Available(_ context.Context, o testbed.Options) error {
	err := CheckBinariesFor(o.Replica)
	if o.Observability {
		err = errors.Join(err, CheckObservabilityBinaries())
	}
	return err
}

// Problems refuses the options only the docker provider takes.
func (Provider) Problems(o testbed.Options) herd.FieldErrors {
	var bad herd.FieldErrors
	if o.IsSet("grafana") {
		bad.Add("grafana", "the local provider runs no Grafana (accepted with --provider docker --observability; point any Grafana at testbed status -t '{{.Prometheus}}')")
	}
	if o.IsSet("compose_file") {
		bad.Add("compose_file", "the local provider runs no compose file (accepted with --provider docker)")
	}
	if set, err := store.For(o.Replica); err == nil && o.Observability {
		for _, k := range set.Running() {
			if u, ok := k.(store.Unobserved); ok {
				why, accepted := u.Unobserved()
				bad.Add("observability", "%s, and the %s is %s (%s)", why, k.Role().Noun(), k.Title(), accepted)
			}
		}
	}
	return bad
}

// Items is o.Items, or DefaultItems.
func (Provider) Items(o testbed.Options) int { return cmp.Or(o.Items, DefaultItems) }

// Up starts the testbed: in this process, which owns it until the
// returned stop, or with o.Detach under a supervisor of its own.
func (Provider) Up(ctx context.Context, o testbed.Options) (testbed.Status, func(context.Context) error, error) {
	cfg := configOf(o)
	if o.Detach {
		st, err := StartDetached(ctx, cfg)
		return st, nil, err
	}
	tb, err := Start(ctx, cfg)
	if err != nil {
		return testbed.Status{}, nil, err
	}
	return tb.Status(), func(context.Context) error { tb.Stop(); return nil }, nil
}

// Recorded reports whether dir holds a local testbed's state file.
func (Provider) Recorded(dir string) bool {
	_, err := os.Stat(statePath(dir))
	return err == nil
}

func (Provider) Status(_ context.Context, dir string) (testbed.Status, error) { return ReadStatus(dir) }

// Down is Down; it says the logs stay.
func (Provider) Down(_ context.Context, dir string, timeout time.Duration) (string, error) {
	if err := Down(dir, timeout); err != nil {
		return "", err
	}
	return "logs kept in " + filepath.Join(dir, "logs"), nil
}

// Restarter is a client of the supervisor's control API.
func (Provider) Restarter(st testbed.Status) testbed.Restarter { return Control{URL: st.Control} }

// configOf is the Config that starts what o asks for.
func configOf(o testbed.Options) Config {
	cfg := Config{
		StateDir:      o.StateDir,
		Binary:        o.Binary,
		Replicas:      o.Replicas,
		Items:         o.Items,
		Replica:       o.Replica,
		ReadyTimeout:  o.ReadyTimeout,
		Observability: o.Observability,
		Tiers:         o.Tiers,
		Edge:          edge.Options{Config: o.Edge, Seed: o.Replica.Seed},
	}
	if o.Events != nil {
		cfg.Log = slog.New(slog.NewTextHandler(o.Events, nil))
	}
	return cfg
}
