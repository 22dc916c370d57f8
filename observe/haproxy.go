package observe

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HAProxy is a load balancer's stats page (HAProxy's, in CSV) and the
// backend whose servers the load reaches: read every sample like the
// stores, so its sends, retries and each server's share are on the
// timeline.
type HAProxy struct {
	Stats   string // the stats page, such as http://127.0.0.1:8404/stats; ;csv is added
	Backend string // the backend the load's frontend sends to
}

// LBReadLimit bounds a sample's read of the stats page, which runs beside
// the stores' reads: past it the sample has no LB (its growth goes to the
// next that read it), and a slow load balancer delays neither the sample
// nor T by more.
const LBReadLimit = 250 * time.Millisecond

// haproxyClient reads stats pages; Read's caller bounds each read.
var haproxyClient = &http.Client{Timeout: 2 * time.Second}

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
	Requests     int64 // req_tot: HTTP requests it received (a backend: from its frontends, once each)
	Sessions     int64 // stot: connections (HTTP: requests) sent to it, retries included
	Retries      int64 // wretr: retries of a connection to a server
	Redispatches int64 // wredis: requests sent to another server after a failure
	Responses5xx int64 // hrsp_5xx: a backend's include those HAProxy made itself
	ConnErrors   int64 // econ: connections to the server that failed (a backend's: also no server to try)
	RespErrors   int64 // eresp: a server's answer failed or timed out (HAProxy answered 502 or 504)
	// InternalErrors are eint: HAProxy's own internal errors (it answered 500)
	InternalErrors int64
	Downs          int64 // chkdown: transitions from up to down
	// Queue is qcur: requests waiting now (a backend's: for no server
	// yet; a server's: for that server, at its maxconn), a gauge
	Queue int64
	// Current is scur: sessions it holds now (a backend's: requests being
	// sent to or answered by its servers), a gauge a drain waits on
	Current int64
	Weight  int64 // weight: a server's effective weight now (slowstart ramps it)
	// UserWeight is uweight: the weight the server was given (the
	// configuration's, or one set at run time), which slowstart ramps
	// Weight towards; 0 on a HAProxy older than 2.4, whose page lacks it
	UserWeight int64
	Status     string // UP, DOWN, MAINT, ...
}

// Up says whether HAProxy lists the server up, in its rotation: UP, or
// UP with checks failing towards down ("UP 1/3"); not DOWN (nor rising,
// "DOWN 1/2"), MAINT, DRAIN or NOLB, which take no new requests.
func (r LBRow) Up() bool { return r.Status == "UP" || strings.HasPrefix(r.Status, "UP ") }

// Queued is every request waiting in HAProxy's queues now: the
// backend's (for no server yet) and each server's (at its maxconn).
func (s LBStats) Queued() int64 {
	n := s.Backend.Queue
	for _, r := range s.Servers {
		n += r.Queue
	}
	return n
}

// Own5xx are the 5xx answers the backend sent that none of its servers
// did: HAProxy's own (503 with no server to try, 502 or 504 for a
// server's bad or late answer, 500), the backend's hrsp_5xx less its
// servers'. Of the counters' growth, not of their totals: under retry-on,
// a server's 5xx that HAProxy retried into a 2xx make the totals'
// difference negative, and a clamp there would hide later own answers.
func (s LBStats) Own5xx() int64 {
	n := s.Backend.Responses5xx
	for _, r := range s.Servers {
		n -= r.Responses5xx
	}
	return max(n, 0)
}

