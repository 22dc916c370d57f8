package workers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// An arm with --escape steps its load down once the service is stuck:
// the controller sets each step (load.Steps: from an instant, a lower
// rate) and sends it to every worker at once (POST pathStep); each steps
// its stripe there, on its own clock, so the stripes stay the one stepped
// schedule. A step must reach a worker before its pacer has paced a
// request due after the step's instant (one interval of its stripe, N
// intervals of the schedule, ahead): the controller sets each step
// StepLead ahead, the message's margin (StartMargin) beside it, and a
// worker that gets one too late refuses it; the arm then fails naming the
// worker, as its schedule is no longer the one the controller judges.

const pathStep = "/v1/step" // POST a StepAt: the schedule's rate from its instant on

// StepAt tells a worker to send Rate requests a second of the schedule
// (its stripe, its share) from At on, on its own clock.
type StepAt struct {
	Run  string    `json:"run"`
	Boot string    `json:"boot"`
	At   time.Time `json:"at"`
	Rate float64   `json:"rate"`
}

// StepLead is how long before its instant a step down from rps must be
// set with these workers: an interval of each worker's stripe, and the
// message's margin (experiment.StepLeader).
func (p *prepared) StepLead(rps float64) time.Duration {
	return time.Duration(float64(len(p.workers))*float64(time.Second)/rps) + StartMargin
}

func (w *Worker) step(rw http.ResponseWriter, r *http.Request) {
	var s StepAt
	if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
		http.Error(rw, "step: "+err.Error(), http.StatusBadRequest)
		return
	}
	j, err := w.current(s.Run, s.Boot)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusNotFound)
		return
	}
	// the pacer sets each request's instant one interval of the stripe
	// ahead, at the rate so far
	rate := float64(j.cfg.Rate)
	if st := j.steps.List(); len(st) > 0 {
		rate = st[len(st)-1].Rate
	}
	paced := time.Duration(float64(max(j.share.Of, 1)) * float64(time.Second) / rate)
	if late := time.Since(s.At.Add(-paced)); late > 0 {
		http.Error(rw, fmt.Sprintf("late: the step to %g req/s at %s came %s after this worker had paced a request due past it", s.Rate, s.At.Format(time.RFC3339Nano), late), http.StatusConflict)
		return
	}
	if err := j.steps.Step(s.At, s.Rate); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	w.Log.Info("step", "run", s.Run, "at", s.At, "rate", s.Rate)
	rw.WriteHeader(http.StatusNoContent)
}

// passSteps sends the arm's escape steps to every worker as they are set,
// until done is closed; a worker that refuses one, or does not answer,
// fails the arm (stepErr).
func (p *prepared) passSteps(done <-chan struct{}) {
	steps := p.job.Steps
	sent := 0
	for {
		added := steps.Added()
		list := steps.List()
		for ; sent < len(list); sent++ {
			st := list[sent]
			// a worker that has not answered a margin after the step's
			// instant hangs; one that gets it late says so itself
			ctx, cancel := context.WithDeadline(context.Background(), st.At.Add(StartMargin))
			err := each(len(p.workers), func(i int) error {
				w := p.workers[i]
				if err := p.c.post(ctx, w.url+pathStep, StepAt{Run: p.run, Boot: w.ready.Boot, At: st.At, Rate: st.Rate}, nil); err != nil {
					return fmt.Errorf("%s: the escape's step to %g req/s: %w", w, st.Rate, err)
				}
				return nil
			})
			cancel()
			if err != nil {
				p.stepFailed(err)
				p.stop() // the stripes are no longer one schedule: the arm is over
				return
			}
		}
		select {
		case <-added:
		case <-done:
			return
		}
	}
}

// stepFailed notes a step that did not reach every worker: the arm fails.
func (p *prepared) stepFailed(err error) {
	p.stepMu.Lock()
	defer p.stepMu.Unlock()
	if p.stepErr == nil {
		p.stepErr = err
	}
}

// stepError is the step that did not reach every worker; nil: none did not.
func (p *prepared) stepError() error {
	p.stepMu.Lock()
	defer p.stepMu.Unlock()
	return p.stepErr
}
