package triggers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/herdbench/herdbench/figure"
	"github.com/herdbench/herdbench/herd"
)

// Conndrop resets every connection of the service to Redis and Postgres at
// T, as a network blip or a proxy restart does: a reconnect storm. Behind
// toxiproxy it closes the proxies and opens them again (the harness's own
// connections do not pass through them); on a target without toxiproxy it
// ends the Postgres connections of the target's role, or KILLs the MySQL
// connections of its user (never herdbench's own).
type Conndrop struct{}

// ConndropDetail is what conndrop did: the proxies it reset, or the role
// whose connections it ended.
type ConndropDetail struct {
	ProxiesReset     []string `json:"proxies_reset,omitempty"`
	Role             string   `json:"role,omitempty"`
	User             string   `json:"user,omitempty"` // a MySQL user, whose connections were killed
	ConnectionsReset *int64   `json:"connections_reset,omitempty"`
}

// Figures walks the detail's figures (trigger.detail.*), declared here.
func (d *ConndropDetail) Figures(path string, c *figure.Collector) any {
	return figure.Pointer(d, path, c, figure.Decl[ConndropDetail]{
		figure.Opt("connections_reset", figure.Count, "", func(d *ConndropDetail) **int64 { return &d.ConnectionsReset }).OmitEmpty(),
	})
}

var (
	_ Trigger  = (*Conndrop)(nil)
	_ Requirer = (*Conndrop)(nil)
)

func (*Conndrop) Name() string { return "conndrop" }

// Detail is an empty ConndropDetail, into which results are read.
func (*Conndrop) Detail() any { return &ConndropDetail{} }
func (*Conndrop) Describe() string {
	return "every service connection to Redis and Postgres reset at T: a reconnect storm"
}

// Requires toxiproxy in front of a dependency, or a Postgres role.
func (*Conndrop) Requires(c Caps) error {
	if len(c.Proxies) == 0 && !c.Role && !c.MySQLUser {
		return errors.New("toxiproxy in front of the service's dependencies (toxiproxy in the target file), a Postgres role whose connections may be reset (postgres.role), or a MySQL user (mysql.user)")
	}
	return nil
}

func (*Conndrop) Plan(env Env) string {
	switch {
	case len(env.Proxies) > 0:
		return fmt.Sprintf("close and reopen the toxiproxy proxies %s", proxyNames(env))
	case env.Conns != nil:
		return env.Conns.DescribeKill()
	}
	return "nothing: the target declares no toxiproxy, no Postgres role and no MySQL user"
}

// Fire disables and re-enables each proxy, which closes its connections,
// or ends the connections of the database's role or user.
func (*Conndrop) Fire(ctx context.Context, env Env) (Fired, error) {
	if len(env.Proxies) == 0 {
		if env.Conns == nil {
			return Fired{}, errors.New("conndrop: the target declares no toxiproxy, no Postgres role and no MySQL user")
		}
		d, err := env.Conns.Kill(ctx)
		if err != nil {
			return Fired{}, fmt.Errorf("conndrop: %w", err)
		}
		return Fired{Detail: &d, Ended: time.Now()}, nil
	}
	var reset []string
	for _, dep := range herd.Dependencies {
		if _, ok := env.Proxies[dep]; !ok {
			continue
		}
		p, err := proxy(env, dep)
		if err != nil {
			return Fired{}, err
		}
		if err := p.Disable(); err != nil {
			return Fired{}, fmt.Errorf("conndrop: close %s proxy: %w", dep, err)
		}
		if err := p.Enable(); err != nil {
			return Fired{}, fmt.Errorf("conndrop: reopen %s proxy: %w", dep, err)
		}
		reset = append(reset, dep)
	}
	return Fired{Detail: &ConndropDetail{ProxiesReset: reset}, Ended: time.Now()}, nil
}
