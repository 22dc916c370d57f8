package livemetrics

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/load"
)

// LatencyBuckets are the bounds of herdbench_request_duration_seconds:
// fine around the default 1 s client timeout, where a herd's p99 sits.
var LatencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .15, .2, .25, .3, .4, .5, .6, .75, 1, 1.5, 2, 3, 5, 10, 30}

// Metrics are the harness' own live Prometheus metrics: what the clients
// see while a stampede runs, labelled by arm and phase only (never a URL or
// a key). Latency is measured from each request's intended send time, as
// in the results. Metrics implements experiment.Observer.
type Metrics struct {
	requests *prometheus.CounterVec   // arm, phase, outcome
	latency  *prometheus.HistogramVec // arm, phase
	attempts *prometheus.CounterVec   // arm, phase
	trigger  *prometheus.GaugeVec     // arm
	running  *prometheus.GaugeVec     // arm

	classRequests *prometheus.CounterVec   // arm, phase, class, outcome
	classLatency  *prometheus.HistogramVec // arm, phase, class
	classHerd     *prometheus.GaugeVec     // arm, class
	lb            *lbMetrics
	judged        *judgedMetrics
	workers       *prometheus.CounterVec // arm, worker, phase

	mu      sync.Mutex
	series  map[[2]string]*phaseSeries // by arm and phase
	classes map[string][]string        // each arm's classes' names, by Record.Class
}

// phaseSeries are one arm and phase's children, looked up once.
type phaseSeries struct {
	requests map[load.Outcome]prometheus.Counter
	latency  prometheus.Observer
	attempts prometheus.Counter
}

var (
	_ experiment.Observer      = (*Metrics)(nil)
	_ experiment.ClassObserver = (*Metrics)(nil)
	_ experiment.BinObserver   = (*Metrics)(nil)
)

// Family is one metric family the harness exports: its name, its type
// and its labels. Families lists them; NewMetrics registers exactly
// these, so a dashboard can be checked against them.
type Family struct {
	Name   string
	Type   string // counter, gauge or histogram
	Help   string
	Labels []string
}

// The harness' families.
var (
	familyRequests = Family{"herdbench_requests_total", "counter",
		"Requests the harness' clients finished, by arm, phase (warmup, before, after: where the intended send time falls) and outcome (ok, timeout, conn, 5xx, shed, other, throttled).",
		[]string{"arm", "phase", "outcome"}}
	familyLatency = Family{"herdbench_request_duration_seconds", "histogram",
		"Request latency from the intended send time to the end of the last attempt (an open model: a stalled generator is counted), by arm and phase.",
		[]string{"arm", "phase"}}
	familyAttempts = Family{"herdbench_attempts_total", "counter",
		"Attempts the clients sent, the first and every retry, by arm and phase of their request; attempts / requests is the retry amplification.",
		[]string{"arm", "phase"}}
	familyTrigger = Family{"herdbench_trigger_timestamp_seconds", "gauge",
		"Unix time at which the arm's trigger fired (T), for dashboards to mark.",
		[]string{"arm"}}
	familyClassRequests = Family{"herdbench_class_requests_total", "counter",
		"Requests of a target's request class the clients finished, by arm, phase, class (its name in the target file) and outcome; none when the target has no classes.",
		[]string{"arm", "phase", "class", "outcome"}}
	familyClassLatency = Family{"herdbench_class_request_duration_seconds", "histogram",
		"Latency of a request class's requests from their intended send time, by arm, phase and class; none when the target has no classes.",
		[]string{"arm", "phase", "class"}}
	familyClassHerd = Family{"herdbench_class_herd", "gauge",
		"1 for the herd's request class of the arm, 0 for a bystander: joins a class's series to its role; none when the target has no classes.",
		[]string{"arm", "class"}}
	familyRunning = Family{"herdbench_arm_running", "gauge",
		"1 while the arm's load runs (through its drain), 0 once it ended: joins the testbed's figures, which know no arm, to the arm that caused them.",
		[]string{"arm"}}
)

// counter, gauge and histogram are f's collector, not yet registered.
func (f Family) counter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: f.Name, Help: f.Help}, f.Labels)
}
func (f Family) gauge() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: f.Name, Help: f.Help}, f.Labels)
}
func (f Family) histogram() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: f.Name, Help: f.Help, Buckets: LatencyBuckets}, f.Labels)
}

// Families are the metric families NewMetrics registers.
func Families() []Family {
	return []Family{familyRequests, familyLatency, familyAttempts, familyTrigger, familyRunning,
		familyClassRequests, familyClassLatency, familyClassHerd,
		familyLBRequests, familyLBSends, familyLBRetries, familyLBRedispatches, familyLBQueue,
		familyPhase, familyVerdict, familyLoop, familyEscapeStep, familyEscape, familyWorkerRequests}
}

