package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"
)

// compareBurst releases n clients at once, rounds times each: herdbench's
// burst trigger, then the floor, and prints the spreads' medians.
func compareBurst(bin, dir, addr string, n, rounds int) error {
	var hb50, hb99, fl50, fl99 []time.Duration
	for i := range rounds {
		out := filepath.Join(dir, fmt.Sprintf("burst-%d.json", i))
		cmd := exec.Command(bin, "stampede", "--target", "http://"+addr+"/", "--trigger", "burst", "--burst", strconv.Itoa(n),
			"--rate", "50", "--warmup", "0s", "--before", "1s", "--after", "1s", "--results-dir", dir, "-o", "json="+out)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("herdbench burst: %w", err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			return err
		}
		var rep struct {
			Arms []struct {
				Burst *struct {
					OK          int   `json:"ok"`
					SpreadP50US int64 `json:"spread_p50_us"`
					SpreadP99US int64 `json:"spread_p99_us"`
				} `json:"burst"`
			} `json:"arms"`
		}
		if err := json.Unmarshal(b, &rep); err != nil || len(rep.Arms) != 1 || rep.Arms[0].Burst == nil {
			return fmt.Errorf("herdbench burst results %s: %v", out, err)
		}
		bu := rep.Arms[0].Burst
		hb50, hb99 = append(hb50, time.Duration(bu.SpreadP50US)*time.Microsecond), append(hb99, time.Duration(bu.SpreadP99US)*time.Microsecond)
		p50, p99, err := floor(addr, n)
		if err != nil {
			return err
		}
		fl50, fl99 = append(fl50, p50), append(fl99, p99)
	}
	m := func(ds []time.Duration) time.Duration { slices.Sort(ds); return ds[len(ds)/2] }
	fmt.Printf("\nburst of %d clients, spread of the requests' departures after the release (median of %d rounds):\n", n, rounds)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tp50\tp99\t")
	fmt.Fprintf(tw, "herdbench burst\t%s\t%s\t\n", round(m(hb50)), round(m(hb99)))
	fmt.Fprintf(tw, "floor: one loop of writes\t%s\t%s\t\n", round(m(fl50)), round(m(fl99)))
	fmt.Fprintf(tw, "herdbench / floor\t%.1fx\t%.1fx\t\n", float64(m(hb50))/float64(max(m(fl50), 1)), float64(m(hb99))/float64(max(m(fl99), 1)))
	return tw.Flush()
}

// floor opens n connections, serializes n requests, and writes them in one
// plain loop at the release: how tight a burst from this machine can be.
// Each write's end, after the release, is its departure.
func floor(addr string, n int) (p50, p99 time.Duration, err error) {
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// from an address of its own on loopback, as herdbench's burst dials
	// from 127.0.0.2 onwards: after a saturating run, 127.0.0.1's ports
	// towards the server may sit in TIME_WAIT
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 254)}}
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return 0, 0, fmt.Errorf("floor: open connection: %w", err)
		}
		conns = append(conns, c)
	}
	req := []byte("GET / HTTP/1.1\r\nHost: " + addr + "\r\nUser-Agent: vsvegeta\r\n\r\n")
	left := make([]time.Duration, n)
	released := time.Now()
	for i, c := range conns {
		if _, err := c.Write(req); err != nil {
			return 0, 0, fmt.Errorf("floor: write: %w", err)
		}
		left[i] = time.Since(released)
	}
	for _, c := range conns { // read the answers, so the server sees a client
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, 0, fmt.Errorf("floor: read: %w", err)
		}
		resp.Body.Close()
	}
	p50, p99 = quantiles(left)
	return p50, p99, nil
}
