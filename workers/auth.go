package workers

import (
	"cmp"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
)

// TokenEnv is the environment variable the worker and its controller read
// the worker API's shared token from, when no token file is named.
const TokenEnv = "HERDBENCH_WORKER_TOKEN"

// MinTokenLen is the shortest token accepted: 16 characters, such as the
// 64 of `openssl rand -hex 32`.
const MinTokenLen = 16

// ReadToken is the worker API's token: the contents of file (surrounding
// space trimmed) when file is not "", else $HERDBENCH_WORKER_TOKEN; ""
// when neither is set. A named file that cannot be read, or a token
// shorter than MinTokenLen, is an error naming where it came from.
func ReadToken(file string) (string, error) {
	from, tok := "$"+TokenEnv, os.Getenv(TokenEnv)
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			why := err
			var pe *fs.PathError
			if errors.As(err, &pe) {
				why = pe.Err // the path is named once, first
			}
			return "", fmt.Errorf("%s: %w (accepted: a file holding the token, %d characters or more, such as the output of openssl rand -hex 32 > FILE)", file, why, MinTokenLen)
		}
		from, tok = file, string(b)
	}
	tok = strings.TrimSpace(tok)
	if (file != "" || tok != "") && len(tok) < MinTokenLen {
		return "", fmt.Errorf("%s: a token of %d characters (accepted: %d or more, such as the output of openssl rand -hex 32)", from, len(tok), MinTokenLen)
	}
	return tok, nil
}

// LoopbackOnly reports whether a listen address (HOST:PORT) takes
// connections from this machine alone: its host is a loopback name or
// address. ":7070", "0.0.0.0:7070" and a pod's address are not.
func LoopbackOnly(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil || host == "" {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// guard is h behind the token: a call without "Authorization: Bearer
// TOKEN", or with another token (compared in constant time), is answered
// 401, counted in w.refused, and the first one logged. No token: h as it
// is (the worker listens on loopback only).
func (w *Worker) guard(h http.Handler) http.Handler {
	if w.Token == "" {
		return h
	}
	want := []byte("Bearer " + w.Token)
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) == 1 {
			h.ServeHTTP(rw, r)
			return
		}
		if w.refused.Add(1) == 1 {
			w.Log.Warn("refused a call without the worker token (logged once; every refusal is counted)",
				"from", r.RemoteAddr, "path", r.URL.Path)
		}
		rw.Header().Set("WWW-Authenticate", `Bearer realm="herdbench worker"`)
		http.Error(rw, "herdbench worker: this call needs the worker token (Authorization: Bearer, the token of --token-file or $"+TokenEnv+")",
			http.StatusUnauthorized)
	})
}

// Refused is how many calls the worker refused for want of its token.
func (w *Worker) Refused() int64 { return w.refused.Load() }

// WithToken is c sending token on every call ("": c as it is), for a
// controller's calls and a worker's own to the reference worker. It
// follows no redirect: the worker API never redirects, and a redirect
// followed would carry the token to whatever host it names.
func WithToken(c *http.Client, token string) *http.Client {
	if token == "" {
		return c
	}
	out := *c
	out.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	out.Transport = bearer{token: token, next: cmp.Or(c.Transport, http.DefaultTransport)}
	return &out
}

// bearer adds the token to every request it sends.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
