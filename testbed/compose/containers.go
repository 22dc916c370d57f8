package compose

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// container is one entry of `docker compose ps --format json`.
type container struct {
	Service    string      `json:"Service"`
	State      string      `json:"State"`  // running, exited, restarting, ...
	Health     string      `json:"Health"` // healthy, starting, unhealthy, or empty
	ExitCode   int         `json:"ExitCode"`
	Publishers []publisher `json:"Publishers"`
}

type publisher struct {
	URL           string `json:"URL"`
	TargetPort    int    `json:"TargetPort"`
	PublishedPort int    `json:"PublishedPort"`
}

// ps lists the project's containers by service. Compose prints a JSON
// array (before v2.21) or one object per line (since).
func (st state) ps(ctx context.Context) (map[string]container, error) {
	out, err := st.run(ctx, nil, "ps", "-a", "--format", "json")
	if err != nil {
		return nil, err
	}
	var list []container
	trimmed := bytes.TrimSpace(out)
	if bytes.HasPrefix(trimmed, []byte("[")) {
		if err := json.Unmarshal(trimmed, &list); err != nil {
			return nil, fmt.Errorf("compose ps: %w", err)
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(trimmed))
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var c container
			if err := json.Unmarshal(line, &c); err != nil {
				return nil, fmt.Errorf("compose ps: %w: %s", err, line)
			}
			list = append(list, c)
		}
	}
	byService := map[string]container{}
	for _, c := range list {
		byService[c.Service] = c
	}
	return byService, nil
}

// healthy reports whether c serves: running, and healthy if it has a
// healthcheck. failed says it never will without help.
func (c container) healthy() (ok, failed bool) {
	switch {
	case c.State == "exited" || c.State == "dead" || c.Health == "unhealthy":
		return false, true
	case c.State == "running" && (c.Health == "healthy" || c.Health == ""):
		return true, false
	}
	return false, false
}

// waitHealthy polls ps until every service is healthy, one fails, or ctx
// ends.
func (st state) waitHealthy(ctx context.Context, services []string) (map[string]container, error) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	var cs map[string]container
	for {
		now, err := st.ps(ctx)
		switch {
		case err == nil:
			cs = now
		case ctx.Err() == nil:
			return nil, err
		}
		var waiting []string
		for _, s := range services {
			c, found := cs[s]
			ok, failed := c.healthy()
			if failed {
				return nil, fmt.Errorf("service %s is %s (exit code %d): see `%s`", s, describe(c), c.ExitCode,
					strings.Join(st.args("logs", s), " "))
			}
			if !found || !ok {
				waiting = append(waiting, s+" "+describe(c))
			}
		}
		if len(waiting) == 0 {
			return cs, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("not healthy: %w: %s", ctx.Err(), strings.Join(waiting, ", "))
		case <-t.C:
		}
	}
}

func describe(c container) string {
	switch {
	case c.State == "":
		return "not created"
	case c.Health != "":
		return c.State + " (" + c.Health + ")"
	}
	return c.State
}
