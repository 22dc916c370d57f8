package targets

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// A load balancer in front of the service is part of the herd: it
// retries, redispatches, marks servers down and brings them back. A
// target file's haproxy: names HAProxy's stats page, read at each arm's
// start and end: what reached each server, retries and redispatches
// included, by HAProxy's own counters.

// HAProxySpec is HAProxy in front of the service: its stats page (CSV)
// and the backend whose servers the load reaches.
type HAProxySpec struct {
	Stats   string `yaml:"stats"`   // the stats page, such as http://127.0.0.1:8404/stats; ;csv is added
	Backend string `yaml:"backend"` // the backend the load's frontend sends to
}

// LBStats are HAProxy's counters at one instant: the backend's and its
// servers'.
type LBStats struct {
	Backend LBRow
	Servers []LBRow // in the stats page's order
}

// LBRow is one proxy or server line of HAProxy's stats, the counters
// herdbench reads (HAProxy's management guide, "9.1. CSV format").
type LBRow struct {
	Name         string
	Requests     int64  // req_tot: HTTP requests it received (a backend: from its frontends, once each)
	Sessions     int64  // stot: connections (HTTP: requests) sent to it, retries included
	Retries      int64  // wretr: retries of a connection to a server
	Redispatches int64  // wredis: requests sent to another server after a failure
	Responses5xx int64  // hrsp_5xx
	ConnErrors   int64  // econ: connections to the server that failed
	Downs        int64  // chkdown: transitions from up to down
	Status       string // UP, DOWN, MAINT, ...
}

func (c *checker) haproxy() {
	h := c.f.HAProxy
	if h == nil {
		return
	}
	if u, err := url.Parse(h.Stats); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.bad("haproxy.stats", "%q is not an http URL (accepted: HAProxy's stats page, such as http://127.0.0.1:8404/stats)", h.Stats)
	}
	if h.Backend == "" {
		c.bad("haproxy.backend", "none (accepted: the backend whose servers the load reaches, as its config names it)")
	}
}

// LB reads HAProxy's counters for the target's backend; nil without
// haproxy:.
func (t *Target) LB(ctx context.Context) (*LBStats, error) {
	h := t.HAProxy
	if h == nil {
		return nil, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(h.Stats, "/")+";csv", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("haproxy stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("haproxy stats %s: %s", h.Stats, resp.Status)
	}
	return parseLBStats(resp.Body, h.Backend)
}

// parseLBStats reads HAProxy's CSV stats for backend.
func parseLBStats(r io.Reader, backend string) (*LBStats, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("haproxy stats: %w", err)
	}
	if len(rows) == 0 || !strings.HasPrefix(rows[0][0], "# ") {
		return nil, fmt.Errorf("haproxy stats: no header line (accepted: HAProxy's stats page, ;csv)")
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[strings.TrimPrefix(name, "# ")] = i
	}
	get := func(row []string, name string) string {
		if i, ok := col[name]; ok && i < len(row) {
			return row[i]
		}
		return ""
	}
	num := func(row []string, name string) int64 {
		n, _ := strconv.ParseInt(get(row, name), 10, 64)
		return n
	}
	line := func(row []string) LBRow {
		return LBRow{Name: get(row, "svname"), Requests: num(row, "req_tot"), Sessions: num(row, "stot"), Retries: num(row, "wretr"), Redispatches: num(row, "wredis"),
			Responses5xx: num(row, "hrsp_5xx"), ConnErrors: num(row, "econ"), Downs: num(row, "chkdown"), Status: get(row, "status")}
	}
	out := &LBStats{}
	found := false
	for _, row := range rows[1:] {
		switch {
		case get(row, "pxname") != backend:
		case get(row, "svname") == "BACKEND":
			out.Backend, found = line(row), true
		default:
			out.Servers = append(out.Servers, line(row))
		}
	}
	if !found {
		return nil, fmt.Errorf("haproxy stats: no backend %q (accepted: a backend the stats page lists)", backend)
	}
	return out, nil
}
