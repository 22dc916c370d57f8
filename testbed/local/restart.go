package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
)

// Restart stops and starts part again in place, with the same arguments,
// ports and data (Postgres keeps its data; Redis keeps nothing, as without
// persistence), and returns when it serves again. The API replicas restart
// all at once, or one after another when rolling, each serving again before
// the next stops. It returns the names of the processes restarted.
func (tb *Testbed) Restart(ctx context.Context, part string, rolling bool) ([]string, error) {
	return tb.restartPart(ctx, part, rolling, stopGrace)
}

// Kill restarts part as Restart does, all at once, but stops it with
// SIGKILL: no graceful stop, as a crash or an OOM kill, so what a process
// held in memory is lost. It reads the replicas' run-time config and seed
// for 200 ms at most before the kill; a seed it could not read in that
// time (a replica whose pool is saturated) is the one it started with.
func (tb *Testbed) Kill(ctx context.Context, part string) ([]string, error) {
	return tb.restartPart(ctx, part, false, 0)
}

// restartPart restarts part's processes, each given grace to stop before
// SIGKILL.
func (tb *Testbed) restartPart(ctx context.Context, part string, rolling bool, grace time.Duration) ([]string, error) {
	tb.restartMu.Lock()
	defer tb.restartMu.Unlock()
	// Stop ends a restart under way rather than wait for it
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(tb.life, cancel)()
	var batch []*process
	tb.mu.Lock()
	if tb.stopping {
		tb.mu.Unlock()
		return nil, errors.New("the testbed is stopping")
	}
	for _, p := range tb.procs {
		if herd.InPart(part, p.name) {
			batch = append(batch, p)
		}
	}
	tb.mu.Unlock()
	if !herd.IsPart(part) {
		return nil, fmt.Errorf("restart: unknown part %q (accepted: %s, %s)", part, strings.Join(herd.Parts, ", "), herd.ReplicaForm)
	}
	if len(batch) == 0 || (part != herd.API && len(batch) < len(herd.PartNames(part))) { // a store this testbed does not run (Memcached beside Redis, Postgres beside MariaDB); a replica it does not run
		return nil, fmt.Errorf("restart: this testbed runs no %s (%s)", part, partFlag(part))
	}
	if !rolling {
		return names(batch), tb.restart(ctx, batch, grace)
	}
	for _, p := range batch {
		if err := tb.restart(ctx, []*process{p}, grace); err != nil {
			return nil, err
		}
	}
	return names(batch), nil
}

// replicaSpec is how a replica was started.
type replicaSpec struct {
	url, addr string
	opts      replica.Options
}

// live returns the replica's options with the run-time config and seed it
// has now, so a restart does not undo what an experiment set; what it
// cannot read within wait stays as the replica started.
func (r *replicaSpec) live(ctx context.Context, wait time.Duration) replica.Options {
	o := r.opts
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	c := admin.NewClient(r.url)
	if raw, err := c.Config(ctx); err == nil {
		if cfg, err := replica.ConfigOf(raw); err == nil && cfg.Validate() == nil {
			o.Config = cfg
		}
	}
	// /healthz answers 503 while a dependency is away, with the seed all the same
	if h, err := c.Health(ctx); err == nil && h.Replica != "" {
		o.Seed = h.Seed
	}
	return o
}

// restart stops every process of batch, each given grace before SIGKILL,
// then starts each again and waits until it serves. Replicas start with
// the config and seed they had.
func (tb *Testbed) restart(ctx context.Context, batch []*process, grace time.Duration) error {
	// a kill is not held up by replicas too busy to answer (their health
	// waits for a pooled connection): 200 ms, all at once
	wait := 2 * time.Second
	if grace <= 0 {
		wait = 200 * time.Millisecond
	}
	argvs := make([][]string, len(batch))
	var wg sync.WaitGroup
	for i, old := range batch {
		argvs[i] = old.argv
		if old.replica != nil {
			wg.Go(func() {
				argvs[i] = append([]string{tb.cfg.Binary}, ServeArgs(old.replica.addr, old.replica.live(ctx, wait))...)
			})
		}
	}
	wg.Wait()
	stopAll(batch, grace)
	for i, old := range batch {
		p, err := startProcess(old.name, tb.cfg.StateDir, old.log, old.stopSig, old.cred, argvs[i]...)
		if err != nil {
			return &PartError{Part: old.name, Log: old.log, Err: err}
		}
		p.ready, p.replica = old.ready, old.replica
		tb.mu.Lock()
		tb.procs[slices.Index(tb.procs, old)] = p
		tb.status.PIDs[p.name] = p.pid()
		tb.mu.Unlock()
		tb.watch(p)
		// recorded at once, so down finds it even if the rest fails
		if err := tb.writeState(true); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, tb.cfg.ReadyTimeout)
	defer cancel()
	for _, old := range batch {
		tb.mu.Lock()
		p := tb.procs[slices.IndexFunc(tb.procs, func(q *process) bool { return q.name == old.name })]
		tb.mu.Unlock()
		if err := tb.waitReady(ctx, p, p.ready); err != nil {
			return &PartError{Part: p.name, Log: p.log, Err: err}
		}
	}
	return nil
}

