package compose

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/store"
)

// Name is the docker provider's name, in testbed.Status.Provider.
const Name = "docker"

// Items is how many items initdb/10-herdbench.sql seeds; a test checks it.
const Items = 10_000

// Provider runs the testbed with docker compose (testbed.Provider). Its
// containers outlive the caller whether or not it detaches; a caller that
// does not detach takes them down with the stop Up returns.
type Provider struct{}

var _ testbed.Provider = Provider{}

// Options are the testbed.Options the docker provider honours when set
// (the cache and the database: the default stores, or another with its
// profile); the rest
// (replicas, items, the replicas' knobs and pools) are fixed by
// docker-compose.yml.
var Options = append([]string{"state_dir", "provider", "compose_file", "observability", "grafana", "timeout", "tiers", "cache", "db"}, testbed.EdgeOptions...)

func (Provider) Name() string { return Name }

// Available says whether Compose v2 answers (FindCommand).
func (Provider) Available(ctx context.Context, _ testbed.Options) error {
	_, err := FindCommand(ctx)
	return err
}

// Problems refuses every set option the compose file fixes, a database it
// has no service for, and the observability profile beside a database
// it cannot read.
func (Provider) Problems(o testbed.Options) herd.FieldErrors {
	var bad herd.FieldErrors
	for _, name := range o.Set {
		if name == "db" {
			dbProblems(&bad, o)
			continue
		}
		if !slices.Contains(Options, name) {
			bad.Add(name, "the docker provider runs the replicas docker-compose.yml defines (accepted with --provider docker: --%s); "+
				"switch mitigations at run time with PUT /admin/config or the stampede's --arms",
				strings.ReplaceAll(strings.Join(Options, ", --"), "_", "-"))
		}
	}
	return bad
}

// dbProblems refuses a database the compose file has no service for,
// and one the observability profile cannot read beside it: as the local
// provider does.
func dbProblems(bad *herd.FieldErrors, o testbed.Options) {
	db, err := store.Lookup(store.DB, o.Replica.DB)
	if err != nil {
		bad.Add("db", "%q: the docker provider's compose file has no %s service (accepted: %s)", o.Replica.DB, o.Replica.DB, strings.Join(store.Names(store.DB), ", "))
		return
	}
	if u, ok := db.(store.Unobserved); ok && o.Observability {
		why, accepted := u.Unobserved()
		bad.Add("observability", "%s (%s)", why, accepted)
	}
}

// Items is Items: the compose file's seed is fixed.
func (Provider) Items(testbed.Options) int { return Items }

// Up runs Up with o; unless o.Detach, the stop it returns runs Down.
func (Provider) Up(ctx context.Context, o testbed.Options) (testbed.Status, func(context.Context) error, error) {
	file := cmp.Or(o.ComposeFile, DefaultFile)
	log := o.Log
	if log != nil {
		fmt.Fprintf(log, "compose file %s (the first up builds the replicas' image)\n", file)
	}
	st, err := Up(ctx, Config{StateDir: o.StateDir, File: file, Observability: o.Observability, NoGrafana: !o.Grafana,
		ReadyTimeout: o.ReadyTimeout, Log: log, Tiers: o.Tiers, Edge: o.Edge, Cache: o.Replica.Cache, DB: o.Replica.DB})
	if err != nil || o.Detach {
		return st, nil, err
	}
	dir := st.StateDir
	return st, func(ctx context.Context) error { return Down(context.WithoutCancel(ctx), dir) }, nil
}

// Recorded reports whether dir holds a compose testbed's state file.
func (Provider) Recorded(dir string) bool { return Recorded(dir) }

func (Provider) Status(ctx context.Context, dir string) (testbed.Status, error) {
	return ReadStatus(ctx, dir)
}

// Down is Down, given timeout and a minute more.
func (Provider) Down(ctx context.Context, dir string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	if err := Down(ctx, dir); err != nil {
		return "", err
	}
	return "docker compose down: containers and volumes removed", nil
}

// Restarter restarts parts with docker compose.
func (Provider) Restarter(st testbed.Status) testbed.Restarter {
	return Restarter{StateDir: st.StateDir}
}
