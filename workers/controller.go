package workers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/triggers"
)

// StartMargin is how long before the schedule's start the controller tells
// the workers when it is: their start messages must arrive within it, or
// they refuse the start (never start late).
const StartMargin = 300 * time.Millisecond

// resultSlack is how long past the arm's worst end the controller waits for
// a worker's result before it calls the worker lost.
const resultSlack = 15 * time.Second

// errOtherLost ends the result fetches of the workers still running when
// one is lost.
var errOtherLost = errors.New("another worker was lost")

// Controller sends each arm's load from its workers: it implements
// experiment.Generator.
type Controller struct {
	URLs    []string // the workers, worker 0 first
	Version string   // herdbench's; every worker must run the same
	Hosts   []string // the checked target's hosts beyond loopback
	Client  *http.Client
	// VegetaFile: each worker writes its requests as vegeta's results to
	// VegetaFile(VegetaFile, its index), under its working directory
	// (-o vegeta); "": none
	VegetaFile string

	mu   sync.Mutex
	arms int
	run  string
}

// NewController sends from the workers at urls, every call carrying
// token ("": none, for workers that take any call on loopback).
func NewController(urls []string, version string, hosts []string, token string) *Controller {
	return &Controller{URLs: urls, Version: version, Hosts: hosts, Client: WithToken(&http.Client{}, token),
		run: strconv.FormatInt(time.Now().UnixNano(), 36)}
}

// worker is one worker's part of a prepared arm.
type worker struct {
	index int
	url   string
	ready Ready
}

func (w worker) String() string { return fmt.Sprintf("worker %d (%s)", w.index, w.url) }

// prepared is an arm ready on every worker.
type prepared struct {
	c       *Controller
	run     string
	job     experiment.Job
	workers []worker
	heard   []atomic.Int64 // each worker's records are filed up to this instant (Unix ns)
	stepMu  sync.Mutex
	stepErr error // an escape step that did not reach every worker
}

