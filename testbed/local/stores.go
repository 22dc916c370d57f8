package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
)

// The stores (testbed/store) are the one place that knows Redis,
// Memcached, Postgres and MariaDB: this file finds their programs, lends
// them the supervisor (Host) to start them, and asks them the rest.

// MissingBinaryError says which program is missing and which package
// provides it.
type MissingBinaryError = store.MissingBinaryError

// binaries are the external programs the local testbed runs.
type binaries struct {
	stores map[string]store.Programs // by the store's name
	obs    obsBinaries               // with Config.Observability
}

// CheckBinariesFor reports whether the programs the local testbed runs
// for replicas of o are installed (the stores they ask for: their cache
// and database, and Redis), naming the packages that provide any that
// are missing.
func CheckBinariesFor(o replica.Options) error {
	set, err := store.For(o)
	if err != nil {
		return err
	}
	_, err = findBinaries(set)
	return err
}

// findBinaries locates the programs of every store of set, reporting every
// missing program at once.
func findBinaries(set store.Set) (binaries, error) {
	b := binaries{stores: map[string]store.Programs{}}
	var errs []error
	for _, k := range set.Running() {
		bins, err := k.Find()
		b.stores[k.Name()] = bins
		errs = append(errs, err)
	}
	return b, errors.Join(errs...)
}

// startStores starts every store of the testbed in order, each on its port
// of ports, records it in the status and adds it to the proxies'
// upstreams under its name.
func (tb *Testbed) startStores(ctx context.Context, ports Ports, upstreams map[string]string) error {
	for _, k := range tb.stores.Running() {
		port := *ports.of(k)
		addr, version, err := k.Start(ctx, host{tb}, tb.bins.stores[k.Name()], port)
		if err != nil {
			return tb.partError(k.Name(), err)
		}
		*k.Addr(&tb.status.Addrs), tb.status.Versions[k.Name()] = addr, version
		upstreams[k.Name()] = "127.0.0.1:" + strconv.Itoa(port)
	}
	return nil
}

// isStore says whether the process named name is one of the stores'.
func isStore(name string) bool {
	_, ok := store.Named(name)
	return ok
}

// storesProblem refuses observability beside a store it cannot read.
func (c Config) storesProblem() error {
	for _, k := range store.MustFor(c.Replica).Running() {
		if u, ok := k.(store.Unobserved); ok && c.Observability {
			why, accepted := u.Unobserved()
			return fmt.Errorf("observability: %s (%s)", why, accepted)
		}
	}
	return nil
}

// host is what the testbed lends a store to start it (store.Host).
type host struct{ tb *Testbed }

var _ store.Host = host{}

func (h host) DataDir(name string, perm os.FileMode, cred *syscall.Credential) (string, error) {
	dir := filepath.Join(h.tb.cfg.StateDir, name)
	if err := mkdirEmpty(dir, perm); err != nil {
		return "", err
	}
	if cred == nil {
		return dir, nil
	}
	if err := reachable(dir, cred); err != nil {
		return "", err
	}
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return "", fmt.Errorf("give %s to uid %d: %w", dir, cred.Uid, err)
	}
	return dir, nil
}

func (h host) Run(ctx context.Context, dir string, cred *syscall.Credential, argv ...string) error {
	name := filepath.Base(argv[0])
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.SysProcAttr = childAttr(cred)
	if out, err := cmd.CombinedOutput(); err != nil {
		log := filepath.Join(h.tb.logDir(), name+".log")
		_ = os.WriteFile(log, out, 0o644)
		return fmt.Errorf("%s: %w: %s (log: %s)", name, err, lastLine(string(out)), log)
	}
	return nil
}

func (h host) Spawn(ctx context.Context, sp store.Process) (string, error) {
	p, err := h.tb.spawn(ctx, sp.Name, sp.Stop, sp.Cred, sp.Argv...)
	if err != nil {
		return "", err
	}
	p.ready = sp.Ready
	return p.log, h.tb.waitReady(ctx, p, p.ready)
}

func (h host) Items() int { return h.tb.cfg.Items }

// reachable checks that cred's user can reach dir: every parent must let
// others search it, since postgres runs as that user.
func reachable(dir string, cred *syscall.Credential) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		owner := st != nil && st.Uid == cred.Uid
		if !owner && fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("state dir %s: postgres runs as uid %d (it refuses root) and cannot enter %s (mode %s): choose a --state-dir under /tmp or another world-searchable directory",
				filepath.Dir(dir), cred.Uid, d, fi.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