// NewMetrics registers the harness' metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests:      familyRequests.counter(),
		latency:       familyLatency.histogram(),
		attempts:      familyAttempts.counter(),
		trigger:       familyTrigger.gauge(),
		running:       familyRunning.gauge(),
		classRequests: familyClassRequests.counter(),
		classLatency:  familyClassLatency.histogram(),
		classHerd:     familyClassHerd.gauge(),
		lb:            newLBMetrics(),
		judged:        newJudgedMetrics(),
		workers:       familyWorkerRequests.counter(),
		series:        map[[2]string]*phaseSeries{},
		classes:       map[string][]string{},
	}
	reg.MustRegister(m.requests, m.latency, m.attempts, m.trigger, m.running, m.classRequests, m.classLatency, m.classHerd)
	reg.MustRegister(m.lb.collectors()...)
	reg.MustRegister(m.judged.collectors()...)
	reg.MustRegister(m.workers)
	return m
}

// Arm marks an arm as running or ended.
func (m *Metrics) Arm(name string, running bool) {
	v := 0.0
	if running {
		v = 1
	}
	m.running.WithLabelValues(name).Set(v)
}

// Request counts one finished request.
func (m *Metrics) Request(arm, phase string, r load.Record) {
	s := m.seriesOf(arm, phase)
	c, ok := s.requests[r.Outcome]
	if !ok { // an outcome load does not list
		c = m.requests.WithLabelValues(arm, phase, r.Outcome.String())
	}
	c.Inc()
	s.latency.Observe(r.Latency.Seconds())
	s.attempts.Add(float64(r.Attempts))
	m.mu.Lock()
	names := m.classes[arm]
	m.mu.Unlock()
	if r.Class >= 0 && r.Class < len(names) {
		m.classRequests.WithLabelValues(arm, phase, names[r.Class], r.Outcome.String()).Inc()
		m.classLatency.WithLabelValues(arm, phase, names[r.Class]).Observe(r.Latency.Seconds())
	}
}

// Requests counts finished requests summarised, a worker's bin's
// (experiment.BinObserver): each latency at its HdrHistogram bucket's value.
func (m *Metrics) Requests(arm, phase string, sum experiment.Summary) {
	s := m.seriesOf(arm, phase)
	for o, n := range sum.Outcomes {
		if n == 0 {
			continue
		}
		c, ok := s.requests[load.Outcome(o)]
		if !ok {
			c = m.requests.WithLabelValues(arm, phase, load.Outcome(o).String())
		}
		c.Add(float64(n))
	}
	sum.Latencies(func(d time.Duration, n int64) {
		for range n {
			s.latency.Observe(d.Seconds())
		}
	})
	s.attempts.Add(float64(sum.Attempts))
	m.workerShare(arm, phase, sum)
}

// seriesOf is the arm's and phase's series, made on first use.
func (m *Metrics) seriesOf(arm, phase string) *phaseSeries {
	k := [2]string{arm, phase}
	m.mu.Lock()
	s := m.series[k]
	if s == nil {
		// every outcome from the first request on, so a rate of drops
		// reads 0 rather than nothing
		s = &phaseSeries{requests: map[load.Outcome]prometheus.Counter{},
			latency: m.latency.WithLabelValues(arm, phase), attempts: m.attempts.WithLabelValues(arm, phase)}
		for _, o := range load.Outcomes {
			s.requests[o] = m.requests.WithLabelValues(arm, phase, o.String())
		}
		m.series[k] = s
	}
	m.mu.Unlock()
	return s
}

// Classes records an arm's request classes: from now on its requests are
// counted by class too, and each class's role is exported. Every
// outcome's series of each class and phase starts at zero, so a class's
// drop rate reads 0 rather than nothing once it has requests.
func (m *Metrics) Classes(arm string, names []string, herd int) {
	for i, name := range names {
		v := 0.0
		if i == herd {
			v = 1
		}
		m.classHerd.WithLabelValues(arm, name).Set(v)
		for _, phase := range experiment.Phases {
			for _, o := range load.Outcomes {
				m.classRequests.WithLabelValues(arm, phase, name, o.String())
			}
		}
	}
	m.mu.Lock()
	m.classes[arm] = slices.Clone(names)
	m.mu.Unlock()
}

// Trigger records T for the arm.
func (m *Metrics) Trigger(arm string, at time.Time) {
	m.trigger.WithLabelValues(arm).Set(unix(at))
}