// RetriesMade is the retries HAProxy made, however they ended: on the same
// server or another, answered or not (the sum of its log's %rc). HAProxy
// 2.6 counts a retry once in wretr (it stayed on its server) or in wredis
// (it went to another), as its management guide defines them, and a
// layer-7 retry (retry-on a status, an empty or late answer) once more in
// wretr when it decides it: wretr + wredis is the most the retries can be,
// and the least is half of it or wredis (each one that moved), whichever
// is more. Each retry is one more attempt at a server, so the servers'
// attempts beyond the requests that reached one (req_tot less those with
// no server to try: the backend's econ beyond its servers') place them
// between the two, the bounds holding the snapshots' edges (a request
// counted at T, its attempts after); measured on HAProxy 2.6 with
// redispatch, refused connections gave wretr 0, wredis 214, %rc 214 and
// the attempts 214 beyond the requests, 500s wretr 190, wredis 215, %rc
// 215 and 215. Of the counters' growth (as Own5xx), not of their totals.
func (g LBStats) RetriesMade() int64 {
	var attempts int64
	for _, r := range g.Servers {
		attempts += r.Sessions
	}
	counted := g.Backend.Retries + g.Backend.Redispatches
	noServer := g.Backend.ConnErrors
	for _, r := range g.Servers {
		noServer -= r.ConnErrors
	}
	beyond := attempts - (g.Backend.Requests - max(noServer, 0))
	return min(max(beyond, (counted+1)/2, g.Backend.Redispatches), counted)
}

// Read reads HAProxy's counters for h's backend.
func (h *HAProxy) Read(ctx context.Context) (*LBStats, error) {
	body, err := h.page(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return ParseLBStats(body, h.Backend)
}

// Backends lists the backends h's stats page lists, in its order: the
// names a target file's haproxy.backend and arms[].backend may take.
func (h *HAProxy) Backends(ctx context.Context) ([]string, error) {
	body, err := h.page(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	rows, get, err := readLBPage(body)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, row := range rows {
		if get(row, "svname") == "BACKEND" {
			names = append(names, get(row, "pxname"))
		}
	}
	return names, nil
}

// page is h's stats page in CSV.
func (h *HAProxy) page(ctx context.Context) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(h.Stats, "/")+";csv", nil)
	if err != nil {
		return nil, err
	}
	resp, err := haproxyClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("haproxy stats: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("haproxy stats %s: %s", h.Stats, resp.Status)
	}
	return resp.Body, nil
}

// readLBPage reads HAProxy's CSV stats: its rows below the header, and
// get, a row's cell by its column's name ("" where the row has none).
func readLBPage(r io.Reader) ([][]string, func(row []string, name string) string, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("haproxy stats: %w", err)
	}
	if len(rows) == 0 || !strings.HasPrefix(rows[0][0], "# ") {
		return nil, nil, fmt.Errorf("haproxy stats: no header line (accepted: HAProxy's stats page, ;csv)")
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
	return rows[1:], get, nil
}

// ParseLBStats reads HAProxy's CSV stats for backend.
func ParseLBStats(r io.Reader, backend string) (*LBStats, error) {
	rows, get, err := readLBPage(r)
	if err != nil {
		return nil, err
	}
	num := func(row []string, name string) int64 {
		n, _ := strconv.ParseInt(get(row, name), 10, 64) // an empty cell: the counter does not apply
		return n
	}
	line := func(row []string) LBRow {
		return LBRow{Name: get(row, "svname"), Requests: num(row, "req_tot"), Sessions: num(row, "stot"), Retries: num(row, "wretr"),
			Redispatches: num(row, "wredis"), Responses5xx: num(row, "hrsp_5xx"), ConnErrors: num(row, "econ"),
			RespErrors: num(row, "eresp"), InternalErrors: num(row, "eint"), Downs: num(row, "chkdown"), Weight: num(row, "weight"), UserWeight: num(row, "uweight"), Status: get(row, "status"),
			Queue: num(row, "qcur"), Current: num(row, "scur")}
	}
	out := &LBStats{}
	found := false
	for _, row := range rows {
		switch {
		case get(row, "pxname") != backend:
		case get(row, "svname") == "BACKEND":
			out.Backend, found = line(row), true
		case get(row, "svname") != "FRONTEND":
			out.Servers = append(out.Servers, line(row))
		}
	}
	if !found {
		return nil, fmt.Errorf("haproxy stats: no backend %q (accepted: a backend the stats page lists)", backend)
	}
	return out, nil
}
