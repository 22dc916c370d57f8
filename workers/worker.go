package workers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// Worker serves the worker's API: one share at a time, prepared, started
// at its instant on this worker's clock, and its result kept until asked.
type Worker struct {
	Version string   // herdbench's: a controller of another version is refused
	Allow   []string // hosts beyond loopback it may send to (--allow-host)
	Token   string   // every call must carry it (guard); "": none, on loopback only
	Client  *http.Client
	Log     *slog.Logger

	refused atomic.Int64      // calls refused for want of the token
	tap     func(load.Record) // sees every record the worker files; nil: none (the exactness test's)

	boot   string
	mu     sync.Mutex
	job    *job
	vegeta *vegetaOut    // the file of -o vegeta, open across a run's arms; nil: none
	used   chan struct{} // a request came in: the idle timer starts again
}

// job is the share the worker holds.
type job struct {
	share   Share
	cfg     load.Config
	burst   triggers.Armed // its share of the burst, connections open; nil: none
	started bool
	cancel  context.CancelFunc
	done    chan struct{} // closed with res set
	res     Result
	binned  binned         // its bins, until the controller takes them
	vegeta  *vegetaRecords // its requests as vegeta's results (-o vegeta); nil: none
	cut     load.Cut       // the controller's cut, when the arm ends early
	steps   load.Steps     // the controller's escape steps (steps.go)
	tap     func(load.Record)
}

// NewWorker makes a worker of version v that may send beyond loopback only
// to the hosts in allow, and serves only calls that carry token ("": any
// call, for a worker on loopback). Its own calls to the reference worker
// carry it too.
func NewWorker(v string, allow []string, token string) *Worker {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &Worker{Version: v, Allow: allow, Token: token, Client: WithToken(&http.Client{Timeout: 5 * time.Second}, token),
		Log: slog.New(slog.DiscardHandler), boot: hex.EncodeToString(b), used: make(chan struct{}, 1)}
}

// Handler is the worker's API.
func (w *Worker) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+pathClock, func(rw http.ResponseWriter, _ *http.Request) {
		writeJSON(rw, http.StatusOK, clockReading{Now: time.Now()})
	})
	mux.HandleFunc("POST "+pathPrepare, w.prepare)
	mux.HandleFunc("POST "+pathStart, w.start)
	mux.HandleFunc("GET "+pathResult, w.result)
	mux.HandleFunc("POST /v1/stop", w.stop)
	mux.HandleFunc("GET "+pathBins, w.bins)
	mux.HandleFunc("POST "+pathCut, w.cut)
	mux.HandleFunc("POST "+pathStep, w.step)
	// a call refused for want of the token does not keep an idle worker
	// alive: the idle timer starts again only on the calls guard lets in
	return w.guard(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		select {
		case w.used <- struct{}{}:
		default:
		}
		mux.ServeHTTP(rw, r)
	}))
}

// Serve serves the worker's API on ln until ctx ends, or until idle passes
// with no request and no share running (0: never).
func (w *Worker) Serve(ctx context.Context, ln net.Listener, idle time.Duration) error {
	srv := &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var timeout <-chan time.Time
	for {
		if idle > 0 {
			timeout = time.After(idle)
		}
		select {
		case err := <-errc:
			return err
		case <-w.used:
			continue
		case <-timeout:
			if w.running() {
				continue
			}
		case <-ctx.Done():
		}
		w.mu.Lock()
		if w.job != nil && w.job.cancel != nil {
			w.job.cancel()
		}
		if err := w.closeVegeta(); err != nil {
			w.Log.Warn("vegeta results", "error", err)
		}
		w.mu.Unlock()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}

func (w *Worker) running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.job == nil || !w.job.started {
		return false
	}
	select {
	case <-w.job.done:
		return false
	default:
		return true
	}
}

