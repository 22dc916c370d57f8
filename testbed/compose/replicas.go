package compose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/testbed/api"
)

// replicaState is what a replica runs with that a container restart loses:
// its run-time config (PUT /admin/config) and its seed. The local provider
// restarts a replica with both; this provider puts them back.
type replicaState struct {
	url    string
	config *api.Config
	seed   *uint64
}

var replicaClient = &http.Client{Timeout: 2 * time.Second}

// saveReplicas reads each replica's config and seed; what it cannot read
// (a replica already down) it leaves unset.
func saveReplicas(ctx context.Context, urls []string) []replicaState {
	var out []replicaState
	for _, u := range urls {
		rs := replicaState{url: u}
		var c api.Config
		if getJSON(ctx, u+"/admin/config", &c) == nil && c.Validate() == nil {
			rs.config = &c
		}
		var h api.Health // /healthz answers 503 with the seed while a dependency is away
		if getJSON(ctx, u+"/healthz", &h) == nil && h.Replica != "" {
			rs.seed = &h.Seed
		}
		out = append(out, rs)
	}
	return out
}

// restore puts a restarted replica's config and seed back.
func (rs replicaState) restore(ctx context.Context) error {
	if rs.config != nil {
		if err := send(ctx, http.MethodPut, rs.url+"/admin/config", rs.config); err != nil {
			return err
		}
	}
	if rs.seed != nil {
		return send(ctx, http.MethodPost, rs.url+"/admin/reset", map[string]uint64{"seed": *rs.seed})
	}
	return nil
}

func getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := replicaClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

func send(ctx context.Context, method, url string, body any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := replicaClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s", method, url, resp.Status)
	}
	return nil
}

// versions asks Redis and Postgres theirs through the published ports; a
// part that does not answer is left out.
func versions(ctx context.Context, redisURL, postgresDSN string) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	out := map[string]string{}
	if opt, err := redis.ParseURL(redisURL); err == nil {
		opt.DisableIdentity, opt.MaxRetries = true, -1
		rdb := redis.NewClient(opt)
		if info, err := rdb.Info(ctx, "server").Result(); err == nil {
			for _, line := range strings.Split(info, "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
					out["redis"] = v
				}
			}
		}
		_ = rdb.Close()
	}
	if conn, err := pgx.Connect(ctx, postgresDSN); err == nil {
		var v string
		if conn.QueryRow(ctx, "SHOW server_version").Scan(&v) == nil {
			out["postgres"], _, _ = strings.Cut(v, " ")
		}
		_ = conn.Close(ctx)
	}
	return out
}
