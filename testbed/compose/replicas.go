package compose

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
)

// Restart restarts part ("api", "redis", "postgres") of the compose
// testbed recorded in dir with `docker compose restart`, all its services
// at once or one after another when rolling, and returns when they are
// healthy again. Redis keeps nothing across a restart; Postgres keeps its
// data; a replica comes back with the run-time config and seed it had: all
// as under the local provider.
func Restart(ctx context.Context, dir, part string, rolling bool) ([]string, error) {
	return restart(ctx, dir, part, rolling, false)
}

// restart restarts part as Restart says; with kill, every container of it
// at once with SIGKILL (docker compose kill), then starts them again.
func restart(ctx context.Context, dir, part string, rolling, kill bool) ([]string, error) {
	st, err := readState(dir)
	if err != nil {
		return nil, err
	}
	var batch []string
	for _, s := range st.Services {
		if herd.InPart(part, s) {
			batch = append(batch, s)
		}
	}
	if !herd.IsPart(part) || len(batch) == 0 || (part != herd.API && len(batch) < len(herd.PartNames(part))) {
		return nil, fmt.Errorf("restart: unknown part %q (accepted: %s, %s)", part, strings.Join(herd.Parts, ", "), herd.ReplicaForm)
	}
	if k, ok := store.Named(part); ok && !storesOf(st.Profiles).Runs(part) {
		// it runs, idle: restarting it would break nothing the replicas use
		in := storesOf(st.Profiles).Of(k.Role())
		return nil, fmt.Errorf("restart: this testbed's %s is %s, not %s (accepted: %s)", k.Role().Noun(), in.Title(), k.Title(), in.Name())
	}
	steps := [][]string{batch}
	if rolling {
		steps = nil
		for _, s := range batch {
			steps = append(steps, []string{s})
		}
	}
	for _, step := range steps {
		var replicas []replicaState
		for _, s := range step {
			if i := replicaIndex(s) - 1; strings.HasPrefix(s, "api-") && i >= 0 && i < len(st.Status.API) {
				replicas = append(replicas, saveReplicas(ctx, st.Status.API[i:i+1])...)
			}
		}
		cmds := [][]string{append([]string{"restart"}, step...)}
		if kill {
			cmds = [][]string{append([]string{"kill", "-s", "SIGKILL"}, step...), append([]string{"start"}, step...)}
		}
		for _, c := range cmds {
			if _, err := st.run(ctx, nil, c...); err != nil {
				return nil, err
			}
		}
		wctx, cancel := context.WithTimeout(ctx, DefaultReadyTimeout)
		_, err := st.waitHealthy(wctx, step)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("restart %s: %w", strings.Join(step, ", "), err)
		}
		for _, r := range replicas {
			if err := r.restore(ctx); err != nil {
				return nil, fmt.Errorf("restart: restore %s's config: %w", r.admin.URL, err)
			}
		}
	}
	return batch, nil
}

// Restarter restarts the parts of the compose testbed recorded in a state
// directory, as Restart does.
type Restarter struct{ StateDir string }

// Restart restarts part, all at once or rolling.
func (r Restarter) Restart(ctx context.Context, part string, rolling bool) ([]string, error) {
	return Restart(ctx, r.StateDir, part, rolling)
}

// Kill restarts part's containers at once after SIGKILL: no graceful
// stop, as a crash.
func (r Restarter) Kill(ctx context.Context, part string) ([]string, error) {
	return restart(ctx, r.StateDir, part, false, true)
}

// replicaState is what a replica runs with that a container restart loses:
// its run-time config (PUT /admin/config) and its seed. The local provider
// restarts a replica with both; this provider puts them back.
type replicaState struct {
	admin  *admin.Client
	config *replica.Config
	seed   *uint64
}

// saveReplicas reads each replica's config and seed; what it cannot read
// (a replica already down) it leaves unset.
func saveReplicas(ctx context.Context, urls []string) []replicaState {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var out []replicaState
	for _, u := range urls {
		rs := replicaState{admin: admin.NewClient(u)}
		if raw, err := rs.admin.Config(ctx); err == nil {
			if c, err := replica.ConfigOf(raw); err == nil && c.Validate() == nil {
				rs.config = &c
			}
		}
		// /healthz answers 503 with the seed while a dependency is away
		if h, err := rs.admin.Health(ctx); err == nil && h.Replica != "" {
			rs.seed = &h.Seed
		}
		out = append(out, rs)
	}
	return out
}

// restore puts a restarted replica's config and seed back.
func (rs replicaState) restore(ctx context.Context) error {
	if rs.config != nil {
		if err := rs.admin.SetConfig(ctx, *rs.config); err != nil {
			return err
		}
	}
	if rs.seed != nil {
		return rs.admin.Reset(ctx, rs.seed)
	}
	return nil
}
