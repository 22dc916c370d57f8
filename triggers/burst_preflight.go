package triggers

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// A burst's connections are opened before T, so what they take of the
// machine is counted first: a file each, within the process' limit
// (RLIMIT_NOFILE), and a local port each, from the ephemeral range
// (net.ipv4.ip_local_port_range), which the sockets already joined to the
// same destination hold, those in TIME_WAIT for a minute after they closed.
// A burst that cannot have them all stops before T, saying which ran out
// and what to do; the run never finds out at client 745.
//
// On IPv4 loopback every address of 127.0.0.0/8 is this machine, and each
// source address has the whole range to itself towards one destination:
// the burst's clients dial from 127.0.0.2 onwards (IP_BIND_ADDRESS_NO_PORT,
// so the kernel picks the port at connect, per destination), which leaves
// 127.0.0.1's ports, and its TIME_WAIT, to the steady load. The service
// sees the same requests on as many connections, from other addresses of
// the same machine.

// route is how one client reaches its endpoint: the address it dials (the
// endpoint's host, resolved once) and the local address it dials from.
type route struct {
	dest       netip.AddrPort
	serverName string     // the URL's host, for TLS
	tls        bool       // https
	source     netip.Addr // invalid: the kernel's choice
}

// fileHeadroom is what the rest of a run keeps open besides the burst's
// connections: the steady load's, the observers', the logs.
const fileHeadroom = 512

// portHeadroom is the ports a burst leaves free towards a destination it
// shares with the steady load (not on loopback, where it has addresses of
// its own): the steady load's connections, opened after the burst's.
const portHeadroom = 256

// loopbackSources is how many addresses of 127.0.0.0/8 a burst may dial
// from: 127.0.0.2 to 127.0.0.255.
const loopbackSources = 254

// preflight resolves each client's endpoint (client i's is bases[i %
// len(bases)]) and counts what n connections need against what the machine
// has, returning each client's route, or an error naming what ran out and
// what to do. Where the machine cannot be read (no /proc), it counts
// nothing and lets the kernel choose.
func preflight(ctx context.Context, name string, n int, bases []string) ([]route, error) {
	ends := make([]route, len(bases))
	for i, b := range bases {
		r, err := resolve(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("%s: endpoint %s: %w", name, b, err)
		}
		ends[i] = r
	}
	routes := make([]route, n)
	for i := range routes {
		routes[i] = ends[i%len(ends)]
	}
	m, err := readMachine()
	if err != nil {
		return routes, nil
	}
	if err := m.files(name, n); err != nil {
		return nil, err
	}
	return routes, m.assign(name, routes)
}

