package reporters

import (
	"encoding/json"

	"github.com/herdbench/herdbench/herd"
)

// shownConfig is what the reports show of the config an arm ran on: the
// few settings of the testbed's replicas they name. The results carry the
// config as its subject wrote it (arms[].config, environment.replica_config).
type shownConfig struct {
	TTL           *herd.Duration `json:"ttl"`
	QueryCost     *herd.Duration `json:"query_cost"`
	WriteStrategy string         `json:"write_strategy"`
}

// configOf is the settings over raw (a subject's config, nil when the
// results have none) as the reports show them.
func configOf(raw json.RawMessage, over herd.Settings) shownConfig {
	var s herd.Settings
	_ = json.Unmarshal(raw, &s)
	var c shownConfig
	_ = s.Merge(over).Decode(&c)
	return c
}

// ttl and query are the cache's TTL and the query's cost, "?" when the
// results do not say.
func (c shownConfig) ttl() string   { return durationOr(c.TTL) }
func (c shownConfig) query() string { return durationOr(c.QueryCost) }

func durationOr(d *herd.Duration) string {
	if d == nil {
		return "?"
	}
	return d.String()
}
