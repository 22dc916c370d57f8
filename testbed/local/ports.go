package local

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/testbed/store"
)

// lowestPort is where listenFree starts looking: above the ports services
// usually take.
const lowestPort = 20000

// heldRoom is how many ports at the top of the range below the ephemeral
// one are kept for held ports: those a testbed picks and leaves unbound
// for a time, the harness' (a later stampede's --metrics-addr binds it)
// and the proxies' (closed while an outage lasts). A part that listens at
// once picks below them, so another testbed starting meanwhile cannot
// take a held port for one of its parts.
const heldRoom = 2000

// listenFree listens on a free loopback port below the kernel's ephemeral
// range (net.ipv4.ip_local_port_range), where no outgoing connection of any
// process takes its local port: a part's port below the held ports, a held
// port among them. A port picked from the ephemeral range, as ":0" does,
// can be taken between the pick and the part's own listen, or while a
// proxy is closed for an outage, by any connection a load opens meanwhile;
// below the range only another picker can take it. It falls back to any
// free port when the range leaves no room.
func listenFree(held bool) (net.Listener, error) {
	lo, hi := lowestPort, ephemeralLow()
	if hi-lo > 2*heldRoom {
		if held {
			lo = hi - heldRoom
		} else {
			hi -= heldRoom
		}
	}
	if hi > lo+100 {
		for range 64 {
			port := lo + rand.IntN(hi-lo)
			if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
				return l, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("find a free port: %w", err)
	}
	return l, nil
}

// freePort is listenFree's port, released for a part to listen on.
func freePort(held bool) (int, error) {
	l, err := listenFree(held)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range: 32768
// where the kernel does not say.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return lo
}

// portAttempts bounds Start's attempts when a picked port was taken.
const portAttempts = 3

// picksPorts says whether the testbed picks every port itself.
func picksPorts(p Ports) bool {
	return p.Redis == 0 && p.Postgres == 0 && p.Toxiproxy == 0 && p.Memcached == 0 && len(p.API) == 0 && p.Prometheus == 0 &&
		p.RedisExporter == 0 && p.PostgresExporter == 0 && p.Harness == 0
}

// portTaken says whether a part failed because its port was in use, by
// what the part itself said (its log, carried in the error).
func portTaken(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "address already in use") || strings.Contains(msg, "could not create any tcp/ip sockets")
}

// pickPorts fills unset ports with free ones. The probe listeners stay open
// until every port is picked, so no port is handed out twice.
func (c Config) pickPorts() (Ports, error) {
	p := c.Ports
	p.API = append([]int(nil), c.Ports.API...)
	if len(p.API) == 0 {
		p.API = make([]int, c.Replicas)
	}
	p.Edge = nil
	if c.Tiers == TwoTiers {
		p.Edge = make([]int, c.Replicas)
	}
	all := append(append([]*int{&p.Redis, &p.Postgres, &p.Toxiproxy}, ptrs(p.API)...), ptrs(p.Edge)...)
	if set := store.MustFor(c.Replica); set.Cache.Name() != store.Names(store.Cache)[0] {
		all = append(all, p.of(set.Cache))
	}
	if c.Observability {
		all = append(all, &p.Prometheus, &p.RedisExporter, &p.PostgresExporter, &p.Harness)
	}
	for _, port := range all {
		if *port != 0 {
			continue
		}
		l, err := listenFree(port == &p.Harness)
		if err != nil {
			return p, err
		}
		defer l.Close() // held until every port is picked: no two alike
		*port = l.Addr().(*net.TCPAddr).Port
	}
	return p, nil
}

func ptrs(s []int) []*int {
	out := make([]*int, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

// of is the port of store k: Redis's, the database's (Postgres, whichever
// store it is), or the cache's when it is not Redis (Memcached).
func (p *Ports) of(k store.Store) *int {
	switch {
	case k.Role() == store.DB:
		return &p.Postgres
	case store.IsDefault(k):
		return &p.Redis
	}
	return &p.Memcached
}
