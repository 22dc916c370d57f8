package local

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/rs/zerolog"
)

// proxyServer is the toxiproxy server embedded in the supervisor.
type proxyServer struct {
	srv    *toxiproxy.ApiServer
	log    *closableLog
	served chan error // Listen's result
}

// closableLog is toxiproxy's log file. Its connections log their end after
// the server stops, so writes after Close are dropped, not failed.
type closableLog struct {
	mu sync.Mutex
	f  *os.File
}

func (l *closableLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return len(p), nil
	}
	return l.f.Write(p)
}

func (l *closableLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.f
	l.f = nil
	if f == nil {
		return nil
	}
	return f.Close()
}

// startProxy runs toxiproxy's API on port and one proxy per dependency in
// upstreams (name -> host:port), each listening on a free loopback port. It
// returns the proxies' listen addresses by name.
func (tb *Testbed) startProxy(ctx context.Context, port int, upstreams map[string]string) (map[string]string, error) {
	logPath := filepath.Join(tb.logDir(), "toxiproxy.log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	logw := &closableLog{f: f}
	ps := &proxyServer{
		srv:    toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.New(logw).With().Timestamp().Logger()),
		log:    logw,
		served: make(chan error, 1),
	}
	tb.proxy = ps
	tb.status.Logs["toxiproxy"] = logPath
	tb.status.PIDs["toxiproxy"] = os.Getpid()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	go func() { ps.served <- ps.srv.Listen(addr) }()

	url := "http://" + addr
	client := toxiclient.NewClient(url)
	err = poll(ctx, func(context.Context) error {
		select {
		case err := <-ps.served:
			ps.served <- err
			return &stopPolling{fmt.Errorf("toxiproxy api on %s: %w", addr, err)}
		default:
		}
		_, err := client.Version()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%w (log: %s)", err, logPath)
	}
	tb.status.Toxiproxy = url
	listen := make(map[string]string, len(upstreams))
	for name, up := range upstreams {
		if listen[name], err = ps.add(name, up); err != nil {
			return nil, fmt.Errorf("%w (log: %s)", err, logPath)
		}
	}
	return listen, nil
}

// add starts a proxy named name in front of upstream (host:port) and
// returns where it listens: a held port of its own below the ephemeral range,
// since an outage closes the proxy's listener and reopens it on the same
// port later.
func (ps *proxyServer) add(name, upstream string) (string, error) {
	port, err := freePort(true)
	if err != nil {
		return "", err
	}
	p := toxiproxy.NewProxy(ps.srv, name, "127.0.0.1:"+strconv.Itoa(port), upstream)
	if err := ps.srv.Collection.Add(p, true); err != nil {
		return "", fmt.Errorf("toxiproxy proxy %s: %w", name, err)
	}
	return p.Listen, nil
}

// stop closes every proxy and the API.
func (ps *proxyServer) stop() {
	_ = ps.srv.Collection.Clear()
	_ = ps.srv.Shutdown()
	_ = ps.log.Close()
}