func (w *Worker) prepare(rw http.ResponseWriter, r *http.Request) {
	var s Share
	if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
		http.Error(rw, "share: "+err.Error(), http.StatusBadRequest)
		return
	}
	if s.Version != w.Version {
		http.Error(rw, fmt.Sprintf("controller is herdbench %s, this worker %s: run the same version on both", s.Version, w.Version), http.StatusConflict)
		return
	}
	if err := w.check(s); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	cfg := s.Load
	cfg.Source = s.Space.Source(s.Seed)
	cfg.Classes = experiment.LoadClasses(s.Classes, s.Seed)
	if err := cfg.Validate(); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	if w.running() {
		http.Error(rw, "busy: a share is running", http.StatusConflict)
		return
	}
	ready := Ready{Boot: w.boot, Version: w.Version}
	if s.Index != 0 {
		var err error
		if ready.Offset, ready.Error, err = Offset(r.Context(), w.Client, s.Reference); err != nil {
			http.Error(rw, fmt.Sprintf("clock offset against worker 0 (%s): %v", s.Reference, err), http.StatusBadGateway)
			return
		}
	}
	vo, err := w.vegetaFor(s)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	j := &job{share: s, cfg: cfg, done: make(chan struct{})}
	if vo != nil {
		j.vegeta = &vegetaRecords{v: vo, arm: s.Vegeta.Arm, cut: &j.cut}
	}
	if s.Burst > 0 {
		armed, err := (&triggers.Burst{Clients: s.Burst}).Prepare(r.Context(), burstEnv(s, cfg))
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
			return
		}
		j.burst = armed
	}
	w.mu.Lock()
	if old := w.job; old != nil && !old.started && old.burst != nil {
		old.burst.Close() // replaced before it ran
	}
	w.job = j
	w.mu.Unlock()
	w.Log.Info("ready", "run", s.Run, "stripe", s.Index, "of", s.Of, "offset", ready.Offset, "error", ready.Error)
	writeJSON(rw, http.StatusOK, ready)
}

// check refuses a share that sends beyond loopback to a host this worker
// was not allowed, or to one the controller did not check: the load's
// endpoints, and a request class's vegeta targets, whose URLs are whole.
func (w *Worker) check(s Share) error {
	var errs []error
	urls := slices.Clone(s.Load.Targets)
	for _, c := range s.Classes {
		for _, v := range c.Vegeta {
			urls = append(urls, v.URL)
		}
	}
	for _, t := range urls {
		u, err := url.Parse(t)
		if err != nil {
			errs = append(errs, fmt.Errorf("target %q: %w", t, err))
			continue
		}
		h := u.Hostname()
		if targets.Loopback(h) || (targets.Allowed(h, w.Allow) && targets.Allowed(h, s.Hosts)) {
			continue
		}
		errs = append(errs, fmt.Errorf("target %s: host %s is not loopback and not allowed on this worker (accepted: loopback, or start the worker with --allow-host %s)", t, h, h))
	}
	return errors.Join(errs...)
}

func (w *Worker) current(run, boot string) (*job, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case boot != "" && boot != w.boot:
		return nil, fmt.Errorf("run %s was prepared by another process (boot %s, this one %s): the worker restarted", run, boot, w.boot)
	case w.job == nil || w.job.share.Run != run:
		return nil, fmt.Errorf("run %s is unknown to this worker (boot %s): it restarted, or the share was replaced", run, w.boot)
	}
	return w.job, nil
}

func (w *Worker) start(rw http.ResponseWriter, r *http.Request) {
	var s Start
	if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
		http.Error(rw, "start: "+err.Error(), http.StatusBadRequest)
		return
	}
	j, err := w.current(s.Run, s.Boot)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusNotFound)
		return
	}
	// the start is on this worker's clock; a message that arrives after it
	// is refused, never run late
	if late := time.Since(s.Start); late >= 0 {
		http.Error(rw, fmt.Sprintf("late: the start at %s was %s ago on this worker's clock when the message arrived", s.Start.Format(time.RFC3339Nano), late), http.StatusConflict)
		return
	}
	w.mu.Lock()
	if j.started {
		w.mu.Unlock()
		http.Error(rw, "run "+s.Run+" already started", http.StatusConflict)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	j.started, j.cancel = true, cancel
	if v := j.vegeta; v != nil {
		v.from, v.t, v.end = s.T.Add(-j.share.Before), s.T, s.T.Add(j.share.After)
	}
	j.binned.mu.Lock()
	j.binned.binner = experiment.NewBinner(s.Run, j.share.Index, j.share.Of, s.T, j.share.Before, j.share.After, j.share.Critical, j.share.Live)
	j.binned.binner.FileClasses(len(j.share.Classes))
	j.binned.mu.Unlock()
	j.tap = w.tap
	w.mu.Unlock()
	w.Log.Info("started", "run", s.Run, "stripe", j.share.Index, "of", j.share.Of, "rate", j.cfg.Rate, "start", s.Start, "t", s.T)
	go func() {
		j.run(ctx, s, func() { w.Log.Info("sending", "run", s.Run) })
		w.Log.Info("ended", "run", s.Run, "requests", j.res.State.Records, "error", j.res.Error)
	}()
	rw.WriteHeader(http.StatusAccepted)
}

