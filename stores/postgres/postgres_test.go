package postgres_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/stores/postgres"
	"github.com/herdbench/herdbench/testbed/proctest"
	"github.com/herdbench/herdbench/testbed/store"
)

// host is what the testbed's Postgres needs to start (store.Host), for
// one test: a directory any user can enter, its programs run as whom they
// must (postgres refuses root), the server killed when the test ends.
type host struct {
	t   *testing.T
	dir string
}

func (h host) DataDir(name string, perm os.FileMode, cred *syscall.Credential) (string, error) {
	d := filepath.Join(h.dir, name)
	if err := os.Mkdir(d, perm); err != nil || cred == nil {
		return d, err
	}
	return d, os.Chown(d, int(cred.Uid), int(cred.Gid))
}

func (h host) Run(ctx context.Context, dir string, cred *syscall.Credential, argv ...string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.SysProcAttr = dir, &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", argv[0], err, out)
	}
	return nil
}

func (h host) Spawn(ctx context.Context, p store.Process) (string, error) {
	log := filepath.Join(h.dir, p.Name+".log")
	out, err := os.Create(log)
	if err != nil {
		return log, err
	}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = h.dir, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.Cred, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return log, err
	}
	h.t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait(); out.Close() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) { // polling, with a deadline
		if err = p.Ready(ctx); err == nil || time.Now().After(deadline) {
			return log, err
		}
	}
}

func (h host) Items() int { return 10 }

// start runs the testbed's Postgres (initdb, pg_stat_statements, the app
// role, the items) on a free port and returns its host:port and the
// owner's pool. Without the binaries the test skips, and fails with CI.
func start(t *testing.T) (string, *postgres.DB) {
	t.Helper()
	return startOn(t, host{t, proctest.WorkDir(t, "postgres")})
}

// startOn is start through h.
func startOn(t *testing.T, h store.Host) (string, *postgres.DB) {
	t.Helper()
	bins, err := store.Postgres{}.Find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %v", err)
		}
		t.Skip(err)
	}
	addr := proctest.FreeAddr(t)
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	ctx := context.Background()
	dsn, _, err := store.Postgres{}.Start(ctx, h, bins, port)
	if err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Open(ctx, dsn, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return addr, db
}

// A sample's calls are pg_stat_statements' of the selected statement by
// the role, as StatementTotals reads them; the role's connections are
// counted, the server's start stays put, and a nil handle reads nothing.
func TestCallsAreThoseOfPgStatStatements(t *testing.T) {
	_, db := start(t)
	ctx := context.Background()
	const q = "SELECT $1::int"
	src := observe.Source{DB: db, Statements: observe.Statements{Text: q}, Role: store.Superuser}
	read := func() observe.Sample {
		t.Helper()
		s, err := src.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := read()
	calls0, _, err := db.StatementTotals(ctx, store.Superuser, []string{q})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := db.QueryRow(ctx, q, i).Scan(new(int)); err != nil {
			t.Fatal(err)
		}
	}
	after := read()
	calls1, rows, err := db.StatementTotals(ctx, store.Superuser, []string{q})
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Calls - before.Calls; got != 5 || calls1-calls0 != 5 || rows < 5 {
		t.Errorf("calls: sample %d, StatementTotals %d (rows %d); want 5 each", got, calls1-calls0, rows)
	}
	if after.Connections < 1 || !after.DBStart.Equal(before.DBStart) || after.DBStart.IsZero() {
		t.Errorf("connections %d, start %v then %v; want this pool's, one start", after.Connections, before.DBStart, after.DBStart)
	}
	if s, err := (observe.Source{DB: (*postgres.DB)(nil)}).Read(ctx); err != nil || s.Calls != 0 {
		t.Errorf("a nil handle: %+v, %v; want nothing read, no error", s, err)
	}
}

// conndrop terminates the role's connections, and never herdbench's own.
func TestConnsKillsTheRolesConnections(t *testing.T) {
	addr, _ := start(t)
	ctx := context.Background()
	app, err := postgres.Open(ctx, store.PostgresDSN(store.AppRole, addr), 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Close)
	for range 3 {
		c, err := app.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
	}
	own, err := postgres.Open(ctx, store.PostgresDSN(store.Superuser, addr), 1, nil) // one session: Kill's
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(own.Close)
	d, err := (&postgres.Conns{DB: own, Role: store.AppRole}).Kill(ctx)
	if err != nil || d.ConnectionsReset == nil || *d.ConnectionsReset != 3 || d.Role != store.AppRole {
		t.Fatalf("Kill = %+v, %v; want the app role's 3 connections", d, err)
	}
	d, err = (&postgres.Conns{DB: own, Role: store.Superuser}).Kill(ctx)
	if err != nil || *d.ConnectionsReset < 1 || own.Ping(ctx) != nil {
		t.Errorf("Kill of its own role = %+v, %v; want the other pool's, its own session spared", d, err)
	}
}

// recording is a host that notes the programs it runs.
type recording struct {
	host
	ran *[]string
}

func (h recording) Run(ctx context.Context, dir string, cred *syscall.Credential, argv ...string) error {
	*h.ran = append(*h.ran, filepath.Base(argv[0]))
	return h.host.Run(ctx, dir, cred, argv...)
}

// A testbed's cluster is a copy of a template initdb made once: a second
// start runs no initdb, only the copy, and each cluster is its own (a
// table made in one is not in the other).
func TestAClusterIsACopyOfOneTemplate(t *testing.T) {
	var first, second []string
	_, a := startOn(t, recording{host{t, proctest.WorkDir(t, "postgres")}, &first})
	_, b := startOn(t, recording{host{t, proctest.WorkDir(t, "postgres")}, &second})
	if !slices.Equal(second, []string{"cp"}) || first[len(first)-1] != "cp" {
		t.Errorf("programs run: %v for the first start, %v for the second; want the template's initdb at most once, then one copy each", first, second)
	}
	ctx := context.Background()
	if _, err := a.Exec(ctx, "CREATE TABLE only_in_a (id int)"); err != nil {
		t.Fatal(err)
	}
	var inB *string
	if err := b.QueryRow(ctx, "SELECT to_regclass('only_in_a')::text").Scan(&inB); err != nil || inB != nil {
		t.Errorf("the second cluster has the first's new table: %v, %v; want each its own", inB, err)
	}
}
