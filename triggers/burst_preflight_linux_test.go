package triggers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The preflight on real sockets, in a network namespace of the test's own
// (its loopback, its port range, no one else's sockets), so the test can
// give the machine 10 ephemeral ports without touching the host's:
//
//   - spread: 500 clients to 127.0.0.1:8080 need 500 ports, 50 times the
//     range; they open from 50 or more source addresses of 127.0.0.0/8, and
//     the server sees them all.
//   - again: a burst of 2,000 runs, its clients close first (TIME_WAIT on
//     their side), and a burst of 1,000 right after stops before sending
//     anything, naming the ports in TIME_WAIT and what to do.
//   - files: under a file limit of 256, a burst of 100 stops before opening
//     a connection, naming RLIMIT_NOFILE.
func TestBurstPreflightOnRealSockets(t *testing.T) {
	if role := os.Getenv("HERDBENCH_BURST_NETNS"); role != "" {
		netnsChild(t, role)
		return
	}
	for _, role := range []string{"spread", "again", "files"} {
		t.Run(role, func(t *testing.T) {
			got := runInNetns(t, role)
			switch role {
			case "spread":
				if got.Err != "" || got.Requests != 500 || got.Sources < 50 || got.FromDotOne != 0 {
					t.Errorf("burst of 500 over 10 ports = %+v; want no error, 500 requests from 50 or more addresses, none from 127.0.0.1", got)
				}
			case "again":
				// the ports held are the first burst's 2,000, less any
				// whose socket the kernel let go meanwhile (1,995 once,
				// on a busy machine); free and held add up to the range
				free, held := countIn(got.Err, `and (\d+) are free`), countIn(got.Err, `hold (\d+) of them`)
				if got.First != "" || !strings.Contains(got.Err, "burst: 1000 clients to 127.0.0.1:8080 need a local port each") ||
					free+held != 254*10 || free >= 1000 || held < 1900 || !strings.Contains(got.Err, "in TIME_WAIT") || !strings.Contains(got.Err, "wait for TIME_WAIT to clear") ||
					got.Requests != 2000 {
					t.Errorf("a burst of 1000 right after one of 2000 over 254 x 10 ports = %+v; want the first to run (2000 requests) and the second to stop before sending, naming TIME_WAIT", got)
				}
			case "files":
				if !strings.Contains(got.Err, "100 clients need a file each") || !strings.Contains(got.Err, "RLIMIT_NOFILE") ||
					got.Conns != 0 {
					t.Errorf("a burst of 100 under 256 files = %+v; want it stopped before any connection, naming RLIMIT_NOFILE", got)
				}
			}
		})
	}
}

// countIn is the number the first group of pattern matches in s; -1
// when it does not match.
func countIn(s, pattern string) int {
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return n
}

// netnsResult is what the child saw.
type netnsResult struct {
	First, Err string // the first burst's error, the last one's
	Requests   int64  // requests the server saw
	Conns      int64  // connections it accepted
	Sources    int    // distinct source addresses
	FromDotOne int    // connections from 127.0.0.1
}

// runInNetns runs this test as a child in a new network namespace, and
// reads its result; without the right to make one it fails under CI and
// skips elsewhere.
func runInNetns(t *testing.T, role string) netnsResult {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBurstPreflightOnRealSockets$", "-test.count=1")
	cmd.Env = append(os.Environ(), "HERDBENCH_BURST_NETNS="+role)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	out, err := cmd.CombinedOutput()
	if errors.Is(err, syscall.EPERM) {
		if os.Getenv("CI") != "" {
			t.Fatalf("a network namespace of the test's own: %v (CI runs as root)", err)
		}
		t.Skipf("no network namespace here: %v", err)
	}
	for sc := bufio.NewScanner(strings.NewReader(string(out))); sc.Scan(); {
		if line, ok := strings.CutPrefix(sc.Text(), "NETNS-RESULT "); ok {
			var r netnsResult
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	t.Fatalf("child %s: %v\n%s", role, err, out)
	return netnsResult{}
}

// netnsChild is the child's side: loopback up, 10 ports, a server on
// 127.0.0.1:8080 (outside the range), then the role's bursts.
func netnsChild(t *testing.T, role string) {
	if err := loopbackUp(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_local_port_range", []byte("40000 40009"), 0o644); err != nil {
		t.Fatal(err)
	}
	var res netnsResult
	var mu sync.Mutex
	sources := map[string]int{}
	ln, err := net.Listen("tcp", "127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		res.Requests++
		mu.Unlock()
	}), ConnState: func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			mu.Lock()
			res.Conns++
			sources[host]++
			mu.Unlock()
		}
	}}
	go func() { _ = srv.Serve(ln) }()
	env := Env{API: []string{"http://127.0.0.1:8080"}, HotKeys: []string{"1"}}
	fire := func(n int) string {
		_, err := (&Burst{Clients: n}).Fire(context.Background(), env)
		if err != nil {
			return err.Error()
		}
		return ""
	}
	switch role {
	case "spread":
		res.Err = fire(500)
	case "again":
		res.First = fire(2000)
		res.Err = fire(1000)
	case "files":
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 256, Max: 256}); err != nil {
			t.Fatal(err)
		}
		res.Err = fire(100)
	}
	_ = srv.Close()
	mu.Lock()
	res.Sources, res.FromDotOne = len(sources), sources["127.0.0.1"]
	b, _ := json.Marshal(res)
	mu.Unlock()
	fmt.Println("NETNS-RESULT " + string(b))
}

// loopbackUp brings lo up in this namespace (ip link set lo up).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	return nil
}
