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
		// a port of its own below the ephemeral range: an outage closes
		// the proxy's listener and reopens it on the same port later
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		p := toxiproxy.NewProxy(ps.srv, name, "127.0.0.1:"+strconv.Itoa(port), up)
		if err := ps.srv.Collection.Add(p, true); err != nil {
			return nil, fmt.Errorf("toxiproxy proxy %s: %w (log: %s)", name, err, logPath)
		}
		listen[name] = p.Listen
	}
	return listen, nil
}

// stop closes every proxy and the API.
func (ps *proxyServer) stop() {
	_ = ps.srv.Collection.Clear()
	_ = ps.srv.Shutdown()
	_ = ps.log.Close()
}
