package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// herdbench init writes a starter target file whose dry run passes as
// written, for a bare endpoint, one far away with its Redis and Postgres,
// and one with MySQL; it never overwrites a file unless told, and refuses
// what it cannot write from, naming the flag.
func TestInitWritesAFileWhoseDryRunPasses(t *testing.T) {
	dir := t.TempDir()
	for i, args := range [][]string{
		{"--url", "http://127.0.0.1:8080/items/{key}"},
		{"--url", "http://staging.internal:8080/p/{key}?v=1", "--redis", "10.0.0.7:6379", "--postgres", "10.0.0.8:5432"},
		{"--url", "https://127.0.0.1:8443/q?id={key}", "--redis", "127.0.0.1:6379", "--mysql", "127.0.0.1:3306"},
		{"--url", "http://127.0.0.1:8080/index.php?title=Page_{key}", "--memcached", "127.0.0.1:11211", "--mysql", "127.0.0.1:3306", "--keys", "Main,Help"},
	} {
		file := filepath.Join(dir, "t"+string(rune('0'+i))+".yaml")
		code, stdout, stderr := herdbench(t, append([]string{"init", "--file", file}, args...)...)
		if code != exitOK || !strings.Contains(stdout, "next: herdbench stampede --target "+file+" --dry-run") {
			t.Fatalf("init %v = exit %d\n%s%s", args, code, stdout, stderr)
		}
		code, stdout, stderr = herdbench(t, "stampede", "--target", file, "--dry-run")
		if code != exitOK || !strings.Contains(stdout, "dry run: nothing was sent") {
			b, _ := os.ReadFile(file)
			t.Errorf("the dry run of init %v's file = exit %d\n%s%s\nthe file:\n%s", args, code, stdout, stderr, b)
		}
		if code, _, stderr := herdbench(t, append([]string{"init", "--file", file}, args...)...); code != exitUsage || !strings.Contains(stderr, "exists (accepted: a new file, or --force") {
			t.Errorf("init over an existing file = exit %d, %s; want exit 2, refused", code, stderr)
		}
		if code, _, stderr := herdbench(t, append([]string{"init", "--force", "--file", file}, args...)...); code != exitOK {
			t.Errorf("init --force = exit %d, %s; want it overwritten", code, stderr)
		}
	}
	code, _, stderr := herdbench(t, "init", "--url", "http://127.0.0.1:8080/items", "--redis", "nope", "--memcached", "127.0.0.1:11211", "--postgres", "127.0.0.1:5432",
		"--mysql", "127.0.0.1:3306", "--keys", "a", "--keys-file", "none.txt", "--file", filepath.Join(dir, "bad.yaml"))
	for _, want := range []string{`--url: "http://127.0.0.1:8080/items" has no {key}`, `--redis: "nope" is not host:port`, "--mysql: beside --postgres",
		"--memcached: beside --redis", "--keys: beside --keys-file", "--keys-file: open none.txt: no such file"} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("init with bad flags = exit %d; want 2 and %q in\n%s", code, want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.yaml")); err == nil {
		t.Error("init with bad flags wrote its file")
	}
}

// init knows a service on Memcached: its memcached: section, expire as its
// trigger (not a burst), a name that says which service, and the keys'
// source written above them; its MySQL DSN hint, run by a shell as
// written, puts the password in.
func TestInitForMemcachedAndMySQL(t *testing.T) {
	file := filepath.Join(t.TempDir(), "wiki.yaml")
	code, stdout, stderr := herdbench(t, "init", "--url", "http://127.0.0.1:8080/index.php?title=Page_{key}", "--memcached", "127.0.0.1:11211",
		"--mysql", "127.0.0.1:3306", "--db-user", "wiki", "--statements", "FROM `page`", "--file", file)
	if code != exitOK {
		t.Fatalf("init = exit %d\n%s%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	y := string(b)
	for _, want := range []string{`name: "index.php on 127.0.0.1:8080"`, "memcached:\n  address: 127.0.0.1:11211\n  key: \"item:{key}\"",
		"trigger:\n  name: expire\n", `user: "wiki"`, "statements: \"FROM `page`\"", "# where keys come from: invented by herdbench init, not the service's."} {
		if !strings.Contains(y, want) {
			t.Errorf("init's file has no %q:\n%s", want, y)
		}
	}
	hint := regexp.MustCompile(`(?m)^# (export SERVICE_MYSQL_DSN=.*) before the run$`).FindStringSubmatch(y)
	if hint == nil {
		t.Fatalf("no DSN hint in\n%s", y)
	}
	export := strings.Replace(hint[1], "USER", "hb", 1)
	out, err := exec.Command("sh", "-c", `SERVICE_MYSQL_PASSWORD='pa$$ word'; `+export+`; printf %s "$SERVICE_MYSQL_DSN"`).CombinedOutput()
	if want := "hb:pa$$ word@tcp(127.0.0.1:3306)/"; err != nil || string(out) != want {
		t.Errorf("sh ran the hint %q: %q, %v; want %q", export, out, err, want)
	}
}

// init --probe keeps the keys the service answers 2xx, in their order,
// and says so in the file; a probe where none answers is refused.
func TestInitProbesTheServicesKeys(t *testing.T) {
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		n, err := strconv.Atoi(r.URL.Query().Get("id"))
		if err != nil || n%3 != 0 {
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	keysFile := filepath.Join(dir, "candidates.txt")
	if err := os.WriteFile(keysFile, []byte("# candidates\n3\n4\n6\nx\n9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		asked int64
		want  string
	}{
		{[]string{"--probe"}, 100, "# where keys come from: the 33 of 100 keys of 1 to 100 that answered 2xx to GET " + srv.URL + "/q?id={key}"},
		{[]string{"--probe", "--keys-file", keysFile}, 5, "keys of " + keysFile + " (--keys-file) that answered 2xx"},
	} {
		asked.Store(0)
		file := filepath.Join(dir, "probed.yaml")
		code, stdout, stderr := herdbench(t, append([]string{"init", "--force", "--url", srv.URL + "/q?id={key}", "--file", file}, c.args...)...)
		b, _ := os.ReadFile(file)
		if code != exitOK || !strings.Contains(string(b), c.want) || asked.Load() != c.asked {
			t.Errorf("init %v = exit %d, %d asked; want %d asked and %q in\n%s%s%s", c.args, code, asked.Load(), c.asked, c.want, b, stdout, stderr)
		}
		if c.asked == 5 && !strings.Contains(string(b), "list:\n    - \"3\"\n    - \"6\"\n    - \"9\"\n  hot: 3") {
			t.Errorf("init %v kept the wrong keys:\n%s", c.args, b)
		}
	}
	code, _, stderr := herdbench(t, "init", "--url", srv.URL+"/q?id={key}", "--probe", "--keys", "1,2", "--file", filepath.Join(dir, "none.yaml"))
	if code != exitUsage || !strings.Contains(stderr, "--probe: none of the 2 keys of --keys answered 2xx") {
		t.Errorf("init --probe where none answers = exit %d, %s; want 2 and why", code, stderr)
	}
}
