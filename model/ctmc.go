package model

import (
	"fmt"
	"math"
)

// Chain is Metafor's continuous-time Markov chain of one server and its
// retrying clients (mpi-sws-rse/metafor, ctmc_model/single_server): a
// state is the jobs in the server's queue, q in [0, Queue), and the
// clients' requests waiting to be retried, the orbit, o in [0, Orbit).
// Its rates, as Metafor states them (the version of its notebook's
// published outputs, commit da940e6):
//
//   - an arrival, λ: q+1; with q > 0 it also joins the orbit (o+1) at
//     Alpha·λ·tail(q), the chance it times out;
//   - a retry, o·r with r = R/((R+1)·timeout): q+1, the orbit o-1 with
//     chance 1-tail(q), kept with tail(q); nothing with a full queue;
//   - a drop from the orbit, o·d with d = 1/((R+1)·timeout): o-1;
//   - a completion, min(q, Threads)·μ: q-1.
//
// In a full queue an arrival or retry joins the orbit at
// Alpha·(λ+o·r)·tail(q). tail(q) is Metafor's Chebyshev bound on the
// chance a job behind q others outlives the timeout.
type Chain struct {
	Queue, Orbit int
	Arrival      float64 // λ, jobs a second
	Service      float64 // μ, a thread's jobs a second
	Threads      int
	Timeout      float64 // seconds
	Retries      int
	Alpha        float64 // Metafor's calibration factor (its default 0.25)
}

func (c Chain) check() error {
	if c.Queue < 2 || c.Orbit < 1 || c.Threads < 1 || !(c.Arrival > 0) || !(c.Service > 0) || !(c.Timeout > 0) || c.Retries < 0 {
		return fmt.Errorf("chain %+v: want queue >= 2, orbit, threads >= 1, arrival, service and timeout > 0", c)
	}
	return nil
}

func (c Chain) index(q, o int) int { return q*c.Orbit + o }

// tail is Metafor's bound on the chance that a job with q ahead of it
// outlives the timeout.
func (c Chain) tail(q int) float64 {
	if q == 0 {
		return 0
	}
	rate := float64(min(q, c.Threads)) * c.Service
	mean, sigma := float64(q)/rate, math.Sqrt(float64(q))/rate
	if c.Timeout-mean > sigma {
		k := sigma / (c.Timeout - mean)
		return k * k
	}
	return 1
}

// rates calls add for every transition out of state (q, o).
func (c Chain) rates(q, o int, add func(q, o int, rate float64)) {
	r := float64(c.Retries) / (float64(c.Retries+1) * c.Timeout)
	d := 1 / (float64(c.Retries+1) * c.Timeout)
	tail, fo := c.tail(q), float64(o)
	switch {
	case q == 0:
		add(1, o, c.Arrival)
		if o > 0 {
			add(0, o-1, fo*d)
			add(1, o-1, fo*r)
		}
	case q == c.Queue-1:
		add(q-1, o, float64(min(c.Queue, c.Threads))*c.Service)
		if o > 0 {
			add(q, o-1, fo*d)
		}
		if o < c.Orbit-1 {
			add(q, o+1, c.Alpha*(c.Arrival+fo*r)*tail)
		}
	default:
		if o < c.Orbit-1 {
			add(q+1, o+1, c.Alpha*c.Arrival*tail)
		}
		add(q+1, o, c.Arrival+fo*r*tail)
		if o > 0 {
			add(q+1, o-1, fo*r*(1-tail))
			add(q, o-1, fo*d)
		}
		add(q-1, o, float64(min(q, c.Threads))*c.Service)
	}
}

// Stationary is the chain's stationary distribution, by state index
// (q·Orbit + o): the solution of πQ = 0 with π(0, 0) = 1, normalized.
func (c Chain) Stationary() ([]float64, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	n := c.Queue * c.Orbit
	// the transposed generator, without state 0's row and column: column
	// diagonally dominant, so elimination needs no pivoting
	m := newBanded(n-1, c.Orbit+1)
	rhs := make([]float64, n-1)
	for q := range c.Queue {
		for o := range c.Orbit {
			from := c.index(q, o)
			c.rates(q, o, func(tq, to int, rate float64) {
				to_ := c.index(tq, to)
				if from > 0 {
					m.add(from-1, from-1, -rate)
				}
				switch {
				case from == 0:
					rhs[to_-1] -= rate // π(0) = 1 moved to the right
				case to_ > 0:
					m.add(to_-1, from-1, rate)
				}
			})
		}
	}
	x, err := m.solve(rhs)
	if err != nil {
		return nil, err
	}
	pi := append([]float64{1}, x...)
	sum := 0.0
	for _, p := range pi {
		sum += p
	}
	for i := range pi {
		pi[i] /= sum
	}
	return pi, nil
}

// MeanQueue is the mean queue length under distribution pi.
func (c Chain) MeanQueue(pi []float64) float64 {
	mean := 0.0
	for i, p := range pi {
		mean += float64(i/c.Orbit) * p
	}
	return mean
}

// HittingTimes are the expected times, from every state, to reach a
// state target holds: u = 0 on the target, Qu = -1 elsewhere.
func (c Chain) HittingTimes(target func(q, o int) bool) ([]float64, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	n := c.Queue * c.Orbit
	m := newBanded(n, c.Orbit+1)
	rhs := make([]float64, n)
	for q := range c.Queue {
		for o := range c.Orbit {
			i := c.index(q, o)
			if target(q, o) {
				m.add(i, i, 1)
				continue
			}
			rhs[i] = -1
			c.rates(q, o, func(tq, to int, rate float64) {
				m.add(i, c.index(tq, to), rate)
				m.add(i, i, -rate)
			})
		}
	}
	return m.solve(rhs)
}

// banded is a square matrix with bandwidth w on either side of its
// diagonal, solved by Gaussian elimination without pivoting (the chains'
// systems are diagonally dominant).
type banded struct {
	n, w int
	a    []float64 // row i, column j at i*(2w+1) + j-i+w
}

func newBanded(n, w int) *banded { return &banded{n: n, w: w, a: make([]float64, n*(2*w+1))} }

func (b *banded) at(i, j int) *float64 { return &b.a[i*(2*b.w+1)+j-i+b.w] }

func (b *banded) add(i, j int, v float64) {
	if j-i > b.w || i-j > b.w {
		panic(fmt.Sprintf("model: (%d, %d) outside the band %d", i, j, b.w))
	}
	*b.at(i, j) += v
}

func (b *banded) solve(rhs []float64) ([]float64, error) {
	x := append([]float64(nil), rhs...)
	for k := range b.n {
		p := *b.at(k, k)
		if p == 0 || math.IsNaN(p) {
			return nil, fmt.Errorf("model: singular system at row %d", k)
		}
		for i := k + 1; i <= min(b.n-1, k+b.w); i++ {
			f := *b.at(i, k) / p
			if f == 0 {
				continue
			}
			for j := k; j <= min(b.n-1, k+b.w); j++ {
				*b.at(i, j) -= f * *b.at(k, j)
			}
			x[i] -= f * x[k]
		}
	}
	for k := b.n - 1; k >= 0; k-- {
		s := x[k]
		for j := k + 1; j <= min(b.n-1, k+b.w); j++ {
			s -= *b.at(k, j) * x[j]
		}
		x[k] = s / *b.at(k, k)
	}
	return x, nil
}
