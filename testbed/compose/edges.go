package compose

import (
	"cmp"
	"strconv"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/edge"
)

// EdgeEnv is the environment the compose file reads the edges' policy
// from: HERDBENCH_EDGE_TIMEOUT and the rest, in testbed edge's flag forms.
func EdgeEnv(c edge.Config) []string {
	c.Timeout = cmp.Or(c.Timeout, herd.Duration(edge.DefaultTimeout))
	return []string{
		"HERDBENCH_EDGE_TIMEOUT=" + c.Timeout.String(),
		"HERDBENCH_EDGE_RETRY=" + c.Retry.String(),
		"HERDBENCH_EDGE_RETRY_BUDGET=" + c.Budget.String(),
		"HERDBENCH_EDGE_BREAKER=" + c.Breaker.String(),
		"HERDBENCH_EDGE_BULKHEAD=" + strconv.Itoa(c.Bulkhead),
		"HERDBENCH_EDGE_DEADLINE=" + c.Deadline.String(),
	}
}
