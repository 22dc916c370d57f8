// Package grafana builds the bundled Grafana dashboards in Go, with
// Grafana's foundation SDK (github.com/grafana/grafana-foundation-sdk/go,
// pinned in go.mod), and writes them with their provisioning: Write puts
// dashboards/*.json (Grafana's classic JSON model, every query reading the
// $datasource variable) and provisioning/ (a Prometheus datasource with the
// fixed uid herdbench-prometheus, from the committed scrape config, and a
// file dashboard provider) under a directory. `herdbench dashboards` and
// `go generate ./grafana` call it; the repository's grafana/ is its
// output, which docker compose's observability profile mounts.
//
// Its tests hold the committed files to that output, decode every
// dashboard strictly with the SDK, check every query's metrics and labels
// against the families herdbench registers, and run every panel's PromQL
// against Prometheus scraping a live local testbed during a stampede sent
// by two workers, and a target file's run (classes, HAProxy) served with
// --metrics-addr; what Prometheus scraped of each arm's phases, verdict,
// loop and workers' shares is held to the same run's results file.
package grafana
