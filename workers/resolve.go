package workers

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Resolve reads --workers: base URLs separated by commas, or dns:NAME:PORT,
// every address NAME resolves to (as a headless Service names the pods of
// an Indexed Job). With count above 0 it waits, polling, until exactly
// count addresses resolve or ctx ends: pods come up one by one.
func Resolve(ctx context.Context, spec string, count int) ([]string, error) {
	if rest, ok := strings.CutPrefix(spec, "dns:"); ok {
		return resolveDNS(ctx, rest, count)
	}
	var urls []string
	for _, s := range strings.Split(spec, ",") {
		s = strings.TrimSuffix(strings.TrimSpace(s), "/")
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return nil, fmt.Errorf("--workers: %q is not a worker's base URL (accepted: http://HOST:PORT,... or dns:NAME:PORT)", s)
		}
		if slices.Contains(urls, s) {
			return nil, fmt.Errorf("--workers: %s is listed twice (accepted: each worker once)", s)
		}
		urls = append(urls, s)
	}
	if count > 0 && len(urls) != count {
		return nil, fmt.Errorf("--workers lists %d workers, --worker-count says %d (accepted: the same number)", len(urls), count)
	}
	return urls, nil
}

func resolveDNS(ctx context.Context, hostport string, count int) ([]string, error) {
	name, port, err := net.SplitHostPort(hostport)
	if err != nil || name == "" || port == "" {
		return nil, fmt.Errorf("--workers dns:%s: want dns:NAME:PORT such as dns:herdbench-workers:7070", hostport)
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
