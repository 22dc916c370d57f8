package load

import (
	"errors"
	"fmt"
	"sync"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Class is one kind of request in a mix of traffic: its share of the
// rate, how a key becomes its request, and where its keys come from. A
// load of several classes sends each hit as one of them, in proportion
// to their weights, and each Record says which (Record.Class).
type Class struct {
	Name    string
	Weight  int     // its share of the rate: Weight over the classes' total
	Request Request // its method, path, query, headers and body; {key} templated
	// Source draws its keys; nil: the Config's (its Source, or Zipf over
	// Keys). A class whose request has no {key} draws none.
	Source KeySource `json:"-"`
	// Targets are the class's requests as vegeta's targets (a file in its
	// HTTP format), each hit the next in turn, instead of Request; their
	// URLs are whole, so the endpoints do not apply to them
	Targets []vegeta.Target `json:",omitempty"`
}

// classHeader carries a hit's class from the targeter to the herd's
// RoundTrip, which takes it off before the request leaves: the service
// never sees it.
const classHeader = "X-Herdbench-Class"

// validateClasses reports every problem of cs at once.
func validateClasses(cs []Class) error {
	var errs []error
	total := 0
	seen := map[string]bool{}
	for i, c := range cs {
		if c.Name == "" || seen[c.Name] {
			errs = append(errs, fmt.Errorf("classes[%d]: name %q (accepted: a name of its own, once)", i, c.Name))
		}
		seen[c.Name] = true
		if c.Weight < 1 {
			errs = append(errs, fmt.Errorf("classes[%d] %s: weight %d (accepted: 1 or more)", i, c.Name, c.Weight))
		}
		total += c.Weight
	}
	if len(cs) > 0 && total < 1 {
		errs = append(errs, errors.New("classes: the weights add up to nothing (accepted: a positive total)"))
	}
	return errors.Join(errs...)
}

// mixer picks each hit's class by smooth weighted round-robin (nginx's
// upstream balancing): in every run of total hits each class has exactly
// its weight of them, spread out rather than in blocks, so a class's share
// of any 100 ms row of the timeline is its share of the rate, not only on
// average. No randomness: the same mix in every arm.
//
// A generator that sends a stripe of the schedule (a worker: every
// stripes-th request from the stripe-th) takes the stripe-th of every
// stripes picks, so the stripes' mixes together are the one sequence one
// generator picks, and each class's count over the workers is one
// machine's. Each hit then costs stripes picks of the weights.
type mixer struct {
	mu              sync.Mutex
	weights         []int
	current         []int
	total           int
	stripe, stripes int
}

// newMixer mixes cs for stripe of stripes (0 of 1: the whole schedule).
func newMixer(cs []Class, stripe, stripes int) *mixer {
	m := &mixer{weights: make([]int, len(cs)), current: make([]int, len(cs)), stripe: stripe, stripes: max(stripes, 1)}
	for i, c := range cs {
		m.weights[i] = c.Weight
		m.total += c.Weight
	}
	return m
}

// next is the class of the next hit of the stripe.
func (m *mixer) next() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	mine := 0
	for i := range m.stripes {
		if c := m.pick(); i == m.stripe {
			mine = c
		}
	}
	return mine
}

// pick is the class of the schedule's next hit; m.mu is held.
func (m *mixer) pick() int {
	best := 0
	for i, w := range m.weights {
		m.current[i] += w
		if m.current[i] > m.current[best] {
			best = i
		}
	}
	m.current[best] -= m.total
	return best
}
