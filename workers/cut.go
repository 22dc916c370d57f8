package workers

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"time"
)

// When the arm is over early (its verdict, a stop condition), the
// controller sends the cut to every worker (POST pathCut): each cuts its
// schedule at that instant on its own clock; requests in flight are
// answered and binned. The controller follows the workers' bins every
// StreamEvery (bins.go).

// StreamEvery is how often the controller fetches the workers' bins.
const StreamEvery = 100 * time.Millisecond

const pathCut = "/v1/cut" // POST a CutAt: no request due after its instant is sent

// CutAt tells a worker to cut its schedule at At, on its own clock.
type CutAt struct {
	Run  string    `json:"run"`
	Boot string    `json:"boot"`
	At   time.Time `json:"at"`
}

func (w *Worker) cut(rw http.ResponseWriter, r *http.Request) {
	var c CutAt
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
		http.Error(rw, "cut: "+err.Error(), http.StatusBadRequest)
		return
	}
	j, err := w.current(c.Run, c.Boot)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusNotFound)
		return
	}
	j.cut.At(c.At)
	w.Log.Info("cut", "run", c.Run, "at", c.At, "late", time.Since(c.At))
	rw.WriteHeader(http.StatusNoContent)
}

// Heard is the instant every request of the arm that ended before it has
// been filed: the least of the workers' (experiment.Hearer).
func (p *prepared) Heard() time.Time {
	least := int64(math.MaxInt64)
	for i := range p.heard {
		least = min(least, p.heard[i].Load())
	}
	return time.Unix(0, least)
}

// passCut sends the arm's cut to every worker once it is made, until done
// is closed; best effort: a worker that misses it sends its schedule to
// the end, and its records past the cut are not filed.
func (p *prepared) passCut(done <-chan struct{}) {
	c := p.job.Cut
	select {
	case <-c.Done():
	case <-done:
		return
	}
	at, _ := c.When()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = each(len(p.workers), func(i int) error {
		w := p.workers[i]
		return p.c.post(ctx, w.url+pathCut, CutAt{Run: p.run, Boot: w.ready.Boot, At: at}, nil)
	})
}