// resolve is a base URL's destination: its host's first address (IPv4
// first), and its port.
func resolve(ctx context.Context, base string) (route, error) {
	u, err := url.Parse(base)
	if err != nil {
		return route{}, err
	}
	r := route{serverName: u.Hostname(), tls: u.Scheme == "https"}
	port := u.Port()
	switch {
	case port != "":
	case r.tls:
		port = "443"
	default:
		port = "80"
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return route{}, fmt.Errorf("port %q: %w", port, err)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", r.serverName)
	if err != nil || len(ips) == 0 {
		return route{}, fmt.Errorf("resolve %s: %w", r.serverName, err)
	}
	ip := ips[0]
	for _, a := range ips {
		if a.Unmap().Is4() {
			ip = a
			break
		}
	}
	r.dest = netip.AddrPortFrom(ip.Unmap(), uint16(p))
	return r, nil
}

// machine is what a burst's connections take from.
type machine struct {
	lo, hi    int    // the ephemeral port range
	fileLimit uint64 // RLIMIT_NOFILE's soft limit
	filesOpen int    // this process' open files
	sockets   []socket
}

// socket is one line of /proc/net/tcp or tcp6.
type socket struct {
	local, remote netip.AddrPort
	state         uint8
}

// TCP states as /proc/net/tcp writes them.
const (
	tcpTimeWait = 0x06
	tcpListen   = 0x0A
)

func (m machine) ports() int { return m.hi - m.lo + 1 }

func (m machine) inRange(p uint16) bool { return int(p) >= m.lo && int(p) <= m.hi }

// files fails when n more connections, with the rest of the run's
// headroom, do not fit under the file limit.
func (m machine) files(name string, n int) error {
	if uint64(m.filesOpen+n+fileHeadroom) <= m.fileLimit {
		return nil
	}
	return fmt.Errorf("%s: %d clients need a file each, and this process has %d of its %d open (RLIMIT_NOFILE; %d kept for the rest of the run): raise the limit (ulimit -n), send fewer clients, or split the burst over workers (--workers)",
		name, n, m.filesOpen, m.fileLimit, fileHeadroom)
}

// pair is a local address towards a destination: what a port is unique
// within, for a socket that chose its port at connect.
type pair struct {
	source netip.Addr
	dest   netip.AddrPort
}

// held counts the ports of the range that sockets hold, per source and
// destination (TIME_WAIT included, and apart), and those bound by
// listeners, which connect never uses whatever the destination.
type held struct {
	used, timeWait map[pair]int
	listening      int
}

func (m machine) held() held {
	h := held{used: map[pair]int{}, timeWait: map[pair]int{}}
	for _, s := range m.sockets {
		if !m.inRange(s.local.Port()) {
			continue
		}
		if s.state == tcpListen {
			h.listening++
			continue
		}
		p := pair{s.local.Addr(), s.remote}
		h.used[p]++
		if s.state == tcpTimeWait {
			h.timeWait[p]++
		}
	}
	return h
}

// assign gives every client towards IPv4 loopback a source address from
// 127.0.0.2 onwards, filling each address's ports before the next; other
// clients keep the kernel's choice, within the ports their destination has
// free. It fails, naming the destination, when the ports run out.
func (m machine) assign(name string, routes []route) error {
	h := m.held()
	taken := map[pair]int{}
	next := map[netip.AddrPort]int{} // the source a destination's clients fill now
	for i := range routes {
		d := routes[i].dest
		if !spreads(d) {
			p := pair{dest: d}
			if m.freeTowards(h, d)-taken[p] <= portHeadroom {
				return m.outOfPorts(name, routes, d, h)
			}
			taken[p]++
			continue
		}
		for ; next[d] < loopbackSources; next[d]++ {
			p := pair{loopbackSource(next[d]), d}
			if m.ports()-h.listening-h.used[p]-taken[p] > 0 {
				taken[p]++
				routes[i].source = p.source
				break
			}
		}
		if next[d] == loopbackSources {
			return m.outOfPorts(name, routes, d, h)
		}
	}
	return nil
}

// spreads says whether clients towards d dial from loopback addresses of
// their own.
func spreads(d netip.AddrPort) bool { return d.Addr().Is4() && d.Addr().IsLoopback() }

// loopbackSource is the i-th source address: 127.0.0.2 onwards.
func loopbackSource(i int) netip.Addr { return netip.AddrFrom4([4]byte{127, 0, 0, byte(2 + i)}) }

// isLoopbackSource says whether a is one of the burst's source addresses.
func isLoopbackSource(a netip.Addr) bool {
	b := a.As4()
	return a.Is4() && b[0] == 127 && b[1] == 0 && b[2] == 0 && b[3] >= 2
}

// freeTowards is the ports free towards d from any address: the range less
// the listeners' ports and those held by sockets to d.
func (m machine) freeTowards(h held, d netip.AddrPort) int {
	free := m.ports() - h.listening
	for p, n := range h.used {
		if p.dest == d {
			free -= n
		}
	}
	return free
}

// outOfPorts is the error of a burst whose clients towards d cannot all
// have a port: how many need one, what the range holds, what holds the
// rest, and what to do.
func (m machine) outOfPorts(name string, routes []route, d netip.AddrPort, h held) error {
	need := 0
	for _, r := range routes {
		if r.dest == d {
			need++
		}
	}
	from, ranges := "", 1
	if spreads(d) {
		from, ranges = fmt.Sprintf(" from each of the %d source addresses 127.0.0.2 to 127.0.0.255", loopbackSources), loopbackSources
	}
	var used, tw int
	for p, n := range h.used {
		if p.dest == d && (!spreads(d) || isLoopbackSource(p.source)) {
			used, tw = used+n, tw+h.timeWait[p]
		}
	}
	free := max(m.freeTowards(h, d)-portHeadroom, 0)
	if spreads(d) {
		free = max(ranges*(m.ports()-h.listening)-used, 0)
	}
	return fmt.Errorf("%s: %d clients to %s need a local port each, and %d are free: the ephemeral range %d-%d (net.ipv4.ip_local_port_range) holds %d ports%s, sockets to %s hold %d of them (%d in TIME_WAIT, which lasts a minute after a connection closed) and listeners %d%s: wait for TIME_WAIT to clear, widen the range (sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"), send fewer clients, or split the burst over workers (--workers)",
		name, need, d, free, m.lo, m.hi, m.ports(), from, d, used, tw, h.listening*ranges, headroomNote(d))
}

func headroomNote(d netip.AddrPort) string {
	if spreads(d) {
		return ""
	}
	return fmt.Sprintf(", and %d are kept for the steady load", portHeadroom)
}

// dialHint says what ran out when a connection could not be opened, and
// what to do; "" for other errors.
func dialHint(err error) string {
	switch {
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return " (the machine ran out of local ports towards it: sockets in TIME_WAIT hold them for a minute; wait, widen net.ipv4.ip_local_port_range, send fewer clients, or split the burst over workers)"
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return " (out of files: raise the limit, ulimit -n, send fewer clients, or split the burst over workers)"
	}
	return ""
}

// readMachine reads the port range, the file limit and the open files, and
// every TCP socket, from /proc.
func readMachine() (machine, error) {
	var m machine
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return m, err
	}
	if _, err := fmt.Sscan(string(b), &m.lo, &m.hi); err != nil || m.lo > m.hi {
		return m, fmt.Errorf("ip_local_port_range %q: %v", b, err)
	}
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return m, err
	}
	m.fileLimit = l.Cur
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return m, err
	}
	m.filesOpen = len(fds)
	for _, path := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		s, err := readSockets(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return m, err
		}
		m.sockets = append(m.sockets, s...)
	}
	return m, nil
}

// readSockets parses /proc/net/tcp or tcp6: "sl local remote st ...".
func readSockets(path string) ([]socket, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []socket
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 {
			continue
		}
		local, err1 := procAddr(fields[1])
		remote, err2 := procAddr(fields[2])
		st, err3 := strconv.ParseUint(fields[3], 16, 8)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("%s: line %q", path, sc.Text())
		}
		out = append(out, socket{local: local, remote: remote, state: uint8(st)})
	}
	return out, sc.Err()
}

// procAddr parses /proc/net/tcp's ADDR:PORT, the address in hex as the
// kernel prints it: each 32-bit word of the address as a number in the
// host's byte order; the port in hex. IPv4-mapped addresses become IPv4.
func procAddr(s string) (netip.AddrPort, error) {
	a, p, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(a)
	if !ok || err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("address %q", s)
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	for w := 0; w < len(raw); w += 4 { // each word is printed as a number in host order
		binary.NativeEndian.PutUint32(raw[w:], binary.BigEndian.Uint32(raw[w:]))
	}
	ip, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
}
