package livemetrics

import "github.com/herdbench/herdbench/experiment"

// familyWorkerRequests is each worker's share of a distributed arm: the
// requests of the bins the controller merged from it, the same requests
// herdbench_requests_total counts merged.
var familyWorkerRequests = Family{"herdbench_worker_requests_total", "counter",
	"Requests each worker of a distributed arm (--workers) filed, as the controller merged its bins (every outcome; the same requests herdbench_requests_total counts, merged), by arm, worker (its index in --workers) and phase; none without workers.",
	[]string{"arm", "worker", "phase"}}

// workerShare counts a worker's summarised requests as its own, when the
// summary names one.
func (m *Metrics) workerShare(arm, phase string, sum experiment.Summary) {
	if sum.Worker == "" {
		return
	}
	var n int64
	for _, c := range sum.Outcomes {
		n += c
	}
	m.workers.WithLabelValues(arm, sum.Worker, phase).Add(float64(n))
}
