// Package grafana is the home of the Grafana provisioning (provisioning/: a
// Prometheus datasource with the fixed uid herdbench-prometheus and a file
// dashboard provider) and the dashboards (dashboards/, Grafana's classic
// JSON with a $datasource variable) that docker compose's observability
// profile loads. It holds no code herdbench runs: its tests parse every
// panel's PromQL and run it against Prometheus scraping a live local
// testbed during a stampede.
package grafana
