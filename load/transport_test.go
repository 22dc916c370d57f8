package load

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The load's transport speaks HTTP/2 to a TLS server that offers it, as
// vegeta's -http2 does, although it dials with a dialer of its own (which
// alone would turn net/http's HTTP/2 off), and HTTP/1.1 to a plain one.
func TestTransportSpeaksHTTP2WhereOffered(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Proto", r.Proto) })
	tlsSrv := httptest.NewUnstartedServer(h)
	tlsSrv.EnableHTTP2 = true
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	plain := httptest.NewServer(h)
	defer plain.Close()

	tr := newTransport(5 * time.Second)
	tr.TLSClientConfig = &tls.Config{RootCAs: tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	defer tr.CloseIdleConnections()
	for _, tt := range []struct {
		url, want string
	}{{tlsSrv.URL, "HTTP/2.0"}, {plain.URL, "HTTP/1.1"}} {
		resp, err := (&http.Client{Transport: tr}).Get(tt.url)
		if err != nil {
			t.Fatalf("GET %s: %v", tt.url, err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Proto"); got != tt.want {
			t.Errorf("GET %s: the server saw %s; want %s", tt.url, got, tt.want)
		}
	}
}
