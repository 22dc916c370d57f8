// Package initcmd is `herdbench init`: a commented starter target file
// (docs/targets.md) for a service herdbench did not start, written from
// its URL and, when given, its cache and database, with keys the user
// gives, probes or is told to replace (targets/starter renders it). The
// file's dry run passes as written; what is left to fill in stops the
// run before T, by name.
package initcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/targets/starter"
)

// initOptions are what herdbench init writes a starter target file from.
type initOptions struct {
	URL, Redis, Memcached, Postgres, MySQL, File string
	Name, DBUser, Statements, CacheKey           string
	Keys                                         []string // --keys
	KeysFile                                     string   // --keys-file
	Probe                                        bool     // keep the keys that answer 2xx
	Force                                        bool
}

func New(stdout io.Writer) *cobra.Command {
	var o initOptions
	c := &cobra.Command{
		Use:   "init",
		Short: "Write a commented starter target file for your service, whose dry run passes",
		Long: `Write a starter target file (docs/targets.md) for a service herdbench did not
start: its endpoint and request from --url, and, when given, its Redis or its
Memcached, its Postgres or its MySQL, each with the fields to fill in
commented. Its keys are the ones you give (--keys, --keys-file), those of them
the service answers 2xx (--probe), or an invented range the file says to
replace. The file's dry run passes as written; a placeholder left in it (a
user, a statement filter, a cache key) stops the run before T, naming it.
Edit it, then:

  herdbench stampede --target FILE --dry-run`,
		Example: `  herdbench init --url 'http://127.0.0.1:8080/products/{key}'
  herdbench init --url 'http://127.0.0.1/index.php?title={key}' --memcached 127.0.0.1:11211 \
    --mysql 127.0.0.1:3306 --db-user wiki --statements 'FROM ` + "`page`" + `' \
    --cache-key 'page:{key}' --keys-file titles.txt --probe
  herdbench init --url 'http://staging.internal:8080/items/{key}' --redis 10.0.0.7:6379 \
    --postgres 10.0.0.8:5432 --file staging.yaml`,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runInit(c.Context(), stdout, o) },
	}
	fs := c.Flags()
	fs.StringVar(&o.URL, "url", "", "the service's request for one key, `URL` with {key}, such as http://127.0.0.1:8080/items/{key}")
	fs.StringVar(&o.Name, "name", "", "the service's `NAME` in reports (default: the URL's first path segment on its host, such as items on 127.0.0.1:8080)")
	fs.StringVar(&o.Redis, "redis", "", "the service's Redis, `HOST:PORT` (the expire, ttl and flush triggers need a cache)")
	fs.StringVar(&o.Memcached, "memcached", "", "or its Memcached, `HOST:PORT`")
	fs.StringVar(&o.CacheKey, "cache-key", "", "the cache's key of a request's key, `TEMPLATE` with {key} (default: item:{key}, a placeholder)")
	fs.StringVar(&o.Postgres, "postgres", "", "the service's Postgres, `HOST:PORT` (its DSN is read from SERVICE_PG_DSN at run time)")
	fs.StringVar(&o.MySQL, "mysql", "", "or its MySQL or MariaDB, `HOST:PORT` (its DSN from SERVICE_MYSQL_DSN at run time)")
	fs.StringVar(&o.DBUser, "db-user", "", "the database `USER` (or role) the service connects as: its statements and connections count")
	fs.StringVar(&o.Statements, "statements", "", "a `REGEXP` on the statements that count as DB queries, such as 'FROM items'")
	fs.StringSliceVar(&o.Keys, "keys", nil, "keys the service has, `KEY,...` (the first are the hot keys)")
	fs.StringVar(&o.KeysFile, "keys-file", "", "a `FILE` of keys the service has, one a line")
	fs.BoolVar(&o.Probe, "probe", false, "send one GET of --url for each key (--keys, --keys-file, or 1 to 100) and keep those that answer 2xx")
	fs.StringVar(&o.File, "file", "herdbench-target.yaml", "where to write the target file")
	fs.BoolVar(&o.Force, "force", false, "overwrite the file if it exists")
	return c
}

func runInit(ctx context.Context, stdout io.Writer, o initOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	s, u, bad := o.starter()
	if len(bad) > 0 {
		return cli.UsageError{Err: bad}
	}
	if msg := cli.NotAFile(o.File); msg != "" { // --force would not help
		return cli.UsageErrorf("--file: %s (accepted: a file's path, such as herdbench-target.yaml)", msg)
	}
	if !o.Force {
		if _, err := os.Stat(o.File); err == nil {
			return cli.UsageErrorf("--file: %s exists (accepted: a new file, or --force to overwrite it)", o.File)
		}
	}
	keys, err := o.keys(ctx, u) // after the checks: --probe sends requests
	if err != nil {
		return err
	}
	s.Keys = keys
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if o.Force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(o.File, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return cli.UsageErrorf("--file: %s exists (accepted: a new file, or --force to overwrite it)", o.File)
	}
	if err != nil { // a directory that cannot be written: the user's to pick another
		return cli.UsageErrorf("--file: %v (accepted: a new file in a directory you may write, such as herdbench-target.yaml)", err)
	}
	if err := s.Write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s (keys: %s)\nnext: herdbench stampede --target %s --dry-run\n", o.File, keys.From, o.File)
	return err
}

