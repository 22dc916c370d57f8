package result

import (
	"encoding/json"
	"fmt"
	"strings"
)

// LoadBalancer is what the load balancer in front of the service (a
// target file's haproxy:) did in an arm, by its own counters (HAProxy's
// stats page), from T to the arm's end as the other figures: the requests
// that entered it, what it sent to the servers behind it, retries and
// redispatches included, the answers it made itself, and each server's
// share. A retry at the load balancer shows here as more server attempts
// than requests, which the clients' own records cannot see.
type LoadBalancer struct {
	// Backend is the backend whose counters these are: the arm's own
	// (arms[].backend), or the target file's haproxy.backend
	Backend        string `json:"backend"`
	Requests       int64  `json:"requests"`        // HTTP requests the backend received from its frontends, once each: req_tot
	ServerAttempts int64  `json:"server_attempts"` // sessions the backend's servers took, summed: stot
	// Retries are the retries HAProxy made, however they ended (its log's
	// %rc summed): the servers' attempts beyond the requests that reached
	// one, within what wretr and wredis bound (observe.LBStats.RetriesMade)
	Retries      int64 `json:"retries"`
	Redispatches int64 `json:"redispatches"` // the retries it sent to another server: wredis
	// Own5xx are the 5xx HAProxy answered itself, not a server: 503 with
	// no server to try, 502 or 504 for a server's bad or late answer (the
	// backend's hrsp_5xx less its servers')
	Own5xx int64 `json:"own_5xx"`
	// Amplification is server attempts per request; 1 when it retried
	// nothing
	Amplification float64 `json:"amplification"`
	// EndToEnd is every layer's amplification multiplied: the clients'
	// attempts per request (retries.amplification), the load balancer's
	// server attempts per request it received, and the database's queries
	// per server attempt (db.queries over server_attempts); 0 when a
	// layer has no count (no database observed: its factor is left out)
	EndToEnd float64 `json:"end_to_end"`
	// QueuePeak is the most requests HAProxy held queued at once, over
	// the samples from T to the arm's end: the backend's queue and its
	// servers' (qcur, a gauge read every 100 ms, so a queue shorter than
	// a sample's interval may be missed)
	QueuePeak int64 `json:"queue_peak"`
	// Servers are the backend's servers by name
	Servers LBServers `json:"servers"`
}

// LBServers are the servers behind the load balancer, by name.
type LBServers map[string]*LBServer

// UnmarshalJSON reads the servers by name, or as the list results files
// held before they were keyed by name (each with its name, the counters
// then counted from the load's start).
func (s *LBServers) UnmarshalJSON(b []byte) error {
	var byName map[string]*LBServer
	if err := json.Unmarshal(b, &byName); err == nil {
		*s = byName
		return nil
	}
	var list []struct {
		Name string `json:"name"`
		LBServer
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("lb.servers: %w (accepted: servers by name, or a list of servers with their names)", err)
	}
	*s = LBServers{}
	for _, e := range list {
		(*s)[e.Name] = &e.LBServer
	}
	return nil
}

// LBServer is one server behind the load balancer in an arm.
type LBServer struct {
	Attempts     int64 `json:"attempts"`      // stot
	Responses5xx int64 `json:"responses_5xx"` // hrsp_5xx: the 5xx it answered
	ConnErrors   int64 `json:"conn_errors"`   // econ
	Downs        int64 `json:"downs"`         // chkdown: the times its health check marked it down
	// PeakRPS is its most attempts in any second of the timeline from T
	// (ten 100 ms rows): often the second a server went away, its refused
	// connections counted at it and redispatched; how it came back is
	// Return's
	PeakRPS float64 `json:"peak_rps"`
	Weight  int64   `json:"weight"` // its effective weight at the arm's end
	// QueuePeak is the most requests queued for it at once (qcur, over
	// the samples from T: at its maxconn)
	QueuePeak int64  `json:"queue_peak"`
	Status    string `json:"status"` // at the arm's end
	// Return is its first return from T: absent when HAProxy never
	// listed it UP again after a reading that listed it otherwise
	Return *LBReturn `json:"return,omitempty"`
	// Returns are every return from T, in order, the first Return's
	// figures: a server that flaps comes back more than once. Not figures
	// a gate reads (a list); of a repeated arm, its representative run's
	Returns []LBReturn `json:"returns,omitempty"`
}

// LBReturn is a server's return behind the load balancer (its first from
// T), from the timeline's rows: the row of HAProxy's reading that first
// listed it UP again (its weight in lb_weights no longer 0), its attempts
// in the rows from there (lb_servers, HAProxy's stot), and the backend's
// (lb_sent). A step takes its share at once; slowstart's ramp takes a
// fraction of it in its first second, and its share seconds later.
type LBReturn struct {
	// BackMS is the start of the row whose reading first listed it UP
	// again, from T: HAProxy's own state change lies in the 100 ms before
	// that reading, which lies in the row
	BackMS int64 `json:"back_ms"`
	// FirstSecondRPS is its attempts in the ten rows from BackMS (fewer
	// when the arm ends sooner: over the rows there are), a second
	FirstSecondRPS float64 `json:"first_second_rps"`
	// Share is its full share of the backend's attempts: its uweight (the
	// weight it was given, which slowstart ramps towards) over the
	// uweights of the servers UP at the arm's end
	Share float64 `json:"share"`
	// FullShareMS is the time from BackMS to the start of its first whole
	// second (ten rows, stepped a row at a time) in which it took at least
	// FullShareOf its share of the backend's attempts, the share over the
	// servers UP in that second's last row; null when no second before
	// the arm's end did
	FullShareMS *int64 `json:"full_share_ms"`
}

// FullShareOf is how much of its share a returning server must take in
// a second for that second to count as its full share: 90%, so a step
// counts from its first second (whose first row may hold part of a
// reading from before it was UP), and slowstart's ramp once its weight is
// most of the way up.
const FullShareOf = 0.9

// LBServerFigures are the figures of one server behind the load balancer
// a gate may name, as lb.servers.NAME.FIGURE: the servers are the load
// balancer's, known once it is read, so any NAME passes validation, and a
// server HAProxy does not list has no figure, which fails the gate (as
// does a return it did not make, or a full share it did not reach).
var LBServerFigures = FigurePaths(&LBServer{})

// LBServerPath splits path, lb.servers.NAME.FIGURE with FIGURE one of
// LBServerFigures, into NAME's prefix (lb.servers.NAME.) and FIGURE;
// ok false for any other path. A server's name may hold dots, and a
// figure may (return.first_second_rps): the longest figure that ends the
// path wins, and no figure is another's tail, so only one can.
func LBServerPath(path string) (server, fig string, ok bool) {
	rest, found := strings.CutPrefix(path, "lb.servers.")
	if !found {
		return "", "", false
	}
	for _, f := range LBServerFigures {
		name, cut := strings.CutSuffix(rest, "."+f)
		if cut && name != "" && len(f) > len(fig) {
			server, fig, ok = "lb.servers."+name+".", f, true
		}
	}
	return server, fig, ok
}

// IsLBServerPath says whether path is lb.servers.NAME.FIGURE, FIGURE one of
// LBServerFigures.
func IsLBServerPath(path string) bool {
	_, _, ok := LBServerPath(path)
	return ok
}
