package triggers

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	if len(env.Proxies) > 0 {
		return fmt.Sprintf("close and reopen the toxiproxy proxies %s", proxyNames(env))
	}
	if m := env.MySQL; m != nil {
		return fmt.Sprintf("KILL every connection of MySQL user %s, but herdbench's own", m.User)
	}
	return fmt.Sprintf("pg_terminate_backend every connection of role %s", env.Role)
}

// Fire disables and re-enables each proxy, which closes its connections,
// or terminates the role's backends.
func (*Conndrop) Fire(ctx context.Context, env Env) (Fired, error) {
	if len(env.Proxies) == 0 && env.MySQL != nil {
		n, err := env.MySQL.Kill(ctx)
		if err != nil {
			return Fired{}, fmt.Errorf("conndrop: %w", err)
		}
		return Fired{Detail: &ConndropDetail{User: env.MySQL.User, ConnectionsReset: &n}, Ended: time.Now()}, nil
	}
	if len(env.Proxies) == 0 {
		var n int64
		err := env.DB.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE usename = $1 AND pid <> pg_backend_pid()`, env.Role).Scan(&n)
		if err != nil {
			return Fired{}, fmt.Errorf("conndrop: terminate the connections of %s: %w", env.Role, err)
		}
		return Fired{Detail: &ConndropDetail{Role: env.Role, ConnectionsReset: &n}, Ended: time.Now()}, nil
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
