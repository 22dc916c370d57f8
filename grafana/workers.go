package grafana

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// workerPanels are the workers of a distributed arm (--workers): the
// other panels show their figures merged; these show each worker's share
// of them, from the bins the controller merged. A run without workers has
// no worker series: the panels show no data.
func workerPanels(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	perWorker := `sum by (arm, worker) (rate(herdbench_worker_requests_total{arm=~"$arm"}[$__rate_interval]))`
	return b.
		WithPanel(graph("Requests/s by worker",
			"Requests each worker of a distributed arm (--workers) filed a second, as the controller merged its bins, every outcome: the merged figures of the other panels are their sum. No data without workers.",
			"reqps", 12,
			q(perWorker, "worker {{worker}} ({{arm}})"))).
		WithPanel(graph("Each worker's share",
			"Each worker's requests over the merged requests (herdbench_requests_total): with the load striped over N workers, each near 1/N; one falling behind shows here first. No data without workers.",
			"percentunit", 12,
			q(perWorker+` / on(arm) group_left() sum by (arm) (rate(herdbench_requests_total{arm=~"$arm"}[$__rate_interval]))`, "worker {{worker}} ({{arm}})")).
			Min(0))
}
