package experiment

import (
	"context"
	"fmt"

	"github.com/herdbench/herdbench/targets"
)

// LoadBalancer is what the load balancer in front of the service (a
// target file's haproxy:) did in an arm, by its own counters (HAProxy's
// stats page), from the start of the load to the end: the requests that
// entered it, what it sent to the servers behind it, retries and
// redispatches included, and each server's share. A retry at the load
// balancer shows here as more server attempts than requests, which the
// clients' own records cannot see.
type LoadBalancer struct {
	Requests       int64 `json:"requests"`        // HTTP requests the backend received from its frontends, once each: req_tot
	ServerAttempts int64 `json:"server_attempts"` // sessions the backend's servers took, summed: stot
	Retries        int64 `json:"retries"`         // the backend's retries: wretr
	Redispatches   int64 `json:"redispatches"`    // requests it sent to another server after a failure: wredis
	// Amplification is server attempts per request; 1 when it retried
	// nothing
	Amplification float64    `json:"amplification"`
	Servers       []LBServer `json:"servers"`
}

// LBServer is one server behind the load balancer in an arm.
type LBServer struct {
	Name         string `json:"name"`
	Attempts     int64  `json:"attempts"`      // stot
	Responses5xx int64  `json:"responses_5xx"` // hrsp_5xx
	ConnErrors   int64  `json:"conn_errors"`   // econ
	Downs        int64  `json:"downs"`         // chkdown: the times its health check marked it down
	Status       string `json:"status"`        // at the arm's end
}

// lbStart reads the load balancer's counters where the load starts; nil
// without one. A failed read is the arm's warning, not its end.
func (a *armRun) lbStart(ctx context.Context) {
	if a.tg.HAProxy == nil {
		return
	}
	s, err := a.tg.LB(ctx)
	if err != nil {
		a.lbErr = err
	}
	a.lb0 = s
}

// loadBalancer reads the load balancer's counters at the arm's end and
// puts in res what grew since the load started.
func (a *armRun) loadBalancer(ctx context.Context, res *ArmResult) {
	if a.tg.HAProxy == nil {
		return
	}
	end, err := a.tg.LB(ctx)
	if err == nil {
		err = a.lbErr
	}
	if err == nil && (a.lb0 == nil || end == nil) {
		err = fmt.Errorf("HAProxy's stats were not read where the load started (check haproxy.stats: %s)", a.tg.HAProxy.Stats)
	}
	if err != nil { // the arm is measured all the same; lb.* is left out
		res.Warnings = append(res.Warnings, fmt.Sprintf("load balancer: %v", err))
		return
	}
	res.LB = lbDelta(*a.lb0, *end)
}

// lbDelta is what the counters of HAProxy grew by from s0 to s1.
func lbDelta(s0, s1 targets.LBStats) *LoadBalancer {
	before := map[string]targets.LBRow{}
	for _, r := range s0.Servers {
		before[r.Name] = r
	}
	lb := &LoadBalancer{Requests: s1.Backend.Requests - s0.Backend.Requests, Retries: s1.Backend.Retries - s0.Backend.Retries,
		Redispatches: s1.Backend.Redispatches - s0.Backend.Redispatches, Servers: []LBServer{}}
	for _, r := range s1.Servers {
		b := before[r.Name]
		sv := LBServer{Name: r.Name, Attempts: r.Sessions - b.Sessions, Responses5xx: r.Responses5xx - b.Responses5xx,
			ConnErrors: r.ConnErrors - b.ConnErrors, Downs: r.Downs - b.Downs, Status: r.Status}
		lb.ServerAttempts += sv.Attempts
		lb.Servers = append(lb.Servers, sv)
	}
	if lb.Requests > 0 {
		lb.Amplification = round4(float64(lb.ServerAttempts) / float64(lb.Requests))
	}
	return lb
}