// starter checks o and works out the file's values, and the URL parsed.
func (o initOptions) starter() (starter.File, *url.URL, herd.FieldErrors) {
	var bad herd.FieldErrors
	u, err := url.Parse(o.URL)
	_, ferr := targets.FromURL(o.URL) // as --target reads a URL: its scheme, port and no credentials
	switch {
	case o.URL == "":
		bad.Add("url", "none (accepted: the service's request for one key, such as http://127.0.0.1:8080/items/{key})")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		bad.Add("url", "%q (accepted: http:// or https:// with a host, such as http://127.0.0.1:8080/items/{key})", o.URL)
	case ferr != nil:
		bad.Add("url", "%v", ferr)
	case !strings.Contains(u.Path, "{key}") && !strings.Contains(u.RawQuery, "{key}"):
		bad.Add("url", "%q has no {key} (accepted: the key's place in the path or query, such as http://127.0.0.1:8080/items/{key})", o.URL)
	}
	for k, vs := range u.Query() {
		if err == nil && len(vs) > 1 { // the file's query holds one value a name
			bad.Add("url", "query %s given %d times (accepted: each name once)", k, len(vs))
		}
	}
	for _, hp := range []struct{ flag, v, such string }{{"redis", o.Redis, "127.0.0.1:6379"}, {"memcached", o.Memcached, "127.0.0.1:11211"},
		{"postgres", o.Postgres, "127.0.0.1:5432"}, {"mysql", o.MySQL, "127.0.0.1:3306"}} {
		_, port, err := net.SplitHostPort(hp.v)
		switch n, perr := strconv.Atoi(port); {
		case hp.v == "":
		case err != nil:
			bad.Add(hp.flag, "%q is not host:port (accepted: such as %s)", hp.v, hp.such)
		case perr != nil || n < 1 || n > 65535:
			bad.Add(hp.flag, "%q: port %s out of range (accepted: host:port, port 1 to 65535, such as %s)", hp.v, port, hp.such)
		}
	}
	if o.Redis != "" && o.Memcached != "" {
		bad.Add("memcached", "beside --redis (accepted: one cache, --redis or --memcached)")
	}
	if o.Postgres != "" && o.MySQL != "" {
		bad.Add("mysql", "beside --postgres (accepted: one database, --postgres or --mysql)")
	}
	for _, f := range []struct{ flag, v string }{{"db-user", o.DBUser}, {"statements", o.Statements}} {
		if f.v != "" && o.Postgres == "" && o.MySQL == "" {
			bad.Add(f.flag, "without a database (accepted: with --postgres or --mysql)")
		}
	}
	switch {
	case o.CacheKey != "" && o.Redis == "" && o.Memcached == "":
		bad.Add("cache-key", "without a cache (accepted: with --redis or --memcached)")
	case o.CacheKey != "" && !strings.Contains(o.CacheKey, "{key}"):
		bad.Add("cache-key", "%q has no {key} (accepted: the cache's key of a request's key, such as page:{key})", o.CacheKey)
	}
	o.checkKeys(&bad)
	if dir := filepath.Dir(o.File); o.File == "" {
		bad.Add("file", "empty (accepted: a file name, such as herdbench-target.yaml)")
	} else if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		bad.Add("file", "%s: no directory %s (accepted: a file in a directory that exists, such as herdbench-target.yaml)", o.File, dir)
	}
	if len(bad) > 0 {
		return starter.File{}, nil, bad
	}
	path := strings.ReplaceAll(u.EscapedPath(), "%7Bkey%7D", "{key}")
	query := map[string]string{}
	for k, vs := range u.Query() {
		query[k] = vs[0]
	}
	var allow []string
	for _, h := range []string{u.Host, o.Redis, o.Memcached, o.Postgres, o.MySQL} {
		if host, _, err := net.SplitHostPort(h); err == nil {
			h = host
		}
		if h != "" && !targets.Loopback(h) && !slices.Contains(allow, h) {
			allow = append(allow, h)
		}
	}
	return starter.File{Name: cmp.Or(o.Name, serviceName(u)), Endpoint: u.Scheme + "://" + u.Host, Path: path, Query: query, Allow: strings.Join(allow, ", "),
		Redis: o.Redis, Memcached: o.Memcached, Postgres: o.Postgres, MySQL: o.MySQL, DBUser: o.DBUser, Statements: o.Statements, CacheKey: o.CacheKey}, u, nil
}

// serviceName is a name for the service at u: its path's first segment
// that is not the key, on its host, such as "items on 127.0.0.1:8080".
func serviceName(u *url.URL) string {
	for _, seg := range strings.Split(u.Path, "/") {
		if seg != "" && !strings.Contains(seg, "{key}") {
			return seg + " on " + u.Host
		}
	}
	return "the service on " + u.Host
}
