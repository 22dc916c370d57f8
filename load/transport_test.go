package load

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// The transport keeps a connection alive across requests, sends a GET
// again on a new connection when the server closed the kept one while it
// was idle (as http.Transport does), and ends a request at its context's
// deadline as a timeout.
func TestTransportKeepsAliveAndRetriesAClosedIdleConnection(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(200 * time.Millisecond) // the server's service time, not a readiness wait
		}
		_, _ = io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	tr := newTransport(time.Second)
	defer tr.CloseIdleConnections()
	get := func(ctx context.Context, path string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return "", err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(b), err
	}
	for i := range 3 {
		if got, err := get(context.Background(), "/"); got != "ok" || err != nil {
			t.Fatalf("request %d = %q, %v; want ok", i, got, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("3 requests one after the other opened %d connections; want 1, kept alive", n)
	}
	srv.CloseClientConnections()
	if got, err := get(context.Background(), "/"); got != "ok" || err != nil {
		t.Errorf("a GET after the server closed the idle connection = %q, %v; want ok, sent again on a new one", got, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := get(ctx, "/slow")
	if err == nil || Classify(0, err.Error()) != Timeout {
		t.Errorf("a request past its context's deadline = %v; want a timeout", err)
	}
	// the generator's own requests: a deadline nothing watches but the
	// connection
	_, err = get(&deadline{time.Now().Add(50 * time.Millisecond)}, "/slow")
	if err == nil || Classify(0, err.Error()) != Timeout {
		t.Errorf("a request past its deadline = %v; want a timeout", err)
	}
}