// run sends the share's stripe from s.Start and files every request;
// sending is called once, at its first.
func (j *job) run(ctx context.Context, s Start, sending func()) {
	defer close(j.done)
	defer j.cancel()
	sh := j.share
	rec := experiment.NewRecorder(s.T, sh.Before, sh.After, sh.Critical)
	rec.FileClasses(len(sh.Classes))
	first, firstLag := ^uint64(0), time.Duration(0)
	cfg := j.cfg
	cfg.Start = s.Start
	cfg.Cut, cfg.Steps = &j.cut, &j.steps
	burst := make(chan error, 1)
	if j.burst != nil {
		go func() { burst <- j.release(ctx, s.T) }()
	} else {
		burst <- nil
	}
	var once sync.Once
	_, err := load.Attack(ctx, cfg, func(r load.Record) {
		once.Do(sending)
		if r.Outcome != load.Unsent && r.Seq < first {
			first, firstLag = r.Seq, r.Left.Sub(r.Intended)
		}
		rec.Add(r)
		if j.tap != nil {
			j.tap(r)
		}
		j.binned.binner.Add(r)
		j.vegeta.add(r)
	})
	err = errors.Join(err, <-burst, j.vegeta.flush())
	j.res.State, j.res.FirstLag = rec.State(), firstLag
	if err != nil {
		j.res.Error = err.Error()
	}
}

// release lets the share's burst go at t, on this worker's clock.
func (j *job) release(ctx context.Context, t time.Time) error {
	if !load.SleepUntil(ctx, t) {
		j.burst.Close()
		return nil // stopped before T: no burst
	}
	f, err := j.burst.Fire(ctx, triggers.Env{})
	if err != nil {
		return fmt.Errorf("burst: %w", err)
	}
	if b := f.Burst; b != nil {
		j.res.Burst = &BurstPart{Clients: b.Clients, OK: b.OK, Departures: b.Departures}
	}
	return nil
}

// burstEnv is what the share's burst sends: the load's requests, on the
// load's endpoints, for the hot keys in turn.
func burstEnv(s Share, c load.Config) triggers.Env {
	return triggers.Env{API: c.Targets, HotKeys: s.HotKeys, Request: func(ctx context.Context, base, key string) (*http.Request, error) {
		return c.Request.New(ctx, base, key, c.Header, c.Query)
	}}
}

func (w *Worker) result(rw http.ResponseWriter, r *http.Request) {
	j, err := w.current(r.URL.Query().Get("run"), r.URL.Query().Get("boot"))
	if err != nil {
		http.Error(rw, err.Error(), http.StatusNotFound)
		return
	}
	select {
	case <-j.done:
	case <-r.Context().Done():
		return
	}
	res := j.res
	res.Boot = w.boot
	writeJSON(rw, http.StatusOK, res)
}

// stop ends a running share early (the controller was interrupted); what
// it recorded stays for result.
func (w *Worker) stop(rw http.ResponseWriter, r *http.Request) {
	j, err := w.current(r.URL.Query().Get("run"), "")
	if err != nil {
		http.Error(rw, err.Error(), http.StatusNotFound)
		return
	}
	w.mu.Lock()
	if j.cancel != nil {
		j.cancel()
	}
	w.mu.Unlock()
	rw.WriteHeader(http.StatusNoContent)
}

func writeJSON(rw http.ResponseWriter, code int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(code)
	_ = json.NewEncoder(rw).Encode(v)
}
