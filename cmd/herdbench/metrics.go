package main

import (
	"fmt"
	"io"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/livemetrics"
)

// liveMetrics serves the harness' live metrics while a stampede runs: at
// addr (--metrics-addr) when given, else where the testbed's Prometheus
// scrapes the harness, if it runs one. It returns nil when neither applies.
// A busy default address is a warning, not a failure: the user did not ask.
func liveMetrics(stderr io.Writer, addr string, st plan.Opened) (experiment.Observer, func(), error) {
	explicit := addr != ""
	if !explicit {
		addr = st.Harness
	}
	if addr == "" {
		return nil, func() {}, nil
	}
	srv, err := livemetrics.ServeMetrics(addr)
	switch {
	case err != nil && explicit:
		return nil, nil, fmt.Errorf("--metrics-addr: %w", err)
	case err != nil:
		fmt.Fprintf(stderr, "warning: live metrics not served: %v (pass --metrics-addr to choose another address)\n", err)
		return nil, func() {}, nil
	}
	if st.Prometheus != "" && srv.Addr() == st.Harness {
		fmt.Fprintf(stderr, "live metrics at http://%s/metrics, scraped by %s\n", srv.Addr(), st.Prometheus)
	} else {
		fmt.Fprintf(stderr, "live metrics at http://%s/metrics\n", srv.Addr())
	}
	return srv, func() { _ = srv.Close() }, nil
}

// withObserver is obs and more as one observer; obs may be nil.
func withObserver(obs experiment.Observer, more experiment.Observer) experiment.Observer {
	if obs == nil {
		return more
	}
	return experiment.Observers{obs, more}
}
