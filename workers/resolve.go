package workers

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
)

// Check reads --workers and --worker-count as Resolve does, without
// resolving any name, and returns every problem at once, each a
// herd.FieldError of workers or worker_count saying what is accepted:
// a count needs a name to resolve, dns:NAME:PORT, and a port is 1 to
// 65535. The command line checks them before anything starts.
func Check(spec string, count int) error {
	var errs herd.FieldErrors
	dns := strings.HasPrefix(spec, "dns:")
	switch {
	case count < 0:
		errs.Add("worker_count", "%d out of range (accepted: 1 or more, with --workers dns:NAME:PORT)", count)
	case count > 0 && !dns:
		errs.Add("worker_count", "%d without --workers dns:NAME:PORT (accepted: with dns:NAME:PORT only, how many addresses to wait for; a list of URLs is used as it is)", count)
	}
	if spec == "" {
		return errs.Err()
	}
	if rest, ok := strings.CutPrefix(spec, "dns:"); ok {
		_, _, err := splitDNS(rest)
		return append(errs, herd.Fields(err)...).Err()
	}
	_, err := parseList(spec)
	return append(errs, herd.Fields(err)...).Err()
}

// Resolve reads --workers: base URLs separated by commas, or dns:NAME:PORT,
// every address NAME resolves to (as a headless Service names the pods of
// an Indexed Job). With count above 0 it waits, polling, until exactly
// count addresses resolve or ctx ends: pods come up one by one.
func Resolve(ctx context.Context, spec string, count int) ([]string, error) {
	if rest, ok := strings.CutPrefix(spec, "dns:"); ok {
		return resolveDNS(ctx, rest, count)
	}
	urls, err := parseList(spec)
	if err != nil {
		return nil, err
	}
	if count > 0 && len(urls) != count {
		return nil, fmt.Errorf("--workers lists %d workers, --worker-count says %d (accepted: the same number)", len(urls), count)
	}
	return urls, nil
}

// parseList reads a list of workers' base URLs: every problem at once.
func parseList(spec string) ([]string, error) {
	var urls []string
	var errs herd.FieldErrors
	for _, s := range strings.Split(spec, ",") {
		s = strings.TrimSuffix(strings.TrimSpace(s), "/")
		u, err := url.Parse(s)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/"):
			errs.Add("workers", "%q is not a worker's base URL (accepted: http://HOST:PORT,... or dns:NAME:PORT)", s)
		case herd.CheckPort(u.Port()) != nil:
			errs.Add("workers", "%s: port %s out of range (accepted: 1 to 65535, such as http://10.0.0.5:7070)", s, u.Port())
		case slices.Contains(urls, s):
			errs.Add("workers", "%s is listed twice (accepted: each worker once)", s)
		default:
			urls = append(urls, s)
		}
	}
	return urls, errs.Err()
}

// splitDNS reads NAME:PORT of dns:NAME:PORT.
func splitDNS(hostport string) (name, port string, err error) {
	name, port, err = net.SplitHostPort(hostport)
	if err != nil || name == "" || port == "" {
		return "", "", herd.Errorf("workers", "dns:%s: want a name and a port (accepted: dns:NAME:PORT such as dns:herdbench-workers:7070)", hostport)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", "", herd.Errorf("workers", "dns:%s: port %q is not 1 to 65535 (accepted: dns:NAME:PORT, PORT 1 to 65535)", hostport, port)
	}
	return name, port, nil
}

func resolveDNS(ctx context.Context, hostport string, count int) ([]string, error) {
	name, port, err := splitDNS(hostport)
	if err != nil {
		return nil, err
	}
	for {
		addrs, err := net.DefaultResolver.LookupHost(ctx, name)
		if err == nil && len(addrs) > 0 && (count == 0 || len(addrs) == count) {
			slices.Sort(addrs)
			urls := make([]string, len(addrs))
			for i, a := range addrs {
				urls[i] = "http://" + net.JoinHostPort(a, port)
			}
			return urls, nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("%d addresses, want %d (--worker-count)", len(addrs), count)
			}
			return nil, fmt.Errorf("--workers dns:%s: %w", hostport, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