func names(ps []*process) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.name
	}
	return out
}

// RestartRequest is the body of the control API's POST /restart.
type RestartRequest struct {
	Part    string `json:"part"`
	Rolling bool   `json:"rolling"`
	Kill    bool   `json:"kill"` // SIGKILL, all at once (Kill)
}

// RestartResponse answers it.
type RestartResponse struct {
	Restarted []string `json:"restarted"`
	TookMS    int64    `json:"took_ms"`
}

// startControl serves the supervisor's control API on a free loopback
// port, so processes that did not start the testbed can restart its parts.
func (tb *Testbed) startControl() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("control api: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /restart", func(w http.ResponseWriter, r *http.Request) {
		var req RestartRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			http.Error(w, `restart: want {"part": "`+strings.Join(herd.Parts, "|")+`", "rolling": false}: `+err.Error(), http.StatusBadRequest)
			return
		}
		start := time.Now()
		restart := tb.Restart
		if req.Kill {
			restart = func(ctx context.Context, part string, _ bool) ([]string, error) { return tb.Kill(ctx, part) }
		}
		restarted, err := restart(r.Context(), req.Part, req.Rolling)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(RestartResponse{Restarted: restarted, TookMS: time.Since(start).Milliseconds()})
	})
	tb.control = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	tb.controlDone.Add(1)
	go func() {
		defer tb.controlDone.Done()
		_ = tb.control.Serve(ln)
	}()
	tb.status.Control = "http://" + ln.Addr().String()
	return nil
}

func (tb *Testbed) stopControl() {
	if tb.control != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tb.control.Shutdown(ctx)
		tb.controlDone.Wait()
	}
}

// Control is a client of a local testbed's control API, for processes
// that did not start the testbed: it restarts the testbed's parts through
// the supervisor that runs them.
type Control struct {
	URL string // Status.Control
}

// Restart asks the supervisor to restart part, all at once or rolling, and
// returns the processes restarted. A rolling restart takes as long as it
// takes: ctx bounds it.
func (c Control) Restart(ctx context.Context, part string, rolling bool) ([]string, error) {
	return c.post(ctx, RestartRequest{Part: part, Rolling: rolling})
}

// Kill asks the supervisor to restart part with SIGKILL (Testbed.Kill).
func (c Control) Kill(ctx context.Context, part string) ([]string, error) {
	return c.post(ctx, RestartRequest{Part: part, Kill: true})
}

func (c Control) post(ctx context.Context, r RestartRequest) ([]string, error) {
	part := r.Part
	if c.URL == "" {
		return nil, errors.New("restart: the testbed has no control API (its supervisor predates it: testbed down, then up)")
	}
	body, _ := json.Marshal(r)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/restart", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("restart %s: %w", part, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("restart %s: %s: %s", part, resp.Status, strings.TrimSpace(string(b)))
	}
	var res RestartResponse
	return res.Restarted, json.Unmarshal(b, &res)
}

// partFlag is the testbed up flag that runs part, for the error of a
// restart of a part this testbed does not run.
func partFlag(part string) string {
	k, ok := store.Named(part)
	switch {
	case !ok:
		return "it runs with testbed up --cache " + part
	case k.Name() == store.Names(store.Cache)[0]:
		return "every testbed runs it"
	case store.IsDefault(k):
		return "it runs without --" + string(k.Role()) + " " + strings.Join(store.Names(k.Role())[1:], ", --"+string(k.Role())+" ")
	}
	return "it runs with testbed up --" + string(k.Role()) + " " + part
}
