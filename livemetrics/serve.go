package livemetrics

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsServer serves the harness' metrics on a loopback address while a
// stampede runs.
type MetricsServer struct {
	*Metrics
	addr string
	srv  *http.Server
	done chan struct{}

	mu   sync.Mutex
	last time.Time     // when the last scrape began; zero: none yet
	gap  time.Duration // between the last two scrapes began
	next chan struct{} // closed once the next scrape to begin is answered
}

// ServeMetrics serves a new registry's Metrics at http://addr/metrics.
// addr must be a loopback address (see CheckLoopback); port 0 picks a free
// one, which Addr tells.
func ServeMetrics(addr string) (*MetricsServer, error) {
	if err := CheckLoopback(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve metrics: %w", err)
	}
	reg := prometheus.NewRegistry()
	mux := http.NewServeMux()
	s := &MetricsServer{addr: ln.Addr().String(), done: make(chan struct{}), next: make(chan struct{})}
	mux.Handle("GET /metrics", s.watched(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	s.Metrics = NewMetrics(reg)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Addr is the host:port the metrics are served on.
func (s *MetricsServer) Addr() string { return s.addr }

// watched is h, noting when each scrape begins and waking who waits for
// the next one once it is answered.
func (s *MetricsServer) watched(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		now := time.Now()
		if !s.last.IsZero() {
			s.gap = now.Sub(s.last)
		}
		s.last = now
		answered := s.next
		s.next = make(chan struct{})
		s.mu.Unlock()
		h.ServeHTTP(rw, r)
		close(answered)
	})
}

// lastScrapeWait bounds how long Close waits for a last scrape.
const lastScrapeWait = 5 * time.Second

// awaitScrape waits, when something scrapes the metrics, for a scrape
// that begins from now on to be answered, so that what the run set last
// (its last arm's verdict, loop and last requests) reaches the scraper:
// at most twice the gap seen between scrapes (2 s at least), and
// lastScrapeWait; not at all when nothing scraped.
func (s *MetricsServer) awaitScrape() {
	s.mu.Lock()
	next, last, gap := s.next, s.last, s.gap
	s.mu.Unlock()
	if last.IsZero() {
		return
	}
	wait := time.NewTimer(min(max(2*gap, 2*time.Second), lastScrapeWait))
	defer wait.Stop()
	select {
	case <-next:
	case <-wait.C:
	}
}

// Close stops serving, once a scraper has had the last figures
// (awaitScrape).
func (s *MetricsServer) Close() error {
	s.awaitScrape()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}

// CheckLoopback accepts host:port where host is a loopback address
// (127.0.0.0/8, ::1) or localhost and port a number: the harness exposes
// its figures to this machine only.
func CheckLoopback(addr string) error {
	accepted := "accepted: 127.0.0.1:PORT, [::1]:PORT or localhost:PORT; port 0 picks a free one"
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%v (%s)", err, accepted)
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || (port != "0" && p == 0) {
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535 (%s)", addr, port, accepted)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address (%s)", addr, accepted)
	}
	return nil
}