// Prepare gives every worker its stripe of job and waits until each is
// ready; a worker that refuses or does not answer fails the arm, named.
func (c *Controller) Prepare(ctx context.Context, job experiment.Job) (experiment.Prepared, error) {
	c.mu.Lock()
	c.arms++
	arm := c.arms
	run := fmt.Sprintf("%s-%d-%s", c.run, arm, job.Arm) // the arm's name, for the workers' logs
	c.mu.Unlock()
	n := len(c.URLs)
	p := &prepared{c: c, run: run, job: job, workers: make([]worker, n), heard: make([]atomic.Int64, n)}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := each(n, func(i int) error {
		w := worker{index: i, url: c.URLs[i]}
		cfg := job.Load
		cfg.Stripe, cfg.Stripes = i, n
		// each worker draws its own keys and its clients their own jitter
		cfg.Seed = job.Load.Seed + uint64(i)
		cfg.Clients = share(max(job.Load.Clients, 1), n, i)
		if job.Load.MaxWorkers > 0 {
			cfg.MaxWorkers = uint64(share(int(job.Load.MaxWorkers), n, i))
		}
		s := Share{Run: run, Version: c.Version, Index: i, Of: n, Reference: c.URLs[0], Load: cfg, Space: job.Space, Classes: job.Classes,
			Seed: job.Seed + uint64(i), Before: job.Before, After: job.After, Critical: job.Critical, Live: job.Live, Hosts: c.Hosts}
		if c.VegetaFile != "" {
			s.Vegeta = &VegetaOut{File: c.VegetaFile, Series: c.run, Arm: job.Arm, First: arm == 1}
		}
		if job.Burst > 0 { // a share each, the remainder to the first; none when fewer clients than workers
			s.Burst, s.HotKeys = job.Burst/n, job.HotKeys
			if i < job.Burst%n {
				s.Burst++
			}
		}
		if err := c.post(ctx, w.url+pathPrepare, s, &w.ready); err != nil {
			return fmt.Errorf("%s: not ready (is `herdbench worker --listen` running there, and reachable from here?): %w", w, err)
		}
		p.workers[i] = w
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// share is part i of total split over n, the remainder to the first.
func share(total, n, i int) int {
	s := total / n
	if i < total%n {
		s++
	}
	return max(s, 1)
}

func (p *prepared) Lead() time.Duration { return StartMargin }

// SendsBursts: each worker releases its share of the burst trigger's
// clients at T.
func (*Controller) SendsBursts() bool { return true }

// Run starts every worker at start on its own clock, merges their bins
// into rec as they come in, passes the arm's cut on, and waits for their
// results; with --escape, it passes each step on (steps.go). A worker
// that refuses the start or a step, dies or restarts fails the arm, named; when ctx ends, the workers are stopped and what they
// recorded is filed.
func (p *prepared) Run(ctx context.Context, start, t time.Time, rec *experiment.Recorder, _ func(load.Record)) (*result.Workers, error) {
	for i := range p.heard {
		p.heard[i].Store(start.UnixNano())
	}
	err := each(len(p.workers), func(i int) error {
		w := p.workers[i]
		if err := p.c.post(ctx, w.url+pathStart, Start{Run: p.run, Boot: w.ready.Boot, Start: start, T: t}, nil); err != nil {
			return fmt.Errorf("%s: refused the start: %w", w, err)
		}
		return nil
	})
	if err != nil {
		p.stop()
		return nil, err
	}
	stopped := context.AfterFunc(ctx, p.stop)
	defer stopped()
	ended := make(chan struct{})
	var cutting sync.WaitGroup
	cutting.Go(func() { p.passCut(ended) })
	if p.job.Steps != nil {
		cutting.Go(func() { p.passSteps(ended) })
	}
	defer cutting.Wait()
	defer close(ended)
	pastCut := make([]atomic.Int64, len(p.workers))
	filed := make([]atomic.Int64, len(p.workers))
	follow := func(ctx context.Context, i int) (int64, error) {
		f := &binFollower{p: p, i: i, rec: rec, t: t, seen: map[[2]int64]bool{}, filed: filed, pastCut: &pastCut[i]}
		return p.followBins(ctx, f)
	}
	results, streamed, err := p.gather(ctx, start, follow)
	if err := errors.Join(p.stepError(), err); err != nil {
		return nil, err
	}
	for i, res := range results {
		if streamed[i] != res.State.Records {
			return nil, fmt.Errorf("%s: sent %d requests in its bins, and its recorder filed %d: each must be filed once", p.workers[i], streamed[i], res.State.Records)
		}
	}
	if err := p.checkBins(rec, results, pastCut); err != nil {
		return nil, err
	}
	ws, err := p.merge(results)
	if err == nil {
		for i := range ws.Each {
			ws.Each[i].PastCut = pastCut[i].Load()
		}
	}
	return ws, err
}

// gather follows every worker's bins (follow, by its index)
// until its share ends, then takes its result. The results are taken
// also once ctx ends (the workers stop and answer with what they
// recorded); one worker lost ends the others.
func (p *prepared) gather(ctx context.Context, start time.Time, follow func(ctx context.Context, i int) (int64, error)) ([]Result, []int64, error) {
	// the worst end: the window, the late grace, and a request's whole timeout
	c := p.job.Load
	worst := start.Add(c.Duration + load.LateGrace + time.Duration(c.Retry.Retries+1)*c.Timeout + resultSlack)
	results := make([]Result, len(p.workers))
	streamed := make([]int64, len(p.workers))
	dctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), worst)
	defer cancel()
	rctx, lost := context.WithCancelCause(dctx)
	defer lost(nil)
	err := each(len(p.workers), func(i int) error {
		w := p.workers[i]
		n, err := follow(rctx, i)
		streamed[i] = n
		if err == nil {
			q := url.Values{"run": {p.run}, "boot": {w.ready.Boot}}
			err = p.c.get(rctx, w.url+pathResult+"?"+q.Encode(), &results[i])
		}
		switch {
		case errors.Is(context.Cause(rctx), errOtherLost):
			return nil // the worker lost first is named
		case isBadBin(err):
			err = fmt.Errorf("%s: %w", w, err)
		case dctx.Err() != nil:
			err = fmt.Errorf("%s: no result %s after the arm's end: it hangs", w, resultSlack)
		case err != nil:
			err = fmt.Errorf("%s: lost mid-arm: %w", w, err)
		case results[i].Error != "" && ctx.Err() == nil:
			err = fmt.Errorf("%s: %s", w, results[i].Error)
		default:
			return nil
		}
		lost(errOtherLost)
		p.stop()
		return err
	})
	return results, streamed, err
}

// merge sums up how the workers kept the herd: each one's own figures
// from its recorder, their start skew and their burst.
func (p *prepared) merge(results []Result) (*result.Workers, error) {
	ws := &result.Workers{Count: len(p.workers)}
	dev := make([]time.Duration, len(p.workers))
	for i, res := range results {
		w := p.workers[i]
		own := experiment.NewRecorder(res.State.T, res.State.Before, res.State.After, res.State.Critical != nil)
		own.FileClasses(len(res.State.Classes))
		if err := own.Merge(res.State); err != nil {
			return nil, fmt.Errorf("%s: %w", w, err)
		}
		ws.Each = append(ws.Each, result.Worker{Index: i, URL: w.url, ClockOffsetMS: msOf(w.ready.Offset), ClockErrorMS: msOf(w.ready.Error),
			FirstLagMS: msOf(res.FirstLag), Load: own.Generator(p.job.Before + p.job.After)})
		// how far from the schedule it began, on worker 0's clock
		dev[i] = res.FirstLag - w.ready.Offset
	}
	var bursts []*triggers.BurstResult
	for i, res := range results {
		if b := res.Burst; b != nil {
			bursts = append(bursts, &triggers.BurstResult{Clients: b.Clients, OK: b.OK, Departures: b.Departures})
			ws.Each[i].Burst = b.Clients
		}
	}
	if len(bursts) > 0 {
		ws.Burst = triggers.MergeBursts(bursts)
	}
	lo := slices.Min(dev)
	for i := range dev {
		dev[i] -= lo
	}
	slices.Sort(dev)
	ws.StartSkewMaxMS = msOf(dev[len(dev)-1])
	ws.StartSkewP99MS = msOf(dev[int(math.Ceil(0.99*float64(len(dev))))-1])
	return ws, nil
}

// checkBins holds rec, merged from the workers' bins, to their own
// recorders merged: the same counts, rows and histograms, unless the cut
// reached a worker late (its bins past it were left out, its recorder
// filed them).
func (p *prepared) checkBins(rec *experiment.Recorder, results []Result, pastCut []atomic.Int64) error {
	for i := range pastCut {
		if pastCut[i].Load() > 0 {
			return nil
		}
	}
	if len(results) == 0 {
		return nil
	}
	st := results[0].State
	whole := experiment.NewRecorder(st.T, st.Before, st.After, st.Critical != nil)
	whole.FileClasses(len(st.Classes))
	for i, res := range results {
		if err := whole.Merge(res.State); err != nil {
			return fmt.Errorf("%s: its recorder: %w", p.workers[i], err)
		}
	}
	if err := rec.SameCounts(whole); err != nil {
		return fmt.Errorf("workers: %w", err)
	}
	return nil
}

// stop asks every worker to end its share early; best effort.
func (p *prepared) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = each(len(p.workers), func(i int) error {
		return p.c.post(ctx, p.workers[i].url+"/v1/stop?run="+url.QueryEscape(p.run), nil, nil)
	})
}

func msOf(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }

// each runs f for 0..n-1 at once and joins their errors.
func each(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *Controller) post(ctx context.Context, u string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(req, out)
}

func (c *Controller) get(ctx context.Context, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	return c.do(req, out)
}

func (c *Controller) do(req *http.Request, out any) error {
	resp, err := c.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
